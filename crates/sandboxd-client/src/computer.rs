//! A desktop session's screen, mouse and keyboard.

use crate::client::Client;
use crate::error::ClientError;
use reqwest::Method;
use sandboxd_api::{ComputerRequest, ComputerResult};

impl Client {
    /// `POST /v1/sessions/{id}/computer`: one action (a screenshot, a click, keys, ...).
    pub async fn computer(
        &self,
        id: &str,
        request: &ComputerRequest,
    ) -> Result<ComputerResult, ClientError> {
        let request_builder = self.request(Method::POST, &["sessions", id, "computer"]);
        self.send(request_builder.json(request)).await
    }
}
