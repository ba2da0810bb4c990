//! The volumes suite's service: one whose volumes' host mounts go with it, and its calls. On
//! Kubernetes (the kubernetes step runs the suite there too) its volumes are claims.

use crate::common::{base_config, kubernetes, on_kubernetes, TestService, TOKEN};
use reqwest::Method;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A service whose volumes' mounts on the host are undone when it goes, failing or not, so
/// its state directory can be removed.
pub struct Volumes {
    pub service: TestService,
    /// The runtime sessions are opened with.
    pub runtime: &'static str,
}

impl Drop for Volumes {
    fn drop(&mut self) {
        for point in mounts_under(self.service.state_dir.path()) {
            let _ = std::process::Command::new("umount")
                .args(["-l", &point])
                .status();
        }
    }
}

/// The mount points below `dir`, from this process's mount table.
pub fn mounts_under(dir: &Path) -> Vec<String> {
    let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let prefix = format!("{}/", dir.display());
    table
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .filter(|point| point.starts_with(&prefix))
        .map(str::to_string)
        .collect()
}

pub fn start(policy: &str, tenants: &str) -> Volumes {
    Volumes {
        service: TestService::start(&format!("{}{tenants}", base_config(8, policy))),
        runtime: "sh",
    }
}

impl Volumes {
    pub async fn call(
        &self,
        token: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        self.service.call_as(token, method, path, body).await
    }

    pub async fn admin(&self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        self.call(TOKEN, method, path, body).await
    }

    pub async fn create(&self, name: &str, size: &str) -> Value {
        let (status, body) = self
            .admin(
                Method::POST,
                "/v1/volumes",
                Some(json!({"name": name, "size": size})),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        body
    }

    /// Opens a session of the runtime with `volumes`; the status and body.
    pub async fn open_with(&self, volumes: Value) -> (u16, Value) {
        self.admin(
            Method::POST,
            "/v1/sessions",
            Some(json!({"runtime": self.runtime, "volumes": volumes})),
        )
        .await
    }

    pub async fn open_mounted(&self, volumes: Value) -> String {
        let (status, body) = self.open_with(volumes).await;
        assert_eq!(status, 201, "{body}");
        body["id"].as_str().unwrap().to_string()
    }

    pub async fn sh(&self, id: &str, command: &str) -> Value {
        let (status, body) = self.service.exec(id, json!({"command": command})).await;
        assert_eq!(status, 200, "{command}: {body}");
        body
    }

    pub async fn close(&self, id: &str) {
        let (status, body) = self
            .admin(Method::DELETE, &format!("/v1/sessions/{id}"), None)
            .await;
        assert_eq!(status, 200, "{body}");
    }

    /// The session's activity log has the mount entry `target` (`NAME at PATH`).
    pub async fn assert_mount_logged(&self, id: &str, target: &str) {
        let (_, activity) = self
            .admin(Method::GET, &format!("/v1/sessions/{id}/activity"), None)
            .await;
        assert!(
            activity["entries"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["action"] == "mount_volume" && e["target"] == target),
            "{activity}"
        );
    }

    /// The volume mounted read-only at `path` has `note` holding "kept", and refuses a write.
    pub async fn assert_read_only_with_note(&self, id: &str, path: &str) {
        let read = self.sh(id, &format!("cat {path}/note")).await;
        assert_eq!(read["stdout"], "kept\n", "{read}");
        let refused = self.sh(id, &format!("echo x > {path}/other")).await;
        assert_ne!(refused["exit_code"], 0, "{refused}");
        assert!(
            refused["stderr"].as_str().unwrap().contains("Read-only"),
            "{refused}"
        );
    }

    /// How many volumes have storage: their directories in the state directory on Docker,
    /// their claims not being deleted on Kubernetes.
    pub fn stored_volumes(&self) -> usize {
        match kubernetes() {
            Some(cluster) => cluster.claims(&self.service.instance_id).len(),
            None => self.volume_dirs().len(),
        }
    }

    /// The volume's `used_bytes`: at once on Docker (the service reads its filesystem); on
    /// Kubernetes once the kubelet has measured it for a pod that mounts it (every 5 s on the
    /// test cluster), failing the test after a minute without it.
    pub async fn used_bytes(&self, name: &str) -> u64 {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (status, shown) = self
                .admin(Method::GET, &format!("/v1/volumes/{name}"), None)
                .await;
            assert_eq!(status, 200, "{shown}");
            if let Some(used) = shown["used_bytes"].as_u64() {
                return used;
            }
            assert!(
                on_kubernetes() && Instant::now() < deadline,
                "no used_bytes: {shown}"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The volumes' directories in the state directory (Docker's).
    pub fn volume_dirs(&self) -> Vec<PathBuf> {
        match std::fs::read_dir(self.service.state_dir.path().join("volumes")) {
            Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
            Err(_) => Vec::new(),
        }
    }
}
