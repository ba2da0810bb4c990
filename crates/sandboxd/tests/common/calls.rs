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
        let mut request = self
            .client
            .request(method, self.url(path))
            .bearer_auth(token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }
}
