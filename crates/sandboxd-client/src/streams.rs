//! Answers read as they arrive: a runtime's build events and a file's bytes.

use crate::error::ClientError;
use reqwest::Response;
use sandboxd_api::RuntimeBuildEvent;

/// A runtime's image being made available, change by change.
#[derive(Debug)]
pub struct RuntimeBuild {
    pub(crate) response: Response,
    pub(crate) base_url: String,
    /// Bytes received after the last complete line.
    pub(crate) pending: Vec<u8>,
}

impl RuntimeBuild {
    /// The next change; `None` after the last one (`ready` or `failed`).
    pub async fn next_event(&mut self) -> Result<Option<RuntimeBuildEvent>, ClientError> {
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                return serde_json::from_slice(&line).map(Some).map_err(|e| {
                    ClientError::UnexpectedResponse {
                        url: self.base_url.clone(),
                        status: self.response.status().as_u16(),
                        detail: format!("a build event is not the JSON the API promises: {e}"),
                    }
                });
            }
            let chunk = self
                .response
                .chunk()
                .await
                .map_err(|e| ClientError::from_reqwest(&self.base_url, e))?;
            match chunk {
                Some(bytes) => self.pending.extend_from_slice(&bytes),
                None => return Ok(None),
            }
        }
    }
}

/// A file being read from a sandbox, chunk by chunk.
#[derive(Debug)]
pub struct FileDownload {
    pub(crate) response: Response,
    pub(crate) base_url: String,
}

impl FileDownload {
    /// The file's size, when the service knew it before sending.
    pub fn size(&self) -> Option<u64> {
        self.response.content_length()
    }

    /// The next chunk of the file; `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<bytes::Bytes>, ClientError> {
        self.response
            .chunk()
            .await
            .map_err(|e| ClientError::from_reqwest(&self.base_url, e))
    }
}
