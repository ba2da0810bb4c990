//! The instance's sandboxes as the engine lists them, asked over its socket directly rather
//! than through bollard, whose listing builds every field of every container: with 3,000 open
//! that is 4.4 MB of JSON, and each reconcile grew the service by 15-30 MB that the allocator
//! kept. This keeps the id, the state and two labels, and skips the rest as it parses.

use crate::labels::LABEL_INSTANCE;
use crate::labels::LABEL_RUNTIME;
use crate::labels::LABEL_SESSION;
use crate::link::ENGINE_TIMEOUT;
use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use sandboxd_backend::{BackendError, ExistingSandbox, Sandbox};
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::time::Duration;

/// The most the listing may take: about 1.5 KB a container, so room for over 40,000.
const MAX_LISTING_BYTES: usize = 64 << 20;

/// Every container of `instance`, running or not, from the engine at `socket`.
pub(crate) async fn sandboxes(
    socket: &str,
    instance: &str,
) -> Result<Vec<ExistingSandbox>, BackendError> {
    let filters = serde_json::json!({ "label": [format!("{LABEL_INSTANCE}={instance}")] });
    let query = serde_urlencoded::to_string([("all", "true"), ("filters", &filters.to_string())])
        .map_err(|e| {
        BackendError::Engine(format!("cannot encode the listing's filters: {e}"))
    })?;
    let body = tokio::time::timeout(
        Duration::from_secs(ENGINE_TIMEOUT),
        get(socket, &format!("/containers/json?{query}")),
    )
    .await
    .map_err(|_| {
        BackendError::EngineUnavailable(format!(
            "the engine did not list its containers within {ENGINE_TIMEOUT} s"
        ))
    })??;
    let listed: Vec<Listed> = serde_json::from_slice(&body)
        .map_err(|e| BackendError::Engine(format!("cannot read the engine's listing: {e}")))?;
    Ok(listed
        .into_iter()
        .filter_map(|c| {
            Some(ExistingSandbox {
                running: matches!(c.state.as_str(), "running" | "paused"),
                paused: c.state == "paused",
                memory_on_disk: None,
                sandbox: Sandbox {
                    session_id: c.labels.session?,
                    backend_id: c.id,
                },
                runtime: c.labels.runtime.unwrap_or_default(),
            })
        })
        .collect())
}

/// The body of a GET to the engine, over a connection of its own.
async fn get(socket: &str, path: &str) -> Result<Bytes, BackendError> {
    let unavailable = |e: &dyn fmt::Display| {
        BackendError::EngineUnavailable(format!("cannot list the engine's containers: {e}"))
    };
    // The option takes the forms bollard takes: a path, or a `unix://` URL of one.
    let socket = socket.strip_prefix("unix://").unwrap_or(socket);
    let stream = tokio::net::UnixStream::connect(socket)
        .await
        .map_err(|e| unavailable(&format!("cannot reach {socket}: {e}")))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| unavailable(&e))?;
    // Ends with the response, once the sender is dropped.
    tokio::spawn(connection);
    let request = hyper::Request::get(path)
        .header(hyper::header::HOST, "docker")
        .body(Empty::<Bytes>::new())
        .map_err(|e| unavailable(&e))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| unavailable(&e))?;
    let status = response.status();
    let body = Limited::new(response.into_body(), MAX_LISTING_BYTES)
        .collect()
        .await
        .map_err(|e| unavailable(&e))?
        .to_bytes();
    if !status.is_success() {
        #[derive(Deserialize)]
        struct EngineMessage {
            message: String,
        }
        let message = serde_json::from_slice::<EngineMessage>(&body)
            .map(|m| m.message)
            .unwrap_or_else(|_| String::from_utf8_lossy(&body[..body.len().min(512)]).into());
        return Err(BackendError::Engine(format!(
            "{message} (status {})",
            status.as_u16()
        )));
    }
    Ok(body)
}

/// What is read of a container in the listing.
#[derive(Deserialize)]
struct Listed {
    #[serde(rename = "Id")]
    id: String,
    #[serde(rename = "State", default)]
    state: String,
    #[serde(rename = "Labels", default)]
    labels: OurLabels,
}

/// The two labels read of a container; the others, its image's among them, are skipped.
#[derive(Default)]
struct OurLabels {
    session: Option<String>,
    runtime: Option<String>,
}

impl<'de> Deserialize<'de> for OurLabels {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LabelMap;
        impl<'de> Visitor<'de> for LabelMap {
            type Value = OurLabels;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of labels")
            }

            fn visit_unit<E>(self) -> Result<OurLabels, E> {
                Ok(OurLabels::default())
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OurLabels, A::Error> {
                let mut labels = OurLabels::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        LABEL_SESSION => labels.session = Some(map.next_value()?),
                        LABEL_RUNTIME => labels.runtime = Some(map.next_value()?),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(labels)
            }
        }
        deserializer.deserialize_any(LabelMap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_gives_each_container_its_session_runtime_and_state() {
        let listing = br#"[
            {"Id":"a1","State":"running","Labels":{"org.sandboxd.session":"s1","org.sandboxd.runtime":"python","maintainer":"x \"y\"","org.sandboxd.instance":"i"},"Mounts":[{"Type":"bind"}]},
            {"Id":"b2","State":"paused","Labels":{"org.sandboxd.session":"s2"}},
            {"Id":"c3","State":"exited","Labels":null},
            {"Id":"d4","State":"exited","Labels":{"org.sandboxd.session":"s4"}}
        ]"#;
        let listed: Vec<Listed> = serde_json::from_slice(listing).unwrap();
        let read: Vec<(&str, &str, Option<&str>, Option<&str>)> = listed
            .iter()
            .map(|c| {
                (
                    c.id.as_str(),
                    c.state.as_str(),
                    c.labels.session.as_deref(),
                    c.labels.runtime.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            read,
            [
                ("a1", "running", Some("s1"), Some("python")),
                ("b2", "paused", Some("s2"), None),
                ("c3", "exited", None, None),
                ("d4", "exited", Some("s4"), None),
            ]
        );
    }
}
