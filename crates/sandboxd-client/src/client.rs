//! The client itself: the service's URL, the token, the interface it speaks for, its timeouts,
//! and the calls of the sessions, runtimes, files and logs.

use crate::error::ClientError;
use crate::streams::{FileDownload, RuntimeBuild};
use reqwest::Body;
use reqwest::{Method, RequestBuilder, Response, StatusCode, Url};
use sandboxd_api::{
    ActivityList, AuditList, ConfigView, CreateSession, ErrorBody, ExecRequest, ExecResult,
    FileDeleted, FileList, FileWritten, KilledProcesses, Policy, RuntimeList, SessionInfo,
    SessionList, Stats, CLIENT_HEADER,
};
use serde::de::DeserializeOwned;
use std::time::Duration;

/// The address `sandboxd serve` listens on by default.
pub const DEFAULT_URL: &str = "http://127.0.0.1:7717";

/// Time to establish a connection: the service is local or on a private network.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Time for any request that does not run a command, unless the client is given another.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Time an exec may take beyond its own timeout (the service's grace to kill and report).
const EXEC_GRACE: Duration = Duration::from_secs(60);

/// Which first-party interface a client is, as the activity log shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    Cli,
    Mcp,
}

impl Interface {
    pub fn as_str(self) -> &'static str {
        match self {
            Interface::Cli => "cli",
            Interface::Mcp => "mcp",
        }
    }
}

/// A client for one service, with one token. Cheap to clone: clones share connections.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: Url,
    pub(crate) token: String,
    pub(crate) interface: Interface,
    pub(crate) request_timeout: Duration,
}

