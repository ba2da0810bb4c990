//! The ports calls: list a session's listening ports, and make, list and revoke share links.
//! (The proxy itself is plain HTTP at `/v1/sessions/{id}/ports/{port}/...`.)

use crate::client::Client;
use crate::error::ClientError;
use reqwest::header::{CONNECTION, UPGRADE};
use reqwest::{Method, StatusCode, Upgraded};
use sandboxd_api::{PortList, ShareInfo, ShareList, ShareRequest, TUNNEL_PROTOCOL};

impl Client {
    /// `GET /v1/sessions/{id}/ports`: the TCP ports listening in the sandbox.
    pub async fn list_ports(&self, id: &str) -> Result<PortList, ClientError> {
        self.send(self.request(Method::GET, &["sessions", id, "ports"]))
            .await
    }

    /// `POST /v1/sessions/{id}/ports/{port}/share`: a link to the port, working without the
    /// token for `ttl_secs` (the service's default and cap when `None`). Its `url` is the
    /// service's, or the service's URL ([`Client::base_url`]) and the link's `path`.
    pub async fn share_port(
        &self,
        id: &str,
        port: u16,
        ttl_secs: Option<u64>,
    ) -> Result<ShareInfo, ClientError> {
        let port = port.to_string();
        let request = self
            .request(Method::POST, &["sessions", id, "ports", &port, "share"])
            .json(&ShareRequest { ttl_secs });
        let mut info: ShareInfo = self.send(request).await?;
        if info.url.is_none() {
            info.url = info
                .path
                .as_ref()
                .map(|path| format!("{}{path}", self.base_url()));
        }
        Ok(info)
    }

    /// `GET /v1/sessions/{id}/shares`: the session's links that still work.
    pub async fn list_shares(&self, id: &str) -> Result<ShareList, ClientError> {
        self.send(self.request(Method::GET, &["sessions", id, "shares"]))
            .await
    }

    /// `DELETE /v1/sessions/{id}/shares/{share_id}`: revokes a link at once.
    pub async fn revoke_share(&self, id: &str, share_id: &str) -> Result<ShareInfo, ClientError> {
        self.send(self.request(Method::DELETE, &["sessions", id, "shares", share_id]))
            .await
    }

    /// `GET /v1/sessions/{id}/tunnels/{port}`: a raw TCP connection to the port in the
    /// sandbox, upgraded from HTTP; it carries the port's bytes both ways until either side
    /// closes it. Only opening it is bounded by the request timeout.
    pub async fn tunnel(&self, id: &str, port: u16) -> Result<Upgraded, ClientError> {
        let port = port.to_string();
        let request = self
            .untimed_request(Method::GET, &["sessions", id, "tunnels", &port])
            .header(CONNECTION, "upgrade")
            .header(UPGRADE, TUNNEL_PROTOCOL);
        let response = tokio::time::timeout(self.request_timeout, self.response(request))
            .await
            .map_err(|_| self.timed_out())??;
        if response.status() != StatusCode::SWITCHING_PROTOCOLS {
            return Err(ClientError::UnexpectedResponse {
                url: response.url().to_string(),
                status: response.status().as_u16(),
                detail: "the service did not switch to a tunnel".into(),
            });
        }
        response
            .upgrade()
            .await
            .map_err(|e| ClientError::from_reqwest(self.base_url(), e))
    }
}
