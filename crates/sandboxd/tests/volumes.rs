//! Volumes on the real engine: data that outlives sessions, shared read-only, the hard cap
//! (ENOSPC inside, the host's disk giving no more than the size), quotas, tenants, delete
//! while mounted, files without a session, bad input, and repair after a crash. The kubernetes
//! step runs it on the test cluster too, where what only Docker has (its volume images, files
//! without a session, mounts into pooled sandboxes) is skipped and said so; the cluster's own
//! cap, crash and claim tests are in kubernetes_volumes.rs.

mod common;
#[path = "volumes/pooled.rs"]
mod pooled;
#[path = "volumes/support.rs"]
mod support;

use common::{docker_only, tenant_token, TOKEN};
use reqwest::Method;
use serde_json::{json, Value};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use support::{mounts_under, start, Volumes};

#[tokio::test]
async fn data_outlives_sessions_and_readers_share_a_volume_that_cannot_go_while_mounted() {
    let t = start("", "");
    let created = t.create("data", "64m").await;
    assert_eq!(created["size_bytes"], 64 << 20);
    assert_eq!(t.stored_volumes(), 1);

    let writer = t
        .open_mounted(json!([{"name": "data", "path": "/workspace/data"}]))
        .await;
    let wrote = t
        .sh(
            &writer,
            "echo kept > /workspace/data/note && mkdir /workspace/data/d && ls -ln /workspace/data",
        )
        .await;
    assert_eq!(wrote["exit_code"], 0, "{wrote}");
    let listing = wrote["stdout"].as_str().unwrap();
    assert!(
        listing.lines().skip(1).all(|l| l.contains(" 61000 ")),
        "the sandbox's uid owns what it made: {listing}"
    );
    // The policy's default: one writer at a time.
    let (status, busy) = t
        .open_with(json!([{"name": "data", "path": "/tmp/data"}]))
        .await;
    assert_eq!(status, 409, "{busy}");
    assert_eq!(busy["error"]["code"], "volume_busy");
    assert!(busy["error"]["message"].as_str().unwrap().contains(&writer));
    t.assert_mount_logged(&writer, "data at /workspace/data")
        .await;
    t.close(&writer).await;

    let mut readers = Vec::new();
    for path in ["/tmp/data", "/home/user/data"] {
        readers.push(
            t.open_mounted(json!([{"name": "data", "path": path, "read_only": true}]))
                .await,
        );
    }
    for (reader, path) in readers.iter().zip(["/tmp/data", "/home/user/data"]) {
        t.assert_read_only_with_note(reader, path).await;
    }
    let (_, shown) = t.admin(Method::GET, "/v1/volumes/data", None).await;
    let mut users: Vec<&str> = shown["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    users.sort();
    let mut expected: Vec<&str> = readers.iter().map(String::as_str).collect();
    expected.sort();
    assert_eq!(users, expected, "{shown}");
    assert!(t.used_bytes("data").await > 0);

    let (status, refused) = t.admin(Method::DELETE, "/v1/volumes/data", None).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "volume_in_use");
    for reader in &readers {
        assert!(refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains(reader.as_str()));
    }
    // The snapshot of a session leaves its volume out: shared, not copied.
    let (status, snapshot) = t
        .admin(
            Method::POST,
            &format!("/v1/sessions/{}/snapshots", readers[0]),
            Some(json!({"name": "without the volume"})),
        )
        .await;
    assert_eq!(status, 201, "{snapshot}");
    let (_, from_snapshot) = t
        .admin(
            Method::POST,
            "/v1/sessions",
            Some(json!({"snapshot": snapshot["id"]})),
        )
        .await;
    let copied = t
        .sh(
            from_snapshot["id"].as_str().unwrap(),
            "ls /tmp/data 2>&1; echo done",
        )
        .await;
    assert!(
        !copied["stdout"].as_str().unwrap().contains("note"),
        "{copied}"
    );

    for reader in &readers {
        t.close(reader).await;
    }
    let (status, deleted) = t.admin(Method::DELETE, "/v1/volumes/data", None).await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(t.stored_volumes(), 0, "the data goes with the record");
    let (status, _) = t.admin(Method::GET, "/v1/volumes/data", None).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn the_cap_stops_a_writer_with_no_space_and_the_host_gives_no_more_than_the_size() {
    if !docker_only(
        "the volume's image in the state directory",
        "kubernetes_volumes.rs checks the cluster's",
    ) {
        return;
    }
    let t = start("", "");
    t.create("small", "32m").await;
    let id = t
        .open_mounted(json!([{"name": "small", "path": "/workspace/small"}]))
        .await;
    let filled = t
        .sh(
            &id,
            "dd if=/dev/zero of=/workspace/small/big bs=1M count=100 2>&1; echo rc=$?",
        )
        .await;
    let out = filled["stdout"].as_str().unwrap();
    assert!(out.contains("No space left on device"), "{out}");
    assert!(!out.contains("rc=0"), "{out}");
    let dir = &t.volume_dirs()[0];
    let image = std::fs::metadata(dir.join("image.ext4")).unwrap();
    let allocated = image.blocks() * 512;
    eprintln!("a full 32 MiB volume takes {allocated} bytes of the host's disk");
    assert!(
        allocated <= 32 << 20,
        "the host's disk gave the volume {allocated} bytes, more than its size"
    );
    assert!(
        allocated > 16 << 20,
        "the writes landed in the volume: {allocated}"
    );
    // The session's own working directory is not the volume: it still has room.
    let other = t
        .sh(&id, "echo fine > /workspace/other && cat /workspace/other")
        .await;
    assert_eq!(other["stdout"], "fine\n", "{other}");
}

#[tokio::test]
async fn quotas_and_bad_input_are_clear_errors_that_leave_nothing() {
    let t = start(
        "volume_quota_count = 2\nvolume_quota_bytes = \"100m\"\n",
        "",
    );
    for name in ["../x", "a/b", ".hidden", "", "a b", &"x".repeat(65)] {
        let (status, body) = t
            .admin(
                Method::POST,
                "/v1/volumes",
                Some(json!({"name": name, "size": "20m"})),
            )
            .await;
        assert_eq!(status, 400, "{name:?}: {body}");
        assert_eq!(body["error"]["code"], "invalid_volume_name", "{body}");
    }
    for size in [json!("1k"), json!("lots"), json!(1024)] {
        let (status, body) = t
            .admin(
                Method::POST,
                "/v1/volumes",
                Some(json!({"name": "v", "size": size})),
            )
            .await;
        assert_eq!(status, 400, "{size}: {body}");
        assert_eq!(body["error"]["code"], "invalid_volume_size", "{body}");
    }
    let (status, body) = t
        .admin(
            Method::POST,
            "/v1/volumes",
            Some(json!({"name": "huge", "size": "200m"})),
        )
        .await;
    assert_eq!(status, 429, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("policy.volume_quota_bytes"));
    assert_eq!(t.stored_volumes(), 0, "nothing made");
    t.create("one", "40m").await;
    let (status, body) = t
        .admin(
            Method::POST,
            "/v1/volumes",
            Some(json!({"name": "one", "size": "20m"})),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["code"], "volume_exists");
    t.create("two", "40m").await;
    let (status, body) = t
        .admin(
            Method::POST,
            "/v1/volumes",
            Some(json!({"name": "three", "size": "16m"})),
        )
        .await;
    assert_eq!(status, 429, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("policy.volume_quota_count = 2"));
    assert_eq!(t.stored_volumes(), 2);

    let sandboxes = t.service.sandbox_count();
    for path in [
        "/proc/x",
        "/proc",
        "/workspace",
        "/etc/x",
        "/.sandboxd-agent",
        "/.sandboxd/x",
        "relative/x",
        "/workspace/../etc",
        "/dev/shm/x",
    ] {
        let (status, body) = t.open_with(json!([{"name": "one", "path": path}])).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["error"]["code"], "invalid_mount_path", "{body}");
    }
    let (status, body) = t
        .open_with(json!([{"name": "nope", "path": "/workspace/x"}]))
        .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = t
        .open_with(json!([{"name": "one", "path": "/tmp/a"}, {"name": "two", "path": "/tmp/a/b"}]))
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        t.service.sandbox_count(),
        sandboxes,
        "no sandbox was started"
    );
    let (_, sessions) = t.admin(Method::GET, "/v1/sessions", None).await;
    assert_eq!(
        sessions["sessions"].as_array().unwrap().len(),
        0,
        "{sessions}"
    );
}