/// Never shows the token: it is a root credential.
impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.base.as_str())
            .field("interface", &self.interface)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client for the service at `base_url` (e.g. `http://127.0.0.1:7717`). Two common
    /// mistakes are corrected: a URL without `http://`, and one ending in the API's `/v1`.
    pub fn new(
        base_url: &str,
        token: impl Into<String>,
        interface: Interface,
    ) -> Result<Client, ClientError> {
        Self::with_timeouts(base_url, token, interface, CONNECT_TIMEOUT, REQUEST_TIMEOUT)
    }

    /// [`Client::new`] with other timeouts: to connect, and for any request that does not run
    /// a command, stream output or transfer files.
    pub fn with_timeouts(
        base_url: &str,
        token: impl Into<String>,
        interface: Interface,
        connect_timeout: Duration,
        request_timeout: Duration,
    ) -> Result<Client, ClientError> {
        let invalid = |reason: &str| ClientError::InvalidUrl {
            url: base_url.to_string(),
            reason: reason.to_string(),
        };
        let trimmed = base_url.trim();
        let with_scheme = if trimmed.contains("://") {
            trimmed.to_string()
        } else {
            format!("http://{trimmed}")
        };
        let mut base = Url::parse(&with_scheme).map_err(|e| invalid(&e.to_string()))?;
        match base.scheme() {
            "http" => {}
            "https" => return Err(invalid("https is not supported; the service serves plain HTTP on localhost or a private network")),
            _ => return Err(invalid("use an http:// URL such as http://127.0.0.1:7717")),
        }
        if base.cannot_be_a_base() || base.host().is_none() {
            return Err(invalid("use an http:// URL such as http://127.0.0.1:7717"));
        }
        // The client adds `/v1` itself.
        let path = base.path().trim_end_matches('/').to_string();
        match path.strip_suffix("/v1") {
            Some(root) => base.set_path(root),
            None if path.is_empty() => {}
            None => {
                return Err(invalid(&format!(
                    "the URL is the service's root, without a path (drop {path:?}), e.g. http://127.0.0.1:7717"
                )))
            }
        }
        if base.query().is_some() || base.fragment().is_some() {
            return Err(invalid("the URL takes no query or fragment"));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(connect_timeout.min(request_timeout))
            .build()
            .map_err(|e| invalid(&e.to_string()))?;
        Ok(Client {
            http,
            base,
            token: token.into(),
            interface,
            request_timeout,
        })
    }

    /// The same client (and connections) with another token.
    pub fn with_token(&self, token: impl Into<String>) -> Client {
        Client {
            token: token.into(),
            ..self.clone()
        }
    }

    pub fn base_url(&self) -> &str {
        self.base.as_str().trim_end_matches('/')
    }

    /// `GET /v1/runtimes`: the allowlist in force.
    pub async fn runtimes(&self) -> Result<RuntimeList, ClientError> {
        self.send(self.request(Method::GET, &["runtimes"])).await
    }

    /// `POST /v1/runtimes/{name}/build`: has the service make the runtime's image available
    /// now (pulled, or built from its recipe) and follows it. Not timed here: the service
    /// bounds a build (`build.timeout_secs`).
    pub async fn build_runtime(&self, name: &str) -> Result<RuntimeBuild, ClientError> {
        let request = self.untimed_request(Method::POST, &["runtimes", name, "build"]);
        Ok(RuntimeBuild {
            response: self.response(request).await?,
            base_url: self.base_url().to_string(),
            pending: Vec::new(),
        })
    }

    /// `GET /v1/policy`.
    pub async fn policy(&self) -> Result<Policy, ClientError> {
        self.send(self.request(Method::GET, &["policy"])).await
    }

    /// `GET /v1/config`: the config in force, token redacted.
    pub async fn config(&self) -> Result<ConfigView, ClientError> {
        self.send(self.request(Method::GET, &["config"])).await
    }

    /// `GET /v1/stats`.
    pub async fn stats(&self) -> Result<Stats, ClientError> {
        self.send(self.request(Method::GET, &["stats"])).await
    }

    /// `POST /v1/sessions`: opens a session. It waits as long as the service takes: the
    /// first session of a runtime may have its image pulled or built first.
    pub async fn create_session(
        &self,
        request: &CreateSession,
    ) -> Result<SessionInfo, ClientError> {
        let request = self
            .untimed_request(Method::POST, &["sessions"])
            .json(request);
        self.send(request).await
    }

    /// `GET /v1/sessions`: the running sessions, and the most recently ended ones too when
    /// `include_ended`.
    pub async fn list_sessions(&self, include_ended: bool) -> Result<SessionList, ClientError> {
        let mut request = self.request(Method::GET, &["sessions"]);
        if include_ended {
            request = request.query(&[("include_ended", "true")]);
        }
        self.send(request).await
    }

    /// `GET /v1/sessions/{id}`.
    pub async fn session(&self, id: &str) -> Result<SessionInfo, ClientError> {
        self.send(self.request(Method::GET, &["sessions", id]))
            .await
    }

    /// `DELETE /v1/sessions/{id}`: closes the session at once.
    pub async fn close_session(&self, id: &str) -> Result<SessionInfo, ClientError> {
        self.send(self.request(Method::DELETE, &["sessions", id]))
            .await
    }

    /// `DELETE /v1/sessions/{id}/processes`: kills every process in the sandbox, also what
    /// left its command's process group; the session stays open.
    pub async fn kill_all_processes(&self, id: &str) -> Result<KilledProcesses, ClientError> {
        self.send(self.request(Method::DELETE, &["sessions", id, "processes"]))
            .await
    }

    /// `POST /v1/sessions/{id}/exec`: runs one command to completion. The request waits as long
    /// as the command may run (its `timeout_secs`, or the service's default).
    pub async fn exec(&self, id: &str, request: &ExecRequest) -> Result<ExecResult, ClientError> {
        self.send(self.exec_request(id, request)).await
    }

    /// The request of `POST /v1/sessions/{id}/exec`, timed by the command's own timeout.
    pub(crate) fn exec_request(&self, id: &str, request: &ExecRequest) -> RequestBuilder {
        // Without a timeout of its own, the command is bounded by the service's default.
        let mut builder = self.untimed_request(Method::POST, &["sessions", id, "exec"]);
        if let Some(secs) = request.timeout_secs {
            builder = builder.timeout(Duration::from_secs(secs) + EXEC_GRACE);
        }
        builder.json(request)
    }

    /// `GET /v1/sessions/{id}/activity`: the session's activity log, newest first.
    pub async fn activity(&self, id: &str) -> Result<ActivityList, ClientError> {
        self.send(self.request(Method::GET, &["sessions", id, "activity"]))
            .await
    }

    /// `GET /v1/audit`: refused cross-tenant attempts, newest first, at most `limit` (the
    /// service's cap when `None`). Administrator only.
    pub async fn audit(&self, limit: Option<u32>) -> Result<AuditList, ClientError> {
        let mut request = self.request(Method::GET, &["audit"]);
        if let Some(limit) = limit {
            request = request.query(&[("limit", limit)]);
        }
        self.send(request).await
    }

    /// `GET /v1/sessions/{id}/files?path=DIR`: a directory's entries. A relative path is
    /// relative to the sandbox's working directory.
    pub async fn list_files(&self, id: &str, path: &str) -> Result<FileList, ClientError> {
        let request = self
            .request(Method::GET, &["sessions", id, "files"])
            .query(&[("path", path)]);
        self.send(request).await
    }

    /// `GET /v1/sessions/{id}/files/content?path=FILE`: a file's bytes, to be read in chunks.
    /// Transfers are bounded by the service (each step of one), not by a client timeout.
    pub async fn read_file(&self, id: &str, path: &str) -> Result<FileDownload, ClientError> {
        let request = self
            .untimed_request(Method::GET, &["sessions", id, "files", "content"])
            .query(&[("path", path)]);
        let response = self.response(request).await?;
        Ok(FileDownload {
            response,
            base_url: self.base_url().to_string(),
        })
    }

    /// `PUT /v1/sessions/{id}/files/content?path=FILE&mode=MODE`: writes a file (replacing it
    /// whole), creating missing parent directories, with `mode`'s permission bits (`0o777` at
    /// most; the service's 0644 without).
    pub async fn write_file(
        &self,
        id: &str,
        path: &str,
        mode: Option<u32>,
        contents: impl Into<Body>,
    ) -> Result<FileWritten, ClientError> {
        let mut request = self
            .untimed_request(Method::PUT, &["sessions", id, "files", "content"])
            .query(&[("path", path)]);
        if let Some(mode) = mode {
            request = request.query(&[("mode", format!("{mode:04o}"))]);
        }
        let request = request
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .body(contents);
        self.send(request).await
    }

    /// `DELETE /v1/sessions/{id}/files?path=PATH`: deletes a file, or a directory and all in
    /// it when `recursive`.
    pub async fn delete_file(
        &self,
        id: &str,
        path: &str,
        recursive: bool,
    ) -> Result<FileDeleted, ClientError> {
        let mut request = self
            .request(Method::DELETE, &["sessions", id, "files"])
            .query(&[("path", path)]);
        if recursive {
            request = request.query(&[("recursive", "true")]);
        }
        self.send(request).await
    }

    /// A request to `/v1/<segments>` with the client's request timeout.
    pub(crate) fn request(&self, method: Method, segments: &[&str]) -> RequestBuilder {
        self.untimed_request(method, segments)
            .timeout(self.request_timeout)
    }

    /// The error for an answer that did not come within the request timeout.
    pub(crate) fn timed_out(&self) -> ClientError {
        ClientError::Timeout {
            url: self.base_url().to_string(),
            cause: format!("no answer within {:?}", self.request_timeout),
        }
    }

    /// The URL of `/v1/<segments>`, each segment percent-encoded.
    pub(crate) fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .expect("checked in Client::new: an http URL is a base")
            .pop_if_empty()
            .push("v1")
            .extend(segments);
        url
    }

    /// A request to `/v1/<segments>`, each segment percent-encoded (a session id from a user
    /// cannot reach another route), with the token and the interface.
    pub(crate) fn untimed_request(&self, method: Method, segments: &[&str]) -> RequestBuilder {
        self.http
            .request(method, self.url(segments))
            .bearer_auth(&self.token)
            .header(CLIENT_HEADER, self.interface.as_str())
    }

    /// Sends a request and reads a JSON answer, or the service's error.
    pub(crate) async fn send<T: DeserializeOwned>(
        &self,
        request: RequestBuilder,
    ) -> Result<T, ClientError> {
        let response = self.response(request).await?;
        let status = response.status().as_u16();
        let url = response.url().to_string();
        let body = response
            .bytes()
            .await
            .map_err(|e| ClientError::from_reqwest(self.base_url(), e))?;
        serde_json::from_slice(&body).map_err(|e| ClientError::UnexpectedResponse {
            url,
            status,
            detail: format!("the body is not the JSON the API promises: {e}"),
        })
    }

    /// Sends a request; a successful response is returned unread, any other becomes the
    /// service's error.
    pub(crate) async fn response(&self, request: RequestBuilder) -> Result<Response, ClientError> {
        let response = request
            .send()
            .await
            .map_err(|e| ClientError::from_reqwest(self.base_url(), e))?;
        let status = response.status();
        if status.is_success() || status == StatusCode::SWITCHING_PROTOCOLS {
            return Ok(response);
        }
        let url = response.url().to_string();
        let body = response
            .bytes()
            .await
            .map_err(|e| ClientError::from_reqwest(self.base_url(), e))?;
        Err(self.error_from(status, url, &body))
    }

    pub(crate) fn error_from(&self, status: StatusCode, url: String, body: &[u8]) -> ClientError {
        if status == StatusCode::UNAUTHORIZED {
            return ClientError::Unauthorized {
                url: self.base_url().to_string(),
            };
        }
        match serde_json::from_slice::<ErrorBody>(body) {
            Ok(ErrorBody { error }) => ClientError::from_detail(status.as_u16(), error),
            Err(_) => ClientError::UnexpectedResponse {
                url,
                status: status.as_u16(),
                detail: String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned(),
            },
        }
    }
}
