//! A session with volumes whose runtime has a warm pool: on runc the pooled sandbox is handed
//! out with the volumes mounted into it, no sandbox started for the session; on gVisor, whose
//! sandboxes see no mount made after their start, the session gets a sandbox of its own.
//! Either way the mounts are the volumes': data kept across sessions, read-only refused, the
//! size cap, nosuid and nodev, and the activity log's mount entries.

use crate::common::{base_config, busybox_image, docker_only, on_gvisor, TestService};
use crate::support::Volumes;
use serde_json::json;
use std::time::Duration;

fn start_pooled() -> Volumes {
    let pooled = format!(
        "\n[runtimes.pooled]\nimage = \"{}\"\npool_size = 1\n",
        busybox_image()
    );
    Volumes {
        service: TestService::start(&base_config(8, &pooled)),
        runtime: "pooled",
    }
}

/// The session ids of the pool's sandboxes, once the pool holds one.
async fn pooled_ids(t: &Volumes) -> Vec<String> {
    for _ in 0..240 {
        if t.service.get_json("/v1/stats").await["pooled"] == 1 {
            return t.service.sandbox_session_ids();
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("the pool was not filled within 60 s");
}

/// Opens a session with `volumes` while the pool holds a sandbox, and checks where it came
/// from: the pool on runc, a sandbox of its own on gVisor.
async fn open_beside_the_pool(t: &Volumes, volumes: serde_json::Value) -> String {
    let ready = pooled_ids(t).await;
    let id = t.open_mounted(volumes).await;
    assert_eq!(
        ready.contains(&id),
        !on_gvisor(),
        "from the pool on runc, its own sandbox on gVisor: {id} against the pooled {ready:?}"
    );
    id
}

/// The options of the mount at `path`, from the sandbox's own mount table.
async fn mount_options(t: &Volumes, id: &str, path: &str) -> String {
    let table = t
        .sh(id, &format!("grep ' {path} ' /proc/mounts || true"))
        .await;
    let line = table["stdout"].as_str().unwrap().trim().to_string();
    assert!(!line.is_empty(), "{path} is a mount in the sandbox");
    line.split(' ').nth(3).unwrap_or_default().to_string()
}

#[tokio::test]
async fn a_pooled_sandbox_is_handed_out_with_the_sessions_volumes_mounted() {
    if !docker_only(
        "a pooled sandbox with volumes",
        "a pod's volumes are in its spec: a session with volumes starts a pod of its own",
    ) {
        return;
    }
    let t = start_pooled();
    t.create("data", "32m").await;

    let writer =
        open_beside_the_pool(&t, json!([{"name": "data", "path": "/workspace/data"}])).await;
    let options = mount_options(&t, &writer, "/workspace/data").await;
    // gVisor's table shows its own file system's options: the host's flags are runc's to show.
    let expected: &[&str] = match on_gvisor() {
        true => &["rw"],
        false => &["rw", "nosuid", "nodev"],
    };
    for option in expected {
        assert!(
            options.split(',').any(|o| o == *option),
            "{option} in {options}"
        );
    }
    let wrote = t
        .sh(
            &writer,
            "echo kept > /workspace/data/note && ls -ln /workspace/data/note",
        )
        .await;
    assert!(
        wrote["stdout"].as_str().unwrap().contains(" 61000 "),
        "the sandbox's uid owns what it wrote: {wrote}"
    );
    let filled = t
        .sh(
            &writer,
            "dd if=/dev/zero of=/workspace/data/big bs=1M count=100 2>&1; rm -f /workspace/data/big",
        )
        .await;
    assert!(
        filled["stdout"]
            .as_str()
            .unwrap()
            .contains("No space left on device"),
        "the volume's size stops the writer: {filled}"
    );
    t.assert_mount_logged(&writer, "data at /workspace/data")
        .await;
    t.close(&writer).await;

    // The next pooled sandbox, read-only at a deeper path that does not exist in it yet.
    let reader = open_beside_the_pool(
        &t,
        json!([{"name": "data", "path": "/tmp/deep/data", "read_only": true}]),
    )
    .await;
    let options = mount_options(&t, &reader, "/tmp/deep/data").await;
    assert!(
        options.split(',').any(|o| o == "ro"),
        "read-only: {options}"
    );
    t.assert_read_only_with_note(&reader, "/tmp/deep/data")
        .await;
    t.close(&reader).await;
}
