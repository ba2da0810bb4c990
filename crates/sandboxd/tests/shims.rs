//! Sandboxes made one after another share the engine's shim, `backend.sandboxes_per_shim` to a
//! shim, against a real service and Docker: a shim is the parent of each container's first
//! process, so sharing shows in the host's process table.

mod common;

use common::{base_config, docker, docker_only, TestService};

/// The host process that started the sandbox's container: the engine's shim.
fn shim_of(service: &TestService, session: &str) -> (u32, String) {
    let container = service
        .containers()
        .into_iter()
        .find(|c| c["Config"]["Labels"]["org.sandboxd.session"] == session)
        .expect("the session's container");
    let pid = container["State"]["Pid"]
        .as_u64()
        .expect("a running container");
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The parent pid is the second field after the command name, which is in parentheses.
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let parent: u32 = after_name.split(' ').nth(1).unwrap().parse().unwrap();
    let name = std::fs::read_to_string(format!("/proc/{parent}/comm")).unwrap();
    (parent, name.trim().to_string())
}

#[tokio::test]
async fn sandboxes_share_a_shim_as_many_as_the_config_says_and_outlive_a_neighbour() {
    if !docker_only("shared shims", "a pod's containers share its shim already") {
        return;
    }
    let api = docker(&["version", "--format", "{{.Server.APIVersion}}"]);
    let minor: u32 = api.trim().trim_start_matches("1.").parse().unwrap_or(0);
    if minor < 43 {
        common::skip_or_fail(&format!("an engine with API 1.43 (annotations); this one speaks {}: scripts/host-setup.sh starts one that can", api.trim()));
        return;
    }
    let service = TestService::start(&base_config(
        4,
        "[backend]\nkind = \"docker\"\nsandboxes_per_shim = 2\n",
    ));
    let first = service.open("sh").await;
    let second = service.open("sh").await;
    let third = service.open("sh").await;
    let shims: Vec<(u32, String)> = [&first, &second, &third]
        .iter()
        .map(|s| shim_of(&service, s))
        .collect();
    for (_, name) in &shims {
        assert!(name.starts_with("containerd-shim"), "{shims:?}");
    }
    assert_eq!(shims[0].0, shims[1].0, "the first two share: {shims:?}");
    assert_ne!(shims[1].0, shims[2].0, "the third starts a shim: {shims:?}");

    // The engine report says so.
    let engine = service.get_json("/v1/engine").await;
    let findings = engine["findings"].to_string();
    assert!(findings.contains("2 to a shim"), "{findings}");

    // Closing one leaves its neighbour on the same shim working.
    let closed = service
        .delete(&format!("/v1/sessions/{first}"))
        .send()
        .await
        .unwrap();
    assert!(closed.status().is_success(), "{}", closed.status());
    assert_eq!(
        service.sh(&second, "echo still here").await["stdout"],
        "still here\n"
    );
    assert_eq!(shim_of(&service, &second).0, shims[1].0);
}
