//! The sandbox's listening TCP ports, as [`PortsEvent::Ports`] lists them.

use serde::{Deserialize, Serialize};

/// A TCP port listening in the sandbox, from its /proc/net/tcp{,6}.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListeningPort {
    pub port: u16,
    /// The address it is bound to, e.g. `127.0.0.1`, `0.0.0.0`, `::`.
    pub address: String,
    /// The process holding the socket, when the agent could find it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// That process's name (its `comm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

/// The ports requests, a part of [`Request`](super::Request).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum PortsRequest {
    /// Connects to `port` on the sandbox's loopback (127.0.0.1, else ::1):
    /// [`PortsEvent::PortConnected`], then the connection carries the bytes both ways: stdin frames
    /// to the port, stdout frames from it, an empty frame for an end. The agent closes the
    /// connection after.
    PortConnect { port: u16 },
    /// The TCP ports listening in the sandbox, at most `max_ports`: [`PortsEvent::Ports`].
    ListPorts { max_ports: u32 },
}

/// What the agent answers to [`PortsRequest`]s, a part of [`Event`](super::Event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum PortsEvent {
    PortConnected,
    Ports { ports: Vec<ListeningPort> },
}

#[cfg(test)]
mod wire {
    //! This topic's messages pinned to their bytes (see `pins.rs`).

    use super::*;
    use crate::message::pins;

    /// Every request, each with the bytes it travels as.
    fn requests() -> Vec<(PortsRequest, &'static str)> {
        vec![
            (
                PortsRequest::PortConnect { port: 8080 },
                r#"{"op":"port_connect","port":8080}"#,
            ),
            (
                PortsRequest::ListPorts { max_ports: 6 },
                r#"{"op":"list_ports","max_ports":6}"#,
            ),
        ]
    }

    /// Every event, each with the bytes it travels as.
    fn events() -> Vec<(PortsEvent, &'static str)> {
        vec![
            (PortsEvent::PortConnected, r#"{"type":"port_connected"}"#),
            (
                PortsEvent::Ports {
                    ports: vec![
                        ListeningPort {
                            port: 80,
                            address: "0.0.0.0".into(),
                            pid: Some(9),
                            program: Some("nginx".into()),
                        },
                        ListeningPort {
                            port: 81,
                            address: "::".into(),
                            pid: None,
                            program: None,
                        },
                    ],
                },
                r#"{"type":"ports","ports":[{"port":80,"address":"0.0.0.0","pid":9,"program":"nginx"},{"port":81,"address":"::"}]}"#,
            ),
        ]
    }

    /// Each request encodes to its bytes and decodes back to itself, and none is left out:
    /// the match is exhaustive, so a new one does not compile until it is named, counted and
    /// pinned.
    #[test]
    fn every_request_is_the_same_bytes() {
        let tags = pins::requests(requests(), |message| match message {
            PortsRequest::PortConnect { .. } => "port_connect",
            PortsRequest::ListPorts { .. } => "list_ports",
        });
        assert_eq!(tags.len(), 2, "{tags:?}");
    }

    /// Each event encodes to its bytes and decodes back to itself, and none is left out:
    /// the match is exhaustive, so a new one does not compile until it is named, counted and
    /// pinned.
    #[test]
    fn every_event_is_the_same_bytes() {
        let tags = pins::events(events(), |message| match message {
            PortsEvent::PortConnected => "port_connected",
            PortsEvent::Ports { .. } => "ports",
        });
        assert_eq!(tags.len(), 2, "{tags:?}");
    }
}
