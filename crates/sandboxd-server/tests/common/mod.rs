//! A sandboxd service in memory for fast tests of the core and its REST face: the real router
//! and core over the in-memory [`FakeBackend`] and a store in a temporary directory, driven
//! with `tower::ServiceExt::oneshot` (no socket, no container engine). Each test builds its
//! own service, so tests run in parallel.

#![allow(dead_code)] // each test binary uses a different part of the harness

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use sandboxd_config::{to_hex, token_sha256, Config};
use sandboxd_core::fake::FakeBackend;
use sandboxd_core::Core;
use sandboxd_store::Store;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower::ServiceExt;

/// The service token: the administrator's.
pub const TOKEN: &str = "test-token-0123456789abcdef";
/// Tenant tokens (the config holds only their SHA-256).
pub const ALPHA_TOKEN: &str = "alpha-token-0123456789abcdef";
pub const BETA_TOKEN: &str = "beta-token-0123456789abcdef";

/// The images the fake platform has; `ghost`'s is not among them.
pub const SH_IMAGE: &str = "test/sh:1";
pub const PY_IMAGE: &str = "test/py:1";

/// A config with the runtimes `sh` (default), `py` and `ghost` (its image is missing);
/// `extra` is appended (policy, tenants). `sh_pool` is the warm pool size of `sh`.
pub fn config(max_sessions: u32, sh_pool: u32, extra: &str) -> String {
    format!(
        r#"
token = "{TOKEN}"
default_runtime = "sh"
max_sessions = {max_sessions}

[runtimes.sh]
image = "{SH_IMAGE}"
pool_size = {sh_pool}

[runtimes.py]
image = "{PY_IMAGE}"
interpreter = ["python3"]

[runtimes.ghost]
image = "test/ghost:never"

{extra}
"#
    )
}

/// The TOML of a tenant with its token, quota and (when given) allowed runtimes.
pub fn tenant(name: &str, token: &str, max_sessions: u32, runtimes: Option<&[&str]>) -> String {
    let runtimes = runtimes.map_or(String::new(), |list| {
        let quoted: Vec<String> = list.iter().map(|r| format!("\"{r}\"")).collect();
        format!("runtimes = [{}]\n", quoted.join(", "))
    });
    format!(
        "[tenants.{name}]\ntoken_sha256 = \"{}\"\nmax_sessions = {max_sessions}\n{runtimes}\n",
        to_hex(&token_sha256(token))
    )
}

/// Tenants `alpha` (quota 2, runtime `sh` only) and `beta` (quota 2, every runtime).
pub fn two_tenants() -> String {
    format!(
        "{}{}",
        tenant("alpha", ALPHA_TOKEN, 2, Some(&["sh"])),
        tenant("beta", BETA_TOKEN, 2, None)
    )
}

pub struct TestService {
    pub core: Core,
    pub backend: Arc<FakeBackend>,
    pub router: Router,
    pub dir: tempfile::TempDir,
}

impl TestService {
    /// A service with the given config over a fresh fake platform and store.
    pub fn start(config_toml: &str) -> TestService {
        let dir = tempfile::tempdir().unwrap();
        let backend = FakeBackend::with_images(&[SH_IMAGE, PY_IMAGE]);
        Self::over(config_toml, dir, backend)
    }

    /// A service over an existing state directory and platform, as after a restart.
    pub fn over(
        config_toml: &str,
        dir: tempfile::TempDir,
        backend: Arc<FakeBackend>,
    ) -> TestService {
        let config = Config::parse(config_toml).expect("the test config is valid");
        let store = Store::open(&dir.path().join("sandboxd.db")).unwrap();
        let core = Core::new(config, TOKEN.into(), backend.clone(), Arc::new(store));
        let router = sandboxd_server::app(core.clone(), "127.0.0.1:7717".parse().unwrap(), &[]);
        TestService {
            core,
            backend,
            router,
            dir,
        }
    }

    /// The default service: 4 sessions, no pool, no tenants.
    pub fn default_service() -> TestService {
        Self::start(&config(4, 0, ""))
    }

    /// Stops this service (dropping its core and store) and hands back its state directory and
    /// platform, for a restart.
    pub fn shut_down(self) -> (tempfile::TempDir, Arc<FakeBackend>) {
        (self.dir, self.backend)
    }

    pub fn admin(&self) -> Client {
        self.client(TOKEN)
    }

    pub fn client(&self, token: &str) -> Client {
        Client {
            router: self.router.clone(),
            token: Some(token.to_string()),
            client_name: None,
            accept: None,
            peer: None,
            api_key: None,
        }
    }