#[tokio::test]
async fn another_tenants_volume_is_not_found_and_the_attempt_is_audited() {
    let (a, a_config) = tenant_token("vol-a");
    let (b, b_config) = tenant_token("vol-b");
    let t = start("", &format!("{a_config}{b_config}"));
    let (status, made) = t
        .call(
            &a,
            Method::POST,
            "/v1/volumes",
            Some(json!({"name": "secret", "size": "16m"})),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["tenant"], "vol-a");
    for (method, path) in [
        (Method::GET, "/v1/volumes/secret"),
        (Method::DELETE, "/v1/volumes/secret"),
        (Method::GET, "/v1/volumes/secret/files/content?path=x"),
    ] {
        let (status, body) = t.call(&b, method, path, None).await;
        assert_eq!(status, 404, "{path}: {body}");
    }
    let (status, body) = t
        .call(
            &b,
            Method::POST,
            "/v1/sessions",
            Some(json!({"runtime": "sh", "volumes": [{"name": "secret", "path": "/tmp/s"}]})),
        )
        .await;
    assert_eq!(status, 404, "{body}");
    let (_, listed) = t.call(&b, Method::GET, "/v1/volumes", None).await;
    assert_eq!(listed["volumes"].as_array().unwrap().len(), 0, "{listed}");
    let (_, listed) = t.admin(Method::GET, "/v1/volumes", None).await;
    assert_eq!(
        listed["volumes"].as_array().unwrap().len(),
        1,
        "the administrator sees all"
    );
    let (_, audit) = t.admin(Method::GET, "/v1/audit", None).await;
    let by_b: Vec<&Value> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["principal"] == "tenant:vol-b" || e["principal"] == "vol-b")
        .collect();
    for action in [
        "get_volume",
        "delete_volume",
        "read_volume_file",
        "mount_volume",
    ] {
        assert!(
            by_b.iter()
                .any(|e| e["action"] == action && e["session_id"] == "volume:secret"),
            "{action}: {audit}"
        );
    }
    // Each tenant names its own: b may have a "secret" of its own.
    let (status, body) = t
        .call(
            &b,
            Method::POST,
            "/v1/volumes",
            Some(json!({"name": "secret", "size": "16m"})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test]
async fn files_go_in_and_out_without_a_session_and_no_symlink_is_followed() {
    if !docker_only(
        "files without a session",
        "a claim is reached only from a pod (kubernetes_volumes.rs checks the refusal)",
    ) {
        return;
    }
    let t = start("", "");
    t.create("files", "32m").await;
    let payload: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let response = t
        .service
        .put("/v1/volumes/files/files/content?path=in/data.bin")
        .body(payload.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let written: Value = response.json().await.unwrap();
    assert_eq!(written["bytes"], payload.len());

    let id = t
        .open_mounted(json!([{"name": "files", "path": "/workspace/v"}]))
        .await;
    let seen = t
        .sh(&id, "ls -ln /workspace/v/in && wc -c < /workspace/v/in/data.bin && echo out > /workspace/v/result && ln -s /etc/passwd /workspace/v/link && ln -s / /workspace/v/root")
        .await;
    assert_eq!(seen["exit_code"], 0, "{seen}");
    let stdout = seen["stdout"].as_str().unwrap();
    assert!(
        stdout.contains(" 61000 ") && stdout.contains("3000000"),
        "{seen}"
    );
    let back = t
        .service
        .get("/v1/volumes/files/files/content?path=in/data.bin")
        .send()
        .await
        .unwrap();
    assert_eq!(back.status(), 200);
    assert_eq!(back.bytes().await.unwrap().to_vec(), payload);
    let result = t
        .service
        .get("/v1/volumes/files/files/content?path=result")
        .send()
        .await
        .unwrap();
    assert_eq!(result.text().await.unwrap(), "out\n");
    for path in ["link", "root/etc/passwd", "../../../../etc/passwd"] {
        let (status, body) = t
            .admin(
                Method::GET,
                &format!("/v1/volumes/files/files/content?path={path}"),
                None,
            )
            .await;
        assert_eq!(status, 403, "{path}: {body}");
        assert_eq!(body["error"]["code"], "path_refused", "{body}");
    }
    let response = t
        .service
        .put("/v1/volumes/files/files/content?path=root/tmp/escaped")
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    assert!(!Path::new("/tmp/escaped").exists());
    let (status, body) = t
        .admin(Method::GET, "/v1/volumes/files/files/content?path=in", None)
        .await;
    assert_eq!(status, 409, "{body}");
    // Past the cap: no space, said in the API's words. The volume is filled from inside
    // first, so the small upload is sent whole before the answer comes.
    let filled = t
        .sh(&id, "dd if=/dev/zero of=/workspace/v/fill bs=1M 2>&1; true")
        .await;
    assert!(
        filled["stdout"].as_str().unwrap().contains("No space left"),
        "{filled}"
    );
    let response = t
        .service
        .put("/v1/volumes/files/files/content?path=more")
        .body(vec![7u8; 1 << 20])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 507);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "no_space", "{body}");
}

