//! A session's egress allow-list.

use crate::client::Client;
use crate::error::ClientError;
use reqwest::Method;
use sandboxd_api::SessionNetwork;

impl Client {
    /// `GET /v1/sessions/{id}/network`: the names the session's sandbox may reach.
    pub async fn session_network(&self, id: &str) -> Result<SessionNetwork, ClientError> {
        self.send(self.request(Method::GET, &["sessions", id, "network"]))
            .await
    }

    /// `PUT /v1/sessions/{id}/network`: narrows the list (within the runtime's).
    pub async fn set_session_network(
        &self,
        id: &str,
        network: &SessionNetwork,
    ) -> Result<SessionNetwork, ClientError> {
        let request = self.request(Method::PUT, &["sessions", id, "network"]);
        self.send(request.json(network)).await
    }
}
