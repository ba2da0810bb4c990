//! Paths described, directories made, paths moved and directories watched, against a real
//! service, its agent in a real sandbox and Docker: symlinks described, not followed; what a
//! symlink to outside the workspace leads to is the sandbox's own filesystem, never the host's;
//! watches see what commands do, and a flood of changes stays bounded.

mod common;

use common::{base_config, docker_only, on_kubernetes, TestService, TOKEN};
use sandboxd_api::{FileChange, FileChangeKind};
use sandboxd_client::{Client, ClientError, FileWatch, Interface};
use serde_json::{json, Value};
use std::time::Duration;

async fn start() -> (TestService, Client) {
    let service = TestService::start(&base_config(4, ""));
    let client = Client::new(&service.url, TOKEN, Interface::Cli).unwrap();
    (service, client)
}

async fn sh(service: &TestService, id: &str, command: &str) -> String {
    let result = service.sh(id, command).await;
    assert_eq!(result["exit_code"], 0, "{command}: {result}");
    result["stdout"].as_str().unwrap().to_string()
}

fn code(error: ClientError) -> (u16, String) {
    match error {
        ClientError::Api { status, code, .. } => (status, code),
        other => panic!("not an API error: {other}"),
    }
}

/// Changes until one satisfies `done`, within 120 s: generous for a loaded machine (on
/// Kubernetes a flood's changes come through the API server's port-forward), and a watch that
/// stopped delivering still fails.
async fn changes_until(
    watch: &mut FileWatch,
    done: impl Fn(&FileChange) -> bool,
) -> Vec<FileChange> {
    let mut seen = Vec::new();
    let collect = async {
        while let Some(change) = watch.next_change().await.unwrap() {
            let finished = done(&change);
            seen.push(change);
            if finished {
                return;
            }
        }
        panic!("the watch ended");
    };
    if tokio::time::timeout(Duration::from_secs(120), collect)
        .await
        .is_err()
    {
        panic!("not seen within 120 s");
    }
    seen
}

fn has(changes: &[FileChange], kind: FileChangeKind, path: &str) -> bool {
    changes.iter().any(|c| c.kind == kind && c.path == path)
}

#[tokio::test]
async fn stat_describes_a_symlink_to_the_root_and_does_not_follow_it() {
    let (service, client) = start().await;
    let id = service.open("sh").await;
    sh(
        &service,
        &id,
        "ln -s / root && mkdir d && printf abc > d/f && chmod 600 d/f",
    )
    .await;
    let link = client.stat(&id, "root").await.unwrap();
    assert_eq!(link.kind, sandboxd_api::FileKind::Symlink);
    assert_eq!(link.symlink_target.as_deref(), Some("/"));
    assert_eq!(
        (link.path.as_str(), link.name.as_str()),
        ("/workspace/root", "root")
    );
    assert_eq!(
        (link.target_type, link.target_path.as_deref()),
        (Some(sandboxd_api::FileKind::Dir), Some("/")),
        "what it leads to, resolved"
    );
    let file = client.stat(&id, "d/f").await.unwrap();
    assert_eq!(
        (file.kind, file.size, file.mode.as_str()),
        (sandboxd_api::FileKind::File, 3, "0600")
    );
    assert!(file.modified.is_some() && file.symlink_target.is_none());
    let dir = client.stat(&id, "/workspace/d").await.unwrap();
    assert_eq!(
        (dir.kind, dir.name.as_str()),
        (sandboxd_api::FileKind::Dir, "d")
    );
    assert_eq!(
        code(client.stat(&id, "missing").await.unwrap_err()),
        (404, "not_found".into())
    );
}

