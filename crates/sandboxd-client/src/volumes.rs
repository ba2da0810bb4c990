//! Volumes: storage of the caller's tenant that outlives sessions.

use crate::client::Client;
use crate::error::ClientError;
use reqwest::Method;
use sandboxd_api::{VolumeInfo, VolumeList, VolumeRequest, VolumeSize};

impl Client {
    /// `POST /v1/volumes`. Not timed here: making the filesystem takes a moment for a
    /// large one.
    pub async fn create_volume(&self, name: &str, size: &str) -> Result<VolumeInfo, ClientError> {
        let body = VolumeRequest {
            name: name.into(),
            size: VolumeSize::Text(size.into()),
        };
        let request = self.untimed_request(Method::POST, &["volumes"]);
        self.send(request.json(&body)).await
    }

    /// `GET /v1/volumes`.
    pub async fn list_volumes(&self) -> Result<VolumeList, ClientError> {
        self.send(self.request(Method::GET, &["volumes"])).await
    }

    /// `GET /v1/volumes/{name}`.
    pub async fn volume(&self, name: &str) -> Result<VolumeInfo, ClientError> {
        self.send(self.request(Method::GET, &["volumes", name]))
            .await
    }

    /// `DELETE /v1/volumes/{name}`.
    pub async fn delete_volume(&self, name: &str) -> Result<VolumeInfo, ClientError> {
        self.send(self.request(Method::DELETE, &["volumes", name]))
            .await
    }
}
