//! Code contexts: running code with state kept between runs, its events as they come.

use crate::client::Client;
use crate::error::ClientError;
use crate::processes::{sse_events, Events};
use futures_util::StreamExt;
use reqwest::Method;
use sandboxd_api::{CodeEvent, ErrorDetail, RunCode};

/// A run's events, in order, `end` last.
pub struct CodeStream {
    events: Events,
    base_url: String,
}

impl Client {
    /// `POST /v1/sessions/{id}/code`: runs code in the context it names, or the language's
    /// default context.
    pub async fn run_code(&self, id: &str, request: &RunCode) -> Result<CodeStream, ClientError> {
        let request = self
            .untimed_request(Method::POST, &["sessions", id, "code"])
            .json(request);
        // Only the answer's head is timed here; the body is bounded by its silences.
        let response =
            match tokio::time::timeout(self.request_timeout, self.response(request)).await {
                Ok(response) => response?,
                Err(_) => return Err(self.timed_out()),
            };
        Ok(CodeStream {
            events: sse_events(response),
            base_url: self.base_url().to_string(),
        })
    }
}

impl CodeStream {
    /// The next event; `None` after `end`.
    pub async fn next(&mut self) -> Result<Option<CodeEvent>, ClientError> {
        loop {
            let Some(event) = self.events.next().await else {
                return Ok(None);
            };
            let event = event.map_err(|e| ClientError::Transport {
                url: self.base_url.clone(),
                cause: e.to_string(),
            })?;
            let (Some(name), Some(data)) = (event.event.as_deref(), event.data.as_deref()) else {
                continue;
            };
            if name == "failed" {
                let error: ErrorDetail = self.parse(data)?;
                return Err(ClientError::Api {
                    status: 502,
                    code: error.code,
                    message: error.message,
                    remedy: None,
                });
            }
            return self.parse(data).map(Some);
        }
    }

    /// Every event until `end`.
    pub async fn collect(mut self) -> Result<Vec<CodeEvent>, ClientError> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await? {
            let last = matches!(event, CodeEvent::End(_));
            events.push(event);
            if last {
                break;
            }
        }
        Ok(events)
    }

    fn parse<T: serde::de::DeserializeOwned>(&self, data: &str) -> Result<T, ClientError> {
        serde_json::from_str(data).map_err(|e| ClientError::UnexpectedResponse {
            url: self.base_url.clone(),
            status: 200,
            detail: format!("an event that is not the API's JSON: {e}"),
        })
    }
}
