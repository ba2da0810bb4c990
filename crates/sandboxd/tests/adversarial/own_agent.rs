//! A session against its own agent.

use crate::common::{agent_program, base_config, TestService};
use crate::harness::{bounded, mib, report, Host, MIB};
use crate::sandbox_helpers::{compile, rss_bytes, upload, Peak};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_session_killing_or_freezing_its_agent_harms_only_itself() {
    let attack = "a session kills (SIGKILL) or freezes (SIGSTOP) its own agent";
    let host = Host::before();
    let service = TestService::start(&base_config(3, ""));
    let outcome = bounded(90, attack, async {
        let killer = service.open("sh").await;
        let freezer = service.open("sh").await;
        let bystander = service.open("sh").await;

        let kill = async {
            let started = Instant::now();
            let (status, body) = service
                .exec(
                    &killer,
                    json!({"command": format!("kill -9 $(pidof {})", agent_program()), "timeout_secs": 5}),
                )
                .await;
            let first = (status, body["error"]["code"].as_str().unwrap_or("").to_string(), started.elapsed());
            let mut later = Vec::new();
            for _ in 0..3 {
                let started = Instant::now();
                let (status, body) = service
                    .exec(&killer, json!({"command": "echo alive", "timeout_secs": 2}))
                    .await;
                let elapsed = started.elapsed();
                assert!(elapsed < Duration::from_secs(10), "a request took {elapsed:?}");
                assert!(
                    status == 502 || status == 409 || status == 410,
                    "after the kill: {status} {body}"
                );
                later.push(format!("{status} {}", body["error"]["code"].as_str().unwrap_or("")));
            }
            let ended = service.wait_for_end(&killer, Duration::from_secs(20)).await;
            (first, later, ended)
        };
        let freeze = async {
            let (status, body) = service
                .exec(&freezer, json!({"command": format!("kill -STOP $(pidof {})", agent_program()), "timeout_secs": 1}))
                .await;
            let mut answers = vec![format!("{status} {}", body["error"]["code"].as_str().unwrap_or("ok"))];
            let started = Instant::now();
            let (status, body) = service
                .exec(&freezer, json!({"command": "echo alive", "timeout_secs": 1}))
                .await;
            let elapsed = started.elapsed();
            assert!(
                elapsed < Duration::from_secs(1 + 10 + 5),
                "a request to a frozen agent took {elapsed:?}"
            );
            // A request that waits out the frozen agent may outlast the pings that end its
            // session: then the answer is that the session ended, which says why.
            let ended_by_pings = status == 409
                && body["error"]["code"] == "session_ended"
                && body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("agent stopped answering"));
            // Otherwise the frozen agent is reported as such: never an answer, never another error.
            let agent_unavailable = status == 502 && body["error"]["code"] == "agent_unavailable";
            assert!(agent_unavailable || ended_by_pings, "{status} {body}");
            answers.push(format!(
                "{status} {} after {:.1} s",
                body["error"]["code"].as_str().unwrap_or("ok"),
                elapsed.as_secs_f64()
            ));
            answers
        };
        let healthy = async {
            let mut worst = Duration::ZERO;
            for _ in 0..10 {
                let started = Instant::now();
                let result = service.sh(&bystander, "echo alive").await;
                assert_eq!(result["stdout"], "alive\n");
                worst = worst.max(started.elapsed());
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            worst
        };
        let ((first, later, ended), frozen, worst) = tokio::join!(kill, freeze, healthy);
        assert!(
            first.0 >= 500 && first.2 < Duration::from_secs(10),
            "the killing command's own request: {first:?}"
        );
        assert_eq!(ended["state"], "ended", "{ended}");
        let health = service.healthz().await;
        assert_eq!(health.status(), 200);
        format!(
            "kill -9: its own request -> {} {} in {} ms, then {}; session ended within seconds ({}); SIGSTOP: {}; another session answered throughout (slowest {} ms); /healthz 200",
            first.0,
            first.1,
            first.2.as_millis(),
            later.join(", "),
            ended["end_reason"].as_str().unwrap_or("?"),
            frozen.join(", then "),
            worst.as_millis()
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

#[tokio::test]
async fn an_impostor_agent_gets_bounded_errors_and_others_stay_healthy() {
    let attack = "impostor agent on the agent socket (garbage, oversized, bad JSON, silent, flood, bad hello)";
    let host = Host::before();
    let modes = [
        "garbage",
        "oversized",
        "badjson",
        "silent",
        "flood",
        "badhello",
    ];
    let service = TestService::start(&base_config(u32::try_from(modes.len()).unwrap() + 1, ""));
    let outcome = bounded(110, attack, async {
        let fake = compile("fake_agent");
        let bystander = service.open("sh").await;
        let mut victims = Vec::new();
        for mode in modes {
            let id = service.open("sh").await;
            let (status, body) = upload(&service, &id, "fake_agent", fake.clone()).await;
            assert_eq!(status, 200, "{body}");
            // It detaches and outlives this command; it lives longer than any bound below.
            let started = service
                .sh(
                    &id,
                    &format!("chmod +x fake_agent && ./fake_agent {mode} 60 16"),
                )
                .await;
            assert_eq!(started["exit_code"], 0, "{started}");
            victims.push((mode, id));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let pid = service.pid();
        let rss_before = rss_bytes(pid).unwrap();
        let rss_peak = Peak::watch(move || rss_bytes(pid), Duration::from_millis(100));

        // Six requests at once to each victim; each must end in time, served or refused.
        let attacked = futures_util::future::join_all(victims.iter().map(|(mode, id)| {
            let service = &service;
            async move {
                let requests = (0..6).map(|_| async {
                    let started = Instant::now();
                    let (status, body) = service
                        .exec(id, json!({"command": "echo served", "timeout_secs": 1}))
                        .await;
                    (status, body, started.elapsed())
                });
                let answers = futures_util::future::join_all(requests).await;
                let mut served = 0;
                let mut refused = std::collections::BTreeMap::<String, usize>::new();
                let mut slowest = Duration::ZERO;
                for (status, body, elapsed) in answers {
                    slowest = slowest.max(elapsed);
                    assert!(
                        elapsed < Duration::from_secs(1 + 10 + 5),
                        "{mode}: a request took {elapsed:?}"
                    );
                    if status == 200 {
                        assert_eq!(body["stdout"], "served\n", "{mode}: {body}");
                        served += 1;
                    } else {
                        assert_eq!(status, 502, "{mode}: {body}");
                        let code = body["error"]["code"].as_str().unwrap().to_string();
                        // Never agent_error: the impostor has no secret, so the hub never
                        // parks its connections and no request reaches it. A loaded machine
                        // may still leave the real agent without a spare in time.
                        assert_eq!(code, "agent_unavailable", "{mode}: {body}");
                        assert!(!body["error"]["message"].as_str().unwrap().is_empty());
                        *refused.entry(code).or_default() += 1;
                    }
                }
                format!(
                    "{mode}: {served} served by the real agent, {} refused ({}), slowest {:.1} s",
                    refused.values().sum::<usize>(),
                    refused
                        .iter()
                        .map(|(code, n)| format!("{n} {code}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    slowest.as_secs_f64()
                )
            }
        }));
        let bystanding = async {
            let mut worst = Duration::ZERO;
            for _ in 0..10 {
                let started = Instant::now();
                let result = service.sh(&bystander, "echo alive").await;
                assert_eq!(result["stdout"], "alive\n");
                worst = worst.max(started.elapsed());
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            worst
        };
        let (per_mode, worst) = tokio::join!(attacked, bystanding);
        let rss_peak = rss_peak.stop().await;
        let grew = rss_peak.saturating_sub(rss_before);
        assert!(grew < 96 * MIB, "the service grew by {}", mib(grew));
        let health = service.healthz().await;
        assert_eq!(health.status(), 200);
        format!(
            "{}; another session answered throughout (slowest {} ms); service RSS {} -> peak {}",
            per_mode.join("; "),
            worst.as_millis(),
            mib(rss_before),
            mib(rss_peak)
        )
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}
