//! Directory trees as tar archives, both ways.

use crate::client::Client;
use crate::error::ClientError;
use reqwest::Body;
use reqwest::{Method, Response};
use sandboxd_api::ArchiveWritten;

/// A directory tree being read from a sandbox as a tar, chunk by chunk.
#[derive(Debug)]
pub struct ArchiveDownload {
    response: Response,
    base_url: String,
}

impl Client {
    /// `GET /v1/sessions/{id}/archive?path=DIR`: the tree under `DIR` as a tar. Bounded by the
    /// service (each step of the transfer), not by a client timeout.
    pub async fn download_archive(
        &self,
        id: &str,
        path: &str,
    ) -> Result<ArchiveDownload, ClientError> {
        let request = self
            .untimed_request(Method::GET, &["sessions", id, "archive"])
            .query(&[("path", path)]);
        Ok(ArchiveDownload {
            response: self.response(request).await?,
            base_url: self.base_url().to_string(),
        })
    }

    /// `PUT /v1/sessions/{id}/archive?path=DIR`: extracts a tar under `DIR` (created), all of
    /// it or nothing.
    pub async fn upload_archive(
        &self,
        id: &str,
        path: &str,
        tar: impl Into<Body>,
    ) -> Result<ArchiveWritten, ClientError> {
        let request = self
            .untimed_request(Method::PUT, &["sessions", id, "archive"])
            .query(&[("path", path)])
            .header(reqwest::header::CONTENT_TYPE, "application/x-tar")
            .body(tar);
        self.send(request).await
    }
}

impl ArchiveDownload {
    /// The next chunk of the tar; `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<bytes::Bytes>, ClientError> {
        self.response
            .chunk()
            .await
            .map_err(|e| ClientError::from_reqwest(&self.base_url, e))
    }
}