#[tokio::test]
async fn a_crash_mid_create_or_mid_delete_is_repaired_and_volumes_come_back_after_a_reboot() {
    if !docker_only(
        "volume images after a crash and a reboot",
        "kubernetes_volumes.rs repairs claims",
    ) {
        return;
    }
    let mut t = start("", "");
    t.create("kept", "16m").await;
    let response = t
        .service
        .put("/v1/volumes/kept/files/content?path=note")
        .body("still here")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    t.create("half-made", "16m").await;
    t.create("half-deleted", "16m").await;
    let state_dir = t.service.state_dir.path().to_path_buf();
    t.service.crash_and_restart_with(|| {
        // The states a kill between the steps leaves: recorded but not marked ready, and
        // marked deleting with the data still there.
        let store = sandboxd_store::Store::open(&state_dir.join("sandboxd.db")).unwrap();
        for (name, state) in [
            ("half-made", sandboxd_store::VolumeState::Creating),
            ("half-deleted", sandboxd_store::VolumeState::Deleting),
        ] {
            let id = store.volume_named(None, name).unwrap().unwrap().id;
            store.set_volume_state(&id, state).unwrap();
        }
        // As after a reboot: nothing is mounted.
        for point in mounts_under(&state_dir) {
            assert!(std::process::Command::new("umount")
                .arg(&point)
                .status()
                .unwrap()
                .success());
        }
        // Data without a record, as a crash after the record went would leave.
        std::fs::create_dir_all(state_dir.join("volumes/0123abcd/mnt")).unwrap();
    });
    let (_, listed) = t.admin(Method::GET, "/v1/volumes", None).await;
    assert_eq!(common::names(&listed["volumes"]), ["kept"], "{listed}");
    assert_eq!(t.volume_dirs().len(), 1, "{:?}", t.volume_dirs());
    let response = t
        .service
        .get("/v1/volumes/kept/files/content?path=note")
        .send()
        .await
        .unwrap();
    assert_eq!(response.text().await.unwrap(), "still here");
    let id = t
        .open_mounted(json!([{"name": "kept", "path": "/workspace/kept"}]))
        .await;
    let read = t.sh(&id, "cat /workspace/kept/note").await;
    assert_eq!(read["stdout"], "still here", "{read}");
    // The names of volumes removed at start are free again.
    t.create("half-made", "16m").await;
}

