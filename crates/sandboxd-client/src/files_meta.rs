//! The file metadata calls: describe a path, make a directory, move a path, watch a directory.

use crate::client::Client;
use crate::error::ClientError;
use reqwest::{Method, Response};
use sandboxd_api::{DirMade, FileChange, FileInfo, MakeDir, MovePath};

/// The longest event a watch may send: a change names one path.
const MAX_EVENT_LEN: usize = 64 << 10;

impl Client {
    /// `GET /v1/sessions/{id}/files/stat?path=P`: what is at the path, a symlink described.
    pub async fn stat(&self, id: &str, path: &str) -> Result<FileInfo, ClientError> {
        let request = self
            .request(Method::GET, &["sessions", id, "files", "stat"])
            .query(&[("path", path)]);
        self.send(request).await
    }

    /// `POST /v1/sessions/{id}/files/mkdir`: creates a directory (and with `parents` the
    /// missing ones above it); `created` is false when one was there already.
    pub async fn make_dir(
        &self,
        id: &str,
        path: &str,
        parents: bool,
    ) -> Result<DirMade, ClientError> {
        let body = MakeDir {
            path: path.to_string(),
            parents,
        };
        let request = self
            .request(Method::POST, &["sessions", id, "files", "mkdir"])
            .json(&body);
        self.send(request).await
    }

    /// `POST /v1/sessions/{id}/files/move`: renames `from` to `to` inside the sandbox.
    pub async fn move_path(
        &self,
        id: &str,
        from: &str,
        to: &str,
        overwrite: bool,
    ) -> Result<FileInfo, ClientError> {
        let body = MovePath {
            from: from.to_string(),
            to: to.to_string(),
            overwrite,
        };
        let request = self
            .request(Method::POST, &["sessions", id, "files", "move"])
            .json(&body);
        self.send(request).await
    }

    /// `GET /v1/sessions/{id}/files/watch?path=DIR&recursive=...`: the directory's changes,
    /// as they come. Not timed: a quiet directory sends only keepalives.
    pub async fn watch(
        &self,
        id: &str,
        path: &str,
        recursive: bool,
    ) -> Result<FileWatch, ClientError> {
        let request = self
            .untimed_request(Method::GET, &["sessions", id, "files", "watch"])
            .query(&[("path", path)])
            .query(&[("recursive", recursive)]);
        Ok(FileWatch {
            response: self.response(request).await?,
            base_url: self.base_url().to_string(),
            pending: Vec::new(),
        })
    }
}

/// A directory being watched, change by change. Dropping it ends the watch.
#[derive(Debug)]
pub struct FileWatch {
    response: Response,
    base_url: String,
    /// Bytes received after the last complete event.
    pending: Vec<u8>,
}

impl FileWatch {
    /// The next change; `None` once the watch ended (the directory went away or the session
    /// ended). An `error` event becomes an error.
    pub async fn next_change(&mut self) -> Result<Option<FileChange>, ClientError> {
        loop {
            while let Some(end) = find(&self.pending, b"\n\n") {
                let event: Vec<u8> = self.pending.drain(..end + 2).collect();
                if let Some(change) = self.parse(&event)? {
                    return Ok(Some(change));
                }
            }
            if self.pending.len() > MAX_EVENT_LEN {
                return Err(self.unexpected("an event longer than any change".into()));
            }
            match self
                .response
                .chunk()
                .await
                .map_err(|e| ClientError::from_reqwest(&self.base_url, e))?
            {
                Some(bytes) => self.pending.extend_from_slice(&bytes),
                None => return Ok(None),
            }
        }
    }

    /// A `change` event's change; `None` for keepalives.
    fn parse(&self, event: &[u8]) -> Result<Option<FileChange>, ClientError> {
        let text = String::from_utf8_lossy(event);
        let (mut name, mut data) = ("message", String::new());
        for line in text.lines() {
            if let Some(value) = line.strip_prefix("event:") {
                name = value.trim();
            } else if let Some(value) = line.strip_prefix("data:") {
                data.push_str(value.trim_start());
            }
        }
        match name {
            "change" => serde_json::from_str(&data).map(Some).map_err(|e| {
                self.unexpected(format!("a change is not the JSON the API promises: {e}"))
            }),
            "error" => match serde_json::from_str::<sandboxd_api::ErrorDetail>(&data) {
                Ok(error) => Err(ClientError::from_detail(
                    self.response.status().as_u16(),
                    error,
                )),
                Err(e) => Err(self.unexpected(format!("an error event is not JSON: {e}"))),
            },
            _ => Ok(None),
        }
    }

    fn unexpected(&self, detail: String) -> ClientError {
        ClientError::UnexpectedResponse {
            url: self.base_url.clone(),
            status: self.response.status().as_u16(),
            detail,
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