    /// A client with no `Authorization` header at all.
    pub fn anonymous(&self) -> Client {
        Client {
            router: self.router.clone(),
            token: None,
            client_name: None,
            accept: None,
            peer: None,
            api_key: None,
        }
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.admin().get(path).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.admin().post(path, body).await
    }

    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        self.admin().delete(path).await
    }

    /// Opens a session of a runtime (the default one with `None`) as the administrator.
    pub async fn open(&self, runtime: Option<&str>) -> String {
        self.admin().open(runtime).await
    }

    pub fn creates(&self) -> u32 {
        self.backend.creates.load(Ordering::SeqCst)
    }

    pub fn set_create_delay(&self, delay: Duration) {
        *self.backend.create_delay.lock().unwrap() = delay;
    }

    /// Polls a session until it has ended, for at most `within`; returns its last record.
    pub async fn wait_for_end(&self, id: &str, within: Duration) -> Value {
        let path = format!("/v1/sessions/{id}");
        let deadline = Instant::now() + within;
        loop {
            let (_, info) = self.get(&path).await;
            if info["state"] == "ended" || Instant::now() > deadline {
                return info;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Waits until `condition` holds, for at most `within`; returns whether it did.
pub async fn eventually(within: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    condition()
}

/// Takes a snapshot named `name` of session `id` as `client`.
pub async fn snapshot(client: &Client, id: &str, name: &str) -> (StatusCode, Value) {
    client
        .post(
            &format!("/v1/sessions/{id}/snapshots"),
            json!({"name": name}),
        )
        .await
}

/// How many snapshots the service keeps on disk.
pub fn kept(service: &TestService) -> usize {
    std::fs::read_dir(service.dir.path().join("snapshots")).map_or(0, |d| d.count())
}

/// Who sends the requests: a token (or none), the interface it names and the peer address.
#[derive(Clone)]
pub struct Client {
    router: Router,
    token: Option<String>,
    client_name: Option<String>,
    peer: Option<SocketAddr>,
    accept: Option<String>,
    api_key: Option<String>,
}

/// An answer: its status, headers and body.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON; `Value::Null` when it is empty or not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

impl Client {
    /// The same client, naming its interface in `X-Sandboxd-Client`.
    pub fn via(mut self, client_name: &str) -> Client {
        self.client_name = Some(client_name.to_string());
        self
    }

    /// The same client, sending `Accept: accept`.
    pub fn accepting(mut self, accept: &str) -> Client {
        self.accept = Some(accept.to_string());
        self
    }

    /// The same client, sending `X-API-Key: key` as the E2B SDKs do.
    pub fn with_api_key(mut self, key: &str) -> Client {
        self.api_key = Some(key.to_string());
        self
    }

    /// The same client, seen by the server as connecting from `peer`.
    pub fn at_peer(mut self, peer: SocketAddr) -> Client {
        self.peer = Some(peer);
        self
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Answer {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "localhost");
        if let Some(token) = &self.token {
            request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        if let Some(name) = &self.client_name {
            request = request.header(sandboxd_api::CLIENT_HEADER, name);
        }
        if let Some(content_type) = content_type {
            request = request.header(header::CONTENT_TYPE, content_type);
        }
        if let Some(accept) = &self.accept {
            request = request.header(header::ACCEPT, accept);
        }
        if let Some(key) = &self.api_key {
            request = request.header("x-api-key", key);
        }
        let mut request = request.body(Body::from(body)).unwrap();
        if let Some(peer) = self.peer {
            request.extensions_mut().insert(ConnectInfo(peer));
        }
        let response = tokio::time::timeout(
            Duration::from_secs(20),
            self.router.clone().oneshot(request),
        )
        .await
        .expect("the service answers within 20 s")
        .unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        Answer {
            status,
            headers,
            body: body.to_vec(),
        }
    }

    /// A GET whose answer's head is returned and whose body (an endless stream) is dropped.
    pub async fn get_head(&self, path: &str) -> (StatusCode, HeaderMap) {
        let mut request = Request::builder()
            .uri(path)
            .header(header::HOST, "localhost");
        if let Some(token) = &self.token {
            request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = request.body(Body::empty()).unwrap();
        let response = self.router.clone().oneshot(request).await.unwrap();
        (response.status(), response.headers().clone())
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let answer = self.send(Method::GET, path, None, Vec::new()).await;
        (answer.status, answer.json())
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let body = serde_json::to_vec(&body).unwrap();
        let answer = self
            .send(Method::POST, path, Some("application/json"), body)
            .await;
        (answer.status, answer.json())
    }

    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        let answer = self.send(Method::DELETE, path, None, Vec::new()).await;
        (answer.status, answer.json())
    }

    pub async fn put_bytes(&self, path: &str, bytes: &[u8]) -> (StatusCode, Value) {
        let answer = self
            .send(
                Method::PUT,
                path,
                Some("application/octet-stream"),
                bytes.to_vec(),
            )
            .await;
        (answer.status, answer.json())
    }

    /// Asks to open a session of a runtime (the default one with `None`).
    pub async fn create(&self, runtime: Option<&str>) -> (StatusCode, Value) {
        let body = match runtime {
            Some(runtime) => json!({ "runtime": runtime }),
            None => json!({}),
        };
        self.post("/v1/sessions", body).await
    }

    /// Opens a session and returns its id, failing the test with the service's message.
    pub async fn open(&self, runtime: Option<&str>) -> String {
        let (status, body) = self.create(runtime).await;
        assert_eq!(status, StatusCode::CREATED, "create session failed: {body}");
        body["id"].as_str().unwrap().to_string()
    }

    /// Runs a shell command in a session.
    pub async fn exec(&self, id: &str, command: &str) -> (StatusCode, Value) {
        self.post(
            &format!("/v1/sessions/{id}/exec"),
            json!({ "command": command }),
        )
        .await
    }
}

/// Asserts an API error: its status and its code, and that it says something.
#[track_caller]
pub fn assert_error(answer: &(StatusCode, Value), status: StatusCode, code: &str) {
    let (got, body) = answer;
    assert_eq!(*got, status, "status of {body}");
    assert_eq!(body["error"]["code"], code, "code of {body}");
    let message = body["error"]["message"].as_str().unwrap_or("");
    assert!(!message.is_empty(), "the error says nothing: {body}");
}
