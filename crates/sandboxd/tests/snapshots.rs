//! Snapshots and forks against a real service and Docker: a snapshot opens into a new
//! session byte-exact (modes, symlinks, executables) without its processes; it survives a
//! kill -9 of the service; a fork's sessions are independent; a tenant cannot see or open
//! another's; the quota is enforced with a clear error and a refused snapshot leaves nothing.
//! Its snapshots ask for the files (`memory: false`), also on gVisor, whose snapshots would
//! keep the processes by default (the memory suite checks those).

mod common;

use common::{base_config, docker_only, TestService, TOKEN};
use sandboxd_config::{to_hex, token_sha256};
use serde_json::{json, Value};
use std::os::unix::fs::MetadataExt;

/// Files of every kind in the three writable places, made in the sandbox.
const MAKE_FILES: &str = "set -e
mkdir -p /workspace/dir/empty /workspace/dir/deep
head -c 200000 /dev/urandom > /workspace/dir/deep/random.bin
printf '#!/bin/sh\\necho ran from the snapshot\\n' > /workspace/run.sh
chmod 0755 /workspace/run.sh
echo secret > /workspace/private && chmod 0600 /workspace/private
chmod 0750 /workspace/dir/deep
ln -s dir/deep/random.bin /workspace/link
ln -s /etc/passwd /workspace/absolute-link
ln -s missing /workspace/dangling
printf 'no newline' > '/workspace/name with spaces'
echo tmp > /tmp/t.txt
echo shm > /dev/shm/s.txt";

