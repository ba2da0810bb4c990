//! Volumes on the Kubernetes backend, on the real test cluster (scripts/k8s-up.sh; its
//! StorageClass `sandboxd-test` provisions an ext4 image of the claim's size per volume, as
//! block-backed classes do): a PersistentVolumeClaim per volume, labelled with the service
//! instance, mounted into the pods of the sessions that ask, owned by the sandbox's uid,
//! read-only where asked, kept while mounted, capped at its size, its use reported, removed
//! with the volume. Every service removes its pods and claims by label when it goes, failing
//! or not.
//! Ignored without a cluster, like the kubernetes suite; scripts/test.sh's kubernetes step
//! runs them.

mod common;

use common::{base_config, cluster, Kubernetes, TestService, TEST_NAMESPACE, TEST_STORAGE_CLASS};
use reqwest::Method;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

async fn admin(
    service: &TestService,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    service.call_as(common::TOKEN, method, path, body).await
}

/// Opens an sh session mounting `volumes`; its id, failing the test otherwise.
async fn open_mounted(service: &TestService, volumes: Value) -> String {
    let (status, body) = admin(
        service,
        Method::POST,
        "/v1/sessions",
        Some(json!({"runtime": "sh", "volumes": volumes})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_str().unwrap().to_string()
}

async fn close(service: &TestService, id: &str) {
    let (status, body) = admin(service, Method::DELETE, &format!("/v1/sessions/{id}"), None).await;
    assert_eq!(status, 200, "{body}");
}

/// The claim of the instance's only volume, as `kubectl get -o json` shows it.
fn only_claim(cluster: &Kubernetes, instance_id: &str) -> Value {
    let claims = cluster.claims(instance_id);
    assert_eq!(claims.len(), 1, "{claims:?}");
    let text = cluster.kubectl(&["get", "pvc", "-n", TEST_NAMESPACE, &claims[0], "-o", "json"]);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("pvc {}: {e}: {text}", claims[0]))
}

#[tokio::test]
#[ignore = "needs a cluster: scripts/test.sh's kubernetes step runs it"]
async fn a_volume_is_a_claim_its_data_outlives_sessions_and_it_goes_with_the_volume() {
    let Some(cluster) = cluster() else { return };
    let mut service = TestService::start(&base_config(4, ""));
    let started = Instant::now();
    let (status, created) = admin(
        &service,
        Method::POST,
        "/v1/volumes",
        Some(json!({"name": "data", "size": "64m"})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    // Figures for the report, not checks: the create waits for the claim to be bound.
    eprintln!("volume created (claim bound) in {:?}", started.elapsed());
    let claim = only_claim(&cluster, &service.instance_id);
    assert_eq!(claim["status"]["phase"], "Bound", "{claim}");
    assert_eq!(claim["spec"]["storageClassName"], TEST_STORAGE_CLASS);
    assert_eq!(claim["spec"]["accessModes"], json!(["ReadWriteOnce"]));
    assert_eq!(
        claim["spec"]["resources"]["requests"]["storage"],
        (64u64 << 20).to_string()
    );
    assert_eq!(claim["metadata"]["labels"]["org.sandboxd.managed"], "true");

    let started = Instant::now();
    let plain = service.open("sh").await;
    let without = started.elapsed();
    close(&service, &plain).await;
    let started = Instant::now();
    let writer = open_mounted(
        &service,
        json!([{"name": "data", "path": "/workspace/data"}]),
    )
    .await;
    eprintln!(
        "a session opened in {without:?} without a volume, {:?} with one (its first mount)",
        started.elapsed()
    );
    let pod = cluster.pod_json(&writer);
    assert_eq!(
        pod["spec"]["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v["persistentVolumeClaim"]["claimName"].as_str())
            .collect::<Vec<_>>(),
        [claim["metadata"]["name"].as_str().unwrap()],
        "{pod}"
    );
    let wrote = service
        .sh(
            &writer,
            "echo kept > /workspace/data/note && mkdir /workspace/data/d && ls -lnd /workspace/data /workspace/data/note /workspace/data/d",
        )
        .await;
    assert_eq!(wrote["exit_code"], 0, "{wrote}");
    let listing = wrote["stdout"].as_str().unwrap();
    assert!(
        listing.lines().all(|l| l.contains(" 61000 ")),
        "the sandbox's uid owns the volume's root and what it made: {listing}"
    );

    let (status, refused) = admin(&service, Method::DELETE, "/v1/volumes/data", None).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "volume_in_use");
    assert!(refused["error"]["message"]
        .as_str()
        .unwrap()
        .contains(&writer));
    assert_eq!(
        cluster.claims(&service.instance_id).len(),
        1,
        "kept while mounted"
    );

    // Without a session its files are out of the service's reach on Kubernetes, and it says why.
    let (status, unreachable) = admin(
        &service,
        Method::GET,
        "/v1/volumes/data/files/content?path=/note",
        None,
    )
    .await;
    assert_eq!(status, 400, "{unreachable}");
    assert_eq!(unreachable["error"]["code"], "volumes_unavailable");
    assert!(
        unreachable["error"]["message"]
            .as_str()
            .unwrap()
            .contains("PersistentVolumeClaim that only a pod can mount"),
        "{unreachable}"
    );
    // A snapshot leaves the volume out (shared, not copied), on a pod as on Docker.
    let (status, snapshot) = admin(
        &service,
        Method::POST,
        &format!("/v1/sessions/{writer}/snapshots"),
        Some(json!({"name": "without the volume"})),
    )
    .await;
    assert_eq!(status, 201, "{snapshot}");
    let (status, restored) = admin(
        &service,
        Method::POST,
        "/v1/sessions",
        Some(json!({"snapshot": snapshot["id"]})),
    )
    .await;
    assert_eq!(status, 201, "{restored}");
    let restored = restored["id"].as_str().unwrap();
    let copied = service
        .sh(restored, "ls -A /workspace/data 2>&1; echo done")
        .await;
    assert!(
        !copied["stdout"].as_str().unwrap().contains("note"),
        "{copied}"
    );
    close(&service, restored).await;
    close(&service, &writer).await;

    // A restart finds the claim again; two readers at once share it on the one node.
    service.crash_and_restart();
    let mut readers = Vec::new();
    for path in ["/tmp/data", "/home/user/data"] {
        let volumes = json!([{"name": "data", "path": path, "read_only": true}]);
        readers.push((open_mounted(&service, volumes).await, path));
    }
    for (reader, path) in &readers {
        let read = service.sh(reader, &format!("cat {path}/note")).await;
        assert_eq!(read["stdout"], "kept\n", "{read}");
        let refused = service.sh(reader, &format!("echo x > {path}/other")).await;
        assert_ne!(refused["exit_code"], 0, "{refused}");
        assert!(
            refused["stderr"].as_str().unwrap().contains("Read-only"),
            "{refused}"
        );
    }
    for (reader, _) in &readers {
        close(&service, reader).await;
    }

    let (status, deleted) = admin(&service, Method::DELETE, "/v1/volumes/data", None).await;
    assert_eq!(status, 200, "{deleted}");
    // The claim goes once the closed sessions' pods are gone (it is protected while in use).
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut left = vec![];
    while Instant::now() < deadline {
        let text = cluster.kubectl(&[
            "get",
            "pvc",
            "-n",
            TEST_NAMESPACE,
            &format!("-lorg.sandboxd.instance={}", service.instance_id),
            "-o",
            "name",
        ]);
        left = text.lines().map(str::to_string).collect();
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(
        left.is_empty(),
        "the claim is removed with the volume: {left:?}"
    );
    let (_, listed) = admin(&service, Method::GET, "/v1/volumes", None).await;
    assert_eq!(listed["volumes"], json!([]), "{listed}");
}

#[tokio::test]
#[ignore = "needs a cluster: scripts/test.sh's kubernetes step runs it"]
async fn the_cap_stops_a_writer_with_no_space_and_the_volume_reports_what_it_holds() {
    let Some(cluster) = cluster() else { return };
    let service = TestService::start(&base_config(4, ""));
    let (status, created) = admin(
        &service,
        Method::POST,
        "/v1/volumes",
        Some(json!({"name": "small", "size": "16m"})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(
        created["used_bytes"],
        Value::Null,
        "no pod has mounted it yet"
    );
    let id = open_mounted(
        &service,
        json!([{"name": "small", "path": "/workspace/small"}]),
    )
    .await;
    let filled = service
        .sh(
            &id,
            "dd if=/dev/zero of=/workspace/small/big bs=1M count=64 2>&1; echo rc=$?",
        )
        .await;
    let out = filled["stdout"].as_str().unwrap();
    assert!(out.contains("No space left on device"), "{out}");
    assert!(!out.contains("rc=0"), "{out}");

    // The host's disk gave the volume no more than its size: the class's image of it.
    let claim = only_claim(&cluster, &service.instance_id);
    let volume = claim["spec"]["volumeName"].as_str().unwrap();
    let path = cluster.kubectl(&["get", "pv", volume, "-o", "jsonpath={.spec.local.path}"]);
    let image = std::fs::metadata(format!("{}.img", path.trim()))
        .unwrap_or_else(|e| panic!("the image of {volume} at {path}.img: {e}"));
    let allocated = std::os::unix::fs::MetadataExt::blocks(&image) * 512;
    eprintln!("a full 16 MiB volume takes {allocated} bytes of the host's disk");
    assert!(
        allocated <= 16 << 20,
        "the host's disk gave it {allocated} bytes"
    );
    assert!(
        allocated > 8 << 20,
        "the writes landed in the volume: {allocated}"
    );

    // What it holds, as the kubelet measures the mounted claim (every 5 s on the test cluster).
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut seen = Value::Null;
    while Instant::now() < deadline {
        let (status, got) = admin(&service, Method::GET, "/v1/volumes/small", None).await;
        assert_eq!(status, 200, "{got}");
        seen = got["used_bytes"].clone();
        if seen.as_u64().is_some_and(|used| used > 8 << 20) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let used = seen.as_u64().unwrap_or(0);
    assert!(
        used > 8 << 20 && used <= 16 << 20,
        "used_bytes of the full 16 MiB volume: {seen}"
    );
    // Once no pod mounts it nothing can write to it: the last figure stays.
    close(&service, &id).await;
    let (_, listed) = admin(&service, Method::GET, "/v1/volumes", None).await;
    let kept = listed["volumes"][0]["used_bytes"].as_u64().unwrap_or(0);
    assert!(kept > 8 << 20, "{listed}");
}

#[tokio::test]
#[ignore = "needs a cluster: scripts/test.sh's kubernetes step runs it"]
async fn a_bad_mount_starts_nothing_and_a_crash_mid_create_or_mid_delete_is_repaired_at_start() {
    let Some(cluster) = cluster() else { return };
    let mut service = TestService::start(&base_config(4, ""));
    let (status, created) = admin(
        &service,
        Method::POST,
        "/v1/volumes",
        Some(json!({"name": "scratch", "size": "16m"})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let (status, refused) = admin(
        &service,
        Method::POST,
        "/v1/sessions",
        Some(json!({"runtime": "sh", "volumes": [{"name": "scratch", "path": "/proc/x"}]})),
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["code"], "invalid_mount_path");
    assert_eq!(service.sandbox_count(), 0, "no pod was started");

    for name in ["half-made", "kept"] {
        let (status, created) = admin(
            &service,
            Method::POST,
            "/v1/volumes",
            Some(json!({"name": name, "size": "16m"})),
        )
        .await;
        assert_eq!(status, 201, "{created}");
    }

    // A crash between marking it deleting and removing its claim, and one between making a
    // claim and marking its volume ready: the start finishes the delete and undoes the
    // create, claim and record, and keeps the volume that was whole.
    let state_dir = service.state_dir.path().to_path_buf();
    service.crash_and_restart_with(|| {
        let store = sandboxd_store::Store::open(&state_dir.join("sandboxd.db")).unwrap();
        for (name, state) in [
            ("scratch", sandboxd_store::VolumeState::Deleting),
            ("half-made", sandboxd_store::VolumeState::Creating),
        ] {
            let id = store.volume_named(None, name).unwrap().unwrap().id;
            store.set_volume_state(&id, state).unwrap();
        }
    });
    let (_, listed) = admin(&service, Method::GET, "/v1/volumes", None).await;
    assert_eq!(common::names(&listed["volumes"]), ["kept"], "{listed}");
    assert_eq!(
        cluster.claims(&service.instance_id).len(),
        1,
        "the claims of a volume half deleted and one half made are removed at start"
    );
    // The name of the volume undone is free again.
    let (status, created) = admin(
        &service,
        Method::POST,
        "/v1/volumes",
        Some(json!({"name": "half-made", "size": "16m"})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
}