/// `sandboxd ARGS` against the service; its stdout, failing the test with its stderr.
fn cli(t: &Volumes, args: &[&str]) -> (bool, String, String) {
    let output = std::process::Command::new(common::sandboxd_bin())
        .args(args)
        .env("SANDBOXD_URL", &t.service.url)
        .env("SANDBOXD_TOKEN", TOKEN)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn the_command_line_makes_lists_mounts_and_deletes_volumes() {
    let t = start("", "");
    let (ok, out, err) = cli(&t, &["volumes", "create", "cli-data", "24m", "--json"]);
    assert!(ok, "{err}");
    let made: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(made["size_bytes"], 24 << 20);
    let (ok, out, err) = cli(
        &t,
        &["open", "--runtime", "sh", "--volume", "cli-data:/tmp/d"],
    );
    assert!(ok, "{err}");
    let writer = out.trim().to_string();
    t.sh(&writer, "echo from-cli > /tmp/d/f").await;
    let (ok, out, err) = cli(
        &t,
        &[
            "open",
            "--runtime",
            "sh",
            "--volume",
            "cli-data:/workspace/d:ro",
        ],
    );
    assert!(ok, "{err}");
    let reader = out.trim().to_string();
    assert_eq!(
        t.sh(&reader, "cat /workspace/d/f").await["stdout"],
        "from-cli\n"
    );
    let (ok, out, err) = cli(&t, &["volumes", "list"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("cli-data") && out.contains(&writer) && out.contains(&reader),
        "{out}"
    );
    let (ok, _, err) = cli(&t, &["volumes", "delete", "cli-data"]);
    assert!(!ok, "refused while mounted");
    assert!(
        err.contains("volume_in_use") || err.contains("mounted"),
        "{err}"
    );
    let (ok, _, err) = cli(&t, &["open", "--volume", "cli-data:/tmp/x:rx"]);
    assert!(!ok && err.contains("is not ro or rw"), "{err}");
    t.close(&writer).await;
    t.close(&reader).await;
    let (ok, out, err) = cli(&t, &["volumes", "delete", "cli-data"]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "deleted cli-data");
    let (ok, _, err) = cli(&t, &["volumes", "show", "cli-data"]);
    assert!(!ok && err.contains("no volume named"), "{err}");
}
