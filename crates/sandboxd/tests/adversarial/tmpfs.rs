//! Memory filled through tmpfs, whose files count against the sandbox's memory and which no
//! kill frees: the fillers are the kernel's victims, never the agent, which refuses to start
//! more while memory is full and frees it by deleting a file.

use crate::common::{base_config, docker_only, on_gvisor, TestService};
use crate::harness::{bounded, report, Host};
use serde_json::json;
use std::time::Duration;

/// A service whose runtime `tight` can hold all of its memory in tmpfs (3 x 64m against 128m:
/// `--check` warns of it), and a session of it with /tmp and /workspace filled (120 MB).
/// `None` on Kubernetes, where the agent's own copy lives in the pod's memory (a memory
/// emptyDir), so the two 60 MB files do not fit in 128m beside it.
async fn tight_and_nearly_full() -> Option<(TestService, String)> {
    if !docker_only(
        "tmpfs filled past memory",
        "the agent's copy lives in the pod's memory, so 120 MB of files do not fit in 128m beside it",
    ) {
        return None;
    }
    let roomy_tmpfs = format!(
        "[runtimes.tight]\nimage = \"{}\"\nmem_limit = \"128m\"\ntmpfs_size = \"64m\"\n",
        crate::common::busybox_image()
    );
    let service = TestService::start(&base_config(2, &roomy_tmpfs));
    let id = service.open("tight").await;
    for place in ["/tmp/a", "/workspace/b"] {
        let (status, filled) = service.exec(&id, fill(place, "")).await;
        assert_eq!((status, &filled["exit_code"]), (200, &json!(0)), "{filled}");
    }
    Some((service, id))
}

/// A command writing 60 MB to `place`, after `first`.
fn fill(place: &str, first: &str) -> serde_json::Value {
    let script = format!("{first}head -c 62914560 /dev/zero > {place}");
    json!({"argv": ["sh", "-c", script], "timeout_secs": 30})
}

/// Files in tmpfs count against the sandbox's memory and killing processes frees none of it:
/// the command that fills it is OOM-killed, not the agent, which answers for it; while it is
/// full the agent starts nothing (its own fork would have the kernel kill it, the only process
/// left) and says why; the agent itself deletes files, so removing one through the file API
/// brings the sandbox back.
#[tokio::test]
async fn filling_tmpfs_past_memory_kills_the_filler_not_the_agent_and_a_deleted_file_frees_it() {
    let attack = "tmpfs fill past mem_limit (3 x 64m tmpfs, 128m memory)";
    let host = Host::before();
    let Some((service, id)) = tight_and_nearly_full().await else {
        return;
    };
    let outcome = bounded(120, attack, async {
        if on_gvisor() {
            return fits_on_gvisor(&service, &id).await;
        }
        let (status, over) = service.exec(&id, fill("/dev/shm/c", "")).await;
        assert_eq!(status, 200, "the agent answers for the killed filler: {over}");
        assert_eq!(over["oom_killed"], true, "{over}");
        let (status, full) = service.exec(&id, json!({"command": "echo alive"})).await;
        assert_eq!(status, 400, "{full}");
        assert_eq!(full["error"]["code"], "spawn_failed", "{full}");
        let message = full["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.contains("memory is full") && message.contains("Delete files"),
            "{message}"
        );
        let deleted = service
            .delete(&format!("/v1/sessions/{id}/files?path=/workspace/b"))
            .send()
            .await
            .unwrap();
        assert_eq!(deleted.status(), 200);
        let back = service.sh(&id, "echo alive").await;
        assert_eq!(back["stdout"], "alive\n", "{back}");
        "the filler was OOM-killed, never the agent; a command while memory was full was refused, naming it; deleting a file through the agent freed the memory".to_string()
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

/// A command may set itself back to the agent's score (any process may lower its own to where
/// it started); filling memory then, it can have the kernel take the agent, the largest
/// process, and with it the sandbox: the session ends saying it ran out of memory.
#[tokio::test]
async fn a_filler_at_the_agents_score_can_take_the_agent_and_the_end_names_memory() {
    let attack = "tmpfs fill past mem_limit at the agent's own OOM score";
    let host = Host::before();
    let Some((service, id)) = tight_and_nearly_full().await else {
        return;
    };
    let outcome = bounded(120, attack, async {
        if on_gvisor() {
            // The score is gVisor's kernel's, which kills nothing: the host's limit holds
            // every tmpfs place full beside a process at mem_limit.
            let lowered = fill("/dev/shm/c", "echo 0 > /proc/self/oom_score_adj; ");
            let (status, filled) = service.exec(&id, lowered).await;
            assert_eq!((status, &filled["exit_code"]), (200, &json!(0)), "{filled}");
            return fits_on_gvisor(&service, &id).await;
        }
        let lowered = fill("/dev/shm/c", "echo 0 > /proc/self/oom_score_adj; ");
        let _ = service.exec(&id, lowered).await;
        let ended = service.wait_for_end(&id, Duration::from_secs(60)).await;
        assert_eq!(ended["state"], "ended", "{ended}");
        let reason = ended["end_reason"].as_str().unwrap_or("");
        assert!(
            reason.contains("ran out of memory") && reason.contains("mem_limit of 128m"),
            "{reason}"
        );
        format!("the agent went with the lowered filler; the session ended with: {reason}")
    })
    .await;
    report(attack, outcome);
    host.check_after(attack, service).await;
}

/// On gVisor a host OOM kill would end the whole sandbox, so the host's limit leaves room for
/// every tmpfs place full and a process at mem_limit (its address space's cap): with /tmp and
/// /workspace full, /dev/shm fills to its size, a memory bomb beside them is refused, and the
/// session answers throughout.
async fn fits_on_gvisor(service: &TestService, id: &str) -> String {
    let (status, shm) = service.exec(id, fill("/dev/shm/c", "")).await;
    assert_eq!((status, &shm["exit_code"]), (200, &json!(0)), "{shm}");
    let (status, bomb) = service
        .exec(id, json!({"command": "tail /dev/zero", "timeout_secs": 30}))
        .await;
    assert_eq!(status, 200, "{bomb}");
    assert_eq!(bomb["oom_killed"], false, "{bomb}");
    assert!(
        bomb["stderr"]
            .as_str()
            .unwrap_or("")
            .contains("out of memory"),
        "{bomb}"
    );
    let back = service.sh(id, "echo alive").await;
    assert_eq!(back["stdout"], "alive\n", "{back}");
    let info = service.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(info["state"], "running", "{info}");
    "gVisor: 180 MB of tmpfs files fit beside the agent, a memory bomb beside them was refused (out of memory), nothing was killed and the session answers".to_string()
}