#[tokio::test]
async fn mkdir_with_and_without_parents() {
    let (service, client) = start().await;
    let id = service.open("sh").await;
    assert_eq!(
        code(client.make_dir(&id, "a/b/c", false).await.unwrap_err()),
        (404, "not_found".into())
    );
    let made = client.make_dir(&id, "a/b/c", true).await.unwrap();
    assert!(made.created);
    // A pod's workspace volume is setgid to its fsGroup (the sandbox's group), and Linux gives
    // a directory made in it the same bit.
    let mode = if on_kubernetes() { "2755" } else { "755" };
    assert_eq!(
        sh(&service, &id, "stat -c %a a a/b a/b/c").await,
        format!("{mode}\n{mode}\n{mode}\n")
    );
    assert!(!client.make_dir(&id, "a/b/c", true).await.unwrap().created);
    assert!(client.make_dir(&id, "a/b/d", false).await.unwrap().created);
    // The status says which: 201 made, 200 there already.
    let response = service
        .post(&format!("/v1/sessions/{id}/files/mkdir"))
        .json(&json!({"path": "a/b"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    sh(&service, &id, "touch plain").await;
    assert_eq!(
        code(client.make_dir(&id, "plain", true).await.unwrap_err()),
        (409, "not_a_directory".into())
    );
    assert_eq!(
        code(client.make_dir(&id, "/usr/new", true).await.unwrap_err()),
        (403, "read_only".into())
    );
}

#[tokio::test]
async fn move_within_the_workspace_refuses_an_existing_destination_without_overwrite() {
    let (service, client) = start().await;
    let id = service.open("sh").await;
    sh(
        &service,
        &id,
        "echo first > a && echo second > b && mkdir dir",
    )
    .await;
    assert_eq!(
        code(client.move_path(&id, "a", "b", false).await.unwrap_err()),
        (409, "exists".into())
    );
    assert_eq!(sh(&service, &id, "cat a b").await, "first\nsecond\n");
    let moved = client.move_path(&id, "a", "b", true).await.unwrap();
    assert_eq!((moved.path.as_str(), moved.size), ("/workspace/b", 6));
    assert_eq!(sh(&service, &id, "cat b; ls").await, "first\nb\ndir\n");
    let moved = client.move_path(&id, "b", "dir/c", false).await.unwrap();
    assert_eq!(moved.name, "c");
    let moved = client.move_path(&id, "dir", "sub", false).await.unwrap();
    assert_eq!(moved.kind, sandboxd_api::FileKind::Dir);
    assert_eq!(sh(&service, &id, "cat sub/c").await, "first\n");
    // The working directory and /tmp are two filesystems: rename(2) cannot cross.
    let crossing = client.move_path(&id, "sub", "/tmp/sub", false).await;
    assert_eq!(code(crossing.unwrap_err()), (409, "cross_device".into()));
    assert_eq!(
        code(
            client
                .move_path(&id, "nothing", "x", false)
                .await
                .unwrap_err()
        ),
        (404, "not_found".into())
    );
    let activity = service
        .get_json(&format!("/v1/sessions/{id}/activity"))
        .await;
    let moves: Vec<&Value> = activity["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "file_move")
        .collect();
    assert_eq!(moves.len(), 6);
    assert_eq!(moves[0]["target"], "/workspace/nothing -> /workspace/x");
    assert_eq!(moves[0]["status"], "error");
}

#[tokio::test]
async fn symlinks_pointing_outside_lead_into_the_sandbox_never_the_host() {
    let (service, client) = start().await;
    let id = service.open("sh").await;
    // A directory that exists on the host, named by a symlink in the sandbox.
    let host_dir = tempfile::tempdir_in("/tmp").unwrap();
    let host_path = host_dir.path().to_str().unwrap().to_string();
    sh(
        &service,
        &id,
        &format!("ln -s /etc etc && ln -s /tmp tmp && ln -s {host_path} host && echo x > f"),
    )
    .await;
    // The sandbox's /etc is on its read-only root.
    assert_eq!(
        code(
            client
                .make_dir(&id, "etc/made-by-test", true)
                .await
                .unwrap_err()
        ),
        (403, "read_only".into())
    );
    assert_eq!(
        code(
            client
                .move_path(&id, "f", "etc/moved", false)
                .await
                .unwrap_err()
        ),
        (409, "cross_device".into())
    );
    // The host's directory does not exist in the sandbox.
    assert_eq!(
        code(client.make_dir(&id, "host/x", false).await.unwrap_err()),
        (404, "not_found".into())
    );
    // With parents the dangling link is in the way, as it is for `mkdir -p`.
    assert_eq!(
        code(client.make_dir(&id, "host/x", true).await.unwrap_err()),
        (409, "not_a_directory".into())
    );
    // Once the sandbox has a directory of that name, the link leads there.
    sh(&service, &id, &format!("mkdir -p {host_path}")).await;
    let made = client.make_dir(&id, "host/x", false).await.unwrap();
    assert!(made.created, "made in the sandbox's own {host_path}");
    // Both in the sandbox's /tmp: one filesystem.
    sh(&service, &id, "echo x > /tmp/f").await;
    client
        .move_path(&id, "tmp/f", "host/x/f", false)
        .await
        .unwrap();
    assert_eq!(
        sh(&service, &id, &format!("cat {host_path}/x/f")).await,
        "x\n"
    );
    assert_eq!(
        std::fs::read_dir(host_dir.path()).unwrap().count(),
        0,
        "the host's directory stays empty"
    );
    // Through /tmp: the sandbox's own tmpfs.
    client
        .make_dir(&id, "tmp/made-by-test-fsops", true)
        .await
        .unwrap();
    assert!(!std::path::Path::new("/tmp/made-by-test-fsops").exists());
    assert!(!std::path::Path::new("/etc/made-by-test").exists());
}

#[tokio::test]
async fn a_watch_sees_what_commands_do_recursively_or_not_and_ends_with_the_session() {
    let (service, client) = start().await;
    let id = service.open("sh").await;
    sh(&service, &id, "mkdir -p w/old").await;
    let mut flat = client.watch(&id, "w", false).await.unwrap();
    let mut deep = client.watch(&id, "w", true).await.unwrap();
    sh(
        &service,
        &id,
        "touch w/a && echo more >> w/a && chmod 600 w/a && mv w/a w/b && rm w/b && \
         echo x > w/old/inner && mkdir w/new && echo y > w/new/n && touch w/end",
    )
    .await;
    let seen = changes_until(&mut flat, |c| c.path == "/workspace/w/end").await;
    for (kind, path) in [
        (FileChangeKind::Create, "/workspace/w/a"),
        (FileChangeKind::Write, "/workspace/w/a"),
        (FileChangeKind::Chmod, "/workspace/w/a"),
        (FileChangeKind::Rename, "/workspace/w/a"),
        (FileChangeKind::Create, "/workspace/w/b"),
        (FileChangeKind::Remove, "/workspace/w/b"),
        (FileChangeKind::Create, "/workspace/w/new"),
    ] {
        assert!(has(&seen, kind, path), "{kind:?} {path} not in {seen:?}");
    }
    assert!(
        !seen
            .iter()
            .any(|c| c.path.contains("inner") || c.path == "/workspace/w/new/n"),
        "{seen:?}"
    );
    let seen = changes_until(&mut deep, |c| c.path == "/workspace/w/end").await;
    assert!(
        has(&seen, FileChangeKind::Create, "/workspace/w/old/inner"),
        "{seen:?}"
    );
    assert!(
        has(&seen, FileChangeKind::Create, "/workspace/w/new/n"),
        "{seen:?}"
    );

    service
        .delete(&format!("/v1/sessions/{id}"))
        .send()
        .await
        .unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(30), flat.next_change()).await;
    assert!(
        matches!(ended, Ok(Ok(None))),
        "the watch ends with the session: {ended:?}"
    );
    // A watch's entry is recorded when it ends.
    let activity = service
        .get_json(&format!("/v1/sessions/{id}/activity"))
        .await;
    let watches = activity["entries"].as_array().unwrap().iter();
    let ended: Vec<_> = watches.filter(|e| e["action"] == "file_watch").collect();
    assert!(
        !ended.is_empty() && ended.iter().all(|e| e["target"] == "/workspace/w"),
        "{activity}"
    );
}

#[tokio::test]
async fn a_flood_of_changes_is_bounded_and_reported_as_an_overflow() {
    if !docker_only(
        "a flood of 600,000 changes",
        "its backlog drains through the API server's port-forward, minutes on a loaded 2-core machine (agents over the pod network: #53)",
    ) {
        return;
    }
    let (service, client) = start().await;
    let id = service.open("python").await;
    sh(&service, &id, "mkdir flood").await;
    let mut watch = client.watch(&id, "flood", false).await.unwrap();
    // Not read while a command makes 600,000 changes: far more than any buffer on the way.
    let script = "import os\nfor i in range(300000):\n    open('flood/x', 'w').close()\n    os.remove('flood/x')\nopen('flood/end', 'w').close()\n";
    let (status, result) = service
        .exec(
            &id,
            json!({"argv": ["python3", "-c", script], "timeout_secs": 60}),
        )
        .await;
    assert_eq!((status, &result["exit_code"]), (200, &json!(0)), "{result}");
    let seen = changes_until(&mut watch, |c| c.kind == FileChangeKind::Overflow).await;
    let overflow = seen.last().unwrap();
    assert_eq!(overflow.path, "/workspace/flood");
    assert!(
        seen.len() < 600_000,
        "{} changes came before the overflow",
        seen.len()
    );
    // The watch goes on after it.
    sh(&service, &id, "touch flood/after").await;
    changes_until(&mut watch, |c| c.path == "/workspace/flood/after").await;
}
