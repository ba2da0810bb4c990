//! The ports calls: list a session's listening ports, and make, list and revoke share links.
//! (The proxy itself is plain HTTP at `/v1/sessions/{id}/ports/{port}/...`.)

use crate::{Client, ClientError};
use reqwest::Method;
use sandboxd_api::{PortList, ShareInfo, ShareList, ShareRequest};

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
}
