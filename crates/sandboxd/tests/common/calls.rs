//! Calls to the service's API with a token of the test's choosing (a tenant's, the service's),
//! answered as the status and the body's JSON (`null` when there is none).

use super::TestService;
use serde_json::Value;

impl TestService {
    pub async fn call_as(
        &self,
        token: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        call_at(&self.client, &self.url(path), token, method, body).await
    }
}

/// One call to `url`, a service's address with the path, with `token`.
pub async fn call_at(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    method: reqwest::Method,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = client.request(method, url).bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}