/// What the files are: each path's type, mode and size, a symlink's target, a regular
/// file's checksum.
const MANIFEST: &str = "cd / && for f in $(find workspace tmp dev/shm | sort | tr ' ' '?'); do
  p=$(echo \"$f\" | tr '?' ' ')
  if [ -L \"$p\" ]; then echo \"$p link $(readlink \"$p\")\";
  elif [ -f \"$p\" ]; then echo \"$p file $(stat -c %a \"$p\") $(stat -c %s \"$p\") $(md5sum < \"$p\")\";
  else echo \"$p $(stat -c %F \"$p\") $(stat -c %a \"$p\")\"; fi
done";

/// The manifest, on Kubernetes with the setgid bit of the directories below the volumes'
/// roots cleared: in a pod they inherit it from their volume (the kubelet sets it with the
/// pod's fsGroup), and a restore gives them the archive's modes without it (the agent never
/// restores setuid or setgid); their group is the sandbox's either way.
fn without_inherited_setgid(manifest: &str) -> String {
    if docker_only(
        "directories restored with their setgid bit",
        "a pod's volumes pass theirs on to new directories; a restore clears it",
    ) {
        return manifest.to_string();
    }
    manifest
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            match fields.as_slice() {
                [path, "directory", mode] if path.contains('/') && mode.len() == 4 => {
                    let mode = u32::from_str_radix(mode, 8).unwrap() & !0o2000;
                    format!("{path} directory {mode:o}\n")
                }
                _ => format!("{line}\n"),
            }
        })
        .collect()
}

async fn post(service: &TestService, token: &str, path: &str, body: Value) -> (u16, Value) {
    let response = service
        .client
        .post(service.url(path))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

async fn call(
    service: &TestService,
    token: &str,
    method: reqwest::Method,
    path: &str,
) -> (u16, Value) {
    let response = service
        .client
        .request(method, service.url(path))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

async fn snapshot(service: &TestService, id: &str, name: &str) -> Value {
    let (status, snapshot) = post(
        service,
        TOKEN,
        &format!("/v1/sessions/{id}/snapshots"),
        json!({"name": name, "memory": false}),
    )
    .await;
    assert_eq!(status, 201, "snapshot failed: {snapshot}");
    snapshot
}

async fn open_from(service: &TestService, token: &str, snapshot: &str) -> (u16, Value) {
    post(
        service,
        token,
        "/v1/sessions",
        json!({"snapshot": snapshot}),
    )
    .await
}

/// The entries of the service's snapshots directory.
fn snapshot_dirs(service: &TestService) -> Vec<String> {
    match std::fs::read_dir(service.state_dir.path().join("snapshots")) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[tokio::test]
async fn a_snapshot_opens_into_a_new_session_byte_exact_without_its_processes() {
    let service = TestService::start(&base_config(2, ""));
    let (status, source) = post(
        &service,
        TOKEN,
        "/v1/sessions",
        json!({"runtime": "sh", "labels": {"team": "red"}}),
    )
    .await;
    assert_eq!(status, 201, "{source}");
    let source = source["id"].as_str().unwrap().to_string();
    service.sh(&source, MAKE_FILES).await;
    let (status, _) = post(
        &service,
        TOKEN,
        &format!("/v1/sessions/{source}/processes"),
        json!({"command": "sleep 1000"}),
    )
    .await;
    assert_eq!(status, 201);
    let manifest = service.sh(&source, MANIFEST).await["stdout"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(manifest.contains("workspace/run.sh file 755"), "{manifest}");
    assert!(
        manifest.contains("workspace/link link dir/deep/random.bin"),
        "{manifest}"
    );

    let taken = snapshot(&service, &source, "prepared").await;
    assert_eq!(taken["name"], "prepared");
    assert_eq!(taken["runtime"], "sh");
    assert_eq!(taken["labels"]["team"], "red");
    assert_eq!(taken["session_id"], source.as_str());
    assert_eq!(taken["paths"], json!(["/workspace", "/tmp", "/dev/shm"]));
    assert!(taken["bytes"].as_u64().unwrap() > 200_000, "{taken}");
    let id = taken["id"].as_str().unwrap();
    assert_eq!(
        service.get_json(&format!("/v1/snapshots/{id}")).await,
        taken
    );

    let (status, opened) = open_from(&service, TOKEN, id).await;
    assert_eq!(status, 201, "{opened}");
    assert_eq!(opened["runtime"], "sh");
    assert_eq!(opened["labels"]["team"], "red");
    let copy = opened["id"].as_str().unwrap().to_string();
    let copied = service.sh(&copy, MANIFEST).await["stdout"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        without_inherited_setgid(&copied),
        without_inherited_setgid(&manifest),
        "the new session's files differ"
    );
    println!(
        "{} entries identical:\n{manifest}",
        manifest.lines().count()
    );
    assert_eq!(
        service.sh(&copy, "/workspace/run.sh").await["stdout"],
        "ran from the snapshot\n"
    );
    let processes = service
        .get_json(&format!("/v1/sessions/{copy}/processes"))
        .await;
    assert_eq!(
        processes["processes"],
        json!([]),
        "processes are not in a snapshot"
    );
    let log = service
        .get_json(&format!("/v1/sessions/{copy}/activity"))
        .await;
    assert_eq!(log["entries"][0]["action"], "exec");
    assert!(
        log["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["action"] == "snapshot_restore" && e["target"] == id),
        "{log}"
    );

    // Kept on the host as private files, never unpacked.
    let dir = service.state_dir.path().join("snapshots");
    assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
    let files: Vec<_> = std::fs::read_dir(dir.join(id))
        .unwrap()
        .map(|e| e.unwrap())
        .collect();
    assert_eq!(files.len(), 3, "one archive per place");
    for file in files {
        assert!(file.file_type().unwrap().is_file());
        assert_eq!(file.metadata().unwrap().mode() & 0o777, 0o600);
    }
}

#[tokio::test]
async fn a_snapshot_survives_a_kill_of_the_service() {
    let mut service = TestService::start(&base_config(2, ""));
    let source = service.open("sh").await;
    service.sh(&source, "echo kept > /workspace/kept.txt").await;
    let taken = snapshot(&service, &source, "before the crash").await;
    let id = taken["id"].as_str().unwrap().to_string();
    service
        .delete(&format!("/v1/sessions/{source}"))
        .send()
        .await
        .unwrap();

    // A snapshot cut short by the crash leaves files without a record: removed at start.
    let leftover = service.state_dir.path().join("snapshots/.partial-0123");
    std::fs::create_dir(&leftover).unwrap();
    service.crash_and_restart();
    assert!(!leftover.exists(), "an unfinished snapshot was left");
    assert_eq!(snapshot_dirs(&service), std::slice::from_ref(&id));

    assert_eq!(
        service.get_json(&format!("/v1/snapshots/{id}")).await,
        taken
    );
    let (status, opened) = open_from(&service, TOKEN, &id).await;
    assert_eq!(status, 201, "{opened}");
    let copy = opened["id"].as_str().unwrap();
    assert_eq!(
        service.sh(copy, "cat /workspace/kept.txt").await["stdout"],
        "kept\n"
    );

    let (status, deleted) = call(
        &service,
        TOKEN,
        reqwest::Method::DELETE,
        &format!("/v1/snapshots/{id}"),
    )
    .await;
    assert_eq!((status, &deleted["id"]), (200, &json!(id)));
    assert!(snapshot_dirs(&service).is_empty());
    let (status, _) = call(
        &service,
        TOKEN,
        reqwest::Method::GET,
        &format!("/v1/snapshots/{id}"),
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_fork_of_three_gives_sessions_that_do_not_see_each_others_writes() {
    let service = TestService::start(&base_config(4, ""));
    let source = service.open("sh").await;
    service.sh(&source, "echo base > /workspace/base.txt").await;
    let (status, forked) = post(
        &service,
        TOKEN,
        &format!("/v1/sessions/{source}/fork"),
        json!({"count": 3}),
    )
    .await;
    assert_eq!(status, 201, "{forked}");
    let ids: Vec<String> = forked["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 3);
    for (n, id) in ids.iter().enumerate() {
        service
            .sh(id, &format!("echo {n} > /workspace/mine.txt"))
            .await;
    }
    service
        .sh(&source, "echo source > /workspace/base.txt")
        .await;
    for (n, id) in ids.iter().enumerate() {
        let seen = service
            .sh(id, "cat /workspace/base.txt /workspace/mine.txt")
            .await;
        assert_eq!(seen["stdout"], format!("base\n{n}\n"), "session {n}");
    }
    let (_, listed) = call(&service, TOKEN, reqwest::Method::GET, "/v1/snapshots").await;
    assert_eq!(
        listed["snapshots"],
        json!([]),
        "the fork's snapshot was deleted"
    );
    assert!(snapshot_dirs(&service).is_empty());

    // All or nothing: four more do not fit under max_sessions = 4.
    let (status, full) = post(
        &service,
        TOKEN,
        &format!("/v1/sessions/{source}/fork"),
        json!({"count": 1}),
    )
    .await;
    assert_eq!(
        (status, &full["error"]["code"]),
        (429, &json!("service_full")),
        "{full}"
    );
    assert_eq!(service.sandbox_count(), 4);
}

#[tokio::test]
async fn a_tenant_cannot_see_or_open_another_tenants_snapshot() {
    let (alpha, beta) = (
        "alpha-token-0123456789abcdef",
        "beta-token-0123456789abcdef",
    );
    let tenant = |name: &str, token: &str| {
        format!(
            "[tenants.{name}]\ntoken_sha256 = \"{}\"\nmax_sessions = 2\n",
            to_hex(&token_sha256(token))
        )
    };
    let config = format!(
        "{}{}{}",
        base_config(4, ""),
        tenant("alpha", alpha),
        tenant("beta", beta)
    );
    let service = TestService::start(&config);
    let (status, session) = post(&service, alpha, "/v1/sessions", json!({"runtime": "sh"})).await;
    assert_eq!(status, 201, "{session}");
    let session = session["id"].as_str().unwrap().to_string();
    let (status, taken) = post(
        &service,
        alpha,
        &format!("/v1/sessions/{session}/snapshots"),
        json!({"name": "alpha's", "memory": false}),
    )
    .await;
    assert_eq!(status, 201, "{taken}");
    assert_eq!(taken["tenant"], "alpha");
    let id = taken["id"].as_str().unwrap();

    let path = format!("/v1/snapshots/{id}");
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let (status, body) = call(&service, beta, method.clone(), &path).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (404, &json!("not_found")),
            "{method}"
        );
    }
    let (status, body) = open_from(&service, beta, id).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("not_found")),
        "{body}"
    );
    let (_, listed) = call(&service, beta, reqwest::Method::GET, "/v1/snapshots").await;
    assert_eq!(listed["snapshots"], json!([]));
    let (status, body) = post(
        &service,
        beta,
        &format!("/v1/sessions/{session}/snapshots"),
        json!({"name": "not mine", "memory": false}),
    )
    .await;
    assert_eq!(status, 404, "{body}");

    // Its owner and the administrator see it; alpha opens it.
    let (_, listed) = call(&service, alpha, reqwest::Method::GET, "/v1/snapshots").await;
    assert_eq!(listed["snapshots"].as_array().unwrap().len(), 1);
    assert_eq!(service.get_json(&path).await["id"], id);
    let (status, opened) = open_from(&service, alpha, id).await;
    assert_eq!(status, 201, "{opened}");
    assert_eq!(opened["tenant"], "alpha");
    let audit = service.get_json("/v1/audit").await;
    assert!(
        audit["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["session_id"] == id),
        "{audit}"
    );
}

#[tokio::test]
async fn the_snapshot_quota_is_enforced_and_a_refused_snapshot_leaves_nothing() {
    let policy = "snapshot_quota_bytes = \"1m\"\nsnapshot_quota_count = 2";
    let service = TestService::start(&base_config(2, policy));
    let id = service.open("sh").await;
    service.sh(&id, "echo small > /workspace/small.txt").await;
    let first = snapshot(&service, &id, "small").await;

    // 2 MiB of files do not fit in what is left of 1 MiB: refused, in the quota's words.
    service
        .sh(&id, "head -c 2097152 /dev/urandom > /tmp/big.bin")
        .await;
    let (status, refused) = post(
        &service,
        TOKEN,
        &format!("/v1/sessions/{id}/snapshots"),
        json!({"name": "too big", "memory": false}),
    )
    .await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (429, &json!("snapshot_quota")),
        "{refused}"
    );
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("policy.snapshot_quota_bytes"), "{message}");
    assert!(message.contains("nothing was kept"), "{message}");
    let (_, listed) = call(&service, TOKEN, reqwest::Method::GET, "/v1/snapshots").await;
    assert_eq!(listed["snapshots"], json!([first]));
    assert_eq!(
        snapshot_dirs(&service),
        [first["id"].as_str().unwrap()],
        "files were left behind"
    );

    // Back under the quota, a second fits; a third is over the count.
    service.sh(&id, "rm /tmp/big.bin").await;
    snapshot(&service, &id, "second").await;
    let (status, refused) = post(
        &service,
        TOKEN,
        &format!("/v1/sessions/{id}/snapshots"),
        json!({"name": "third", "memory": false}),
    )
    .await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (429, &json!("snapshot_quota")),
        "{refused}"
    );
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("policy.snapshot_quota_count = 2"),
        "{message}"
    );
    assert_eq!(snapshot_dirs(&service).len(), 2);
    let log = service
        .get_json(&format!("/v1/sessions/{id}/activity"))
        .await;
    let refusals = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "snapshot" && e["status"] == "error")
        .count();
    assert_eq!(refusals, 2, "{log}");
}

/// A sandbox that starves its own agent (CPU burners in a small CPU quota, a large file to
/// read) takes long over its snapshot; another session's small snapshot does not wait for it.
#[tokio::test]
async fn a_starved_sandboxs_snapshot_keeps_no_other_session_waiting() {
    let starved = format!(
        "[runtimes.starved]\nimage = \"{}\"\ncpus = 0.05\nmem_limit = \"256m\"\ntmpfs_size = \"64m\"\n",
        common::busybox_image()
    );
    let service = TestService::start(&base_config(2, &starved));
    let slow = service.open("starved").await;
    let quick = service.open("sh").await;
    service
        .sh(&slow, "head -c 60000000 /dev/zero > /workspace/big")
        .await;
    service
        .sh(
            &slow,
            "for i in 1 2 3 4; do nohup sh -c 'while :; do :; done' >/dev/null 2>&1 & done",
        )
        .await;
    service.sh(&quick, "echo small > /workspace/small").await;

    let slow_snapshot = {
        let (url, slow) = (
            service.url(&format!("/v1/sessions/{slow}/snapshots")),
            slow.clone(),
        );
        tokio::spawn(async move {
            let answer = reqwest::Client::new()
                .post(url)
                .bearer_auth(TOKEN)
                .json(&json!({"name": "slow", "memory": false}))
                .send()
                .await
                .unwrap();
            let status = answer.status().as_u16();
            let body: Value = answer.json().await.unwrap();
            assert_eq!(status, 201, "the slow snapshot of {slow}: {body}");
            std::time::Instant::now()
        })
    };
    // The slow snapshot is being written once its hidden directory is there.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !snapshot_dirs(&service)
        .iter()
        .any(|d| d.starts_with(".partial-"))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the slow snapshot never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    snapshot(&service, &quick, "quick").await;
    let quick_done = std::time::Instant::now();
    let slow_done = slow_snapshot.await.unwrap();
    assert!(
        quick_done < slow_done,
        "the small snapshot finished {:?} after the starved one: it waited behind it",
        quick_done - slow_done
    );
}
