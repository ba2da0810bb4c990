//! A command run to completion with its output seen as it comes: `POST .../exec` answered as
//! Server-Sent Events (`output` chunks, then the `result` the JSON answer would be), so a face
//! can show progress and still gets exactly what the plain exec answers. Dropping the call
//! closes the connection, which ends the command, as for the plain exec.

use crate::client::Client;
use crate::error::ClientError;
use crate::processes::sse_events;
use base64::Engine;
use futures_util::StreamExt;
use sandboxd_api::{ErrorDetail, ExecRequest, ExecResult, OutputChunk};

impl Client {
    /// `POST /v1/sessions/{id}/exec` as an event stream: `on_output` gets the output (stdout
    /// and stderr together) as the command writes it; the answer is its result.
    pub async fn exec_streamed(
        &self,
        id: &str,
        request: &ExecRequest,
        mut on_output: impl FnMut(&[u8]) + Send,
    ) -> Result<ExecResult, ClientError> {
        let request = self
            .exec_request(id, request)
            .header(reqwest::header::ACCEPT, "text/event-stream");
        let mut events = sse_events(self.response(request).await?);
        let unexpected = |detail: String| ClientError::UnexpectedResponse {
            url: self.base_url().to_string(),
            status: 200,
            detail,
        };
        while let Some(event) = events.next().await {
            let event = event.map_err(|e| ClientError::Transport {
                url: self.base_url().to_string(),
                cause: e.to_string(),
            })?;
            let (Some(name), Some(data)) = (event.event.as_deref(), event.data.as_deref()) else {
                continue;
            };
            match name {
                "output" => {
                    let chunk: OutputChunk = parse(data).map_err(unexpected)?;
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(chunk.base64.unwrap_or_default())
                        .map_err(|e| unexpected(format!("output that is not base64: {e}")))?;
                    on_output(&bytes);
                }
                "result" => return parse(data).map_err(unexpected),
                "failed" => {
                    let error: ErrorDetail = parse(data).map_err(unexpected)?;
                    return Err(ClientError::from_detail(502, error));
                }
                _ => {}
            }
        }
        Err(ClientError::Transport {
            url: self.base_url().to_string(),
            cause: "the answer ended before the command's result".into(),
        })
    }
}

fn parse<T: serde::de::DeserializeOwned>(data: &str) -> Result<T, String> {
    serde_json::from_str(data).map_err(|e| format!("an event that is not the API's JSON: {e}"))
}
