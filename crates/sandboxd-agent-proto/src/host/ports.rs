//! Clients for a sandbox's ports: the listening ones, and a tunnel to one. A tunnel is the
//! agent connection carrying a port's bytes in data frames; [`carry`] joins it to a local
//! byte stream (e.g. one half of a `tokio::io::duplex`), which any client (an HTTP client,
//! a WebSocket) then speaks over. The agent is untrusted: the listing is bounded, and a
//! tunnel moves bytes without interpreting them.

use super::files::{next_event, unexpected, within};
use super::framing::{read_frame, write_frame, write_json};
use crate::error::ProtoError;
use crate::frame::FrameKind;
use crate::limits::STDIN_CHUNK_LEN;
use crate::message::{Event, ListeningPort, PortsEvent, PortsRequest, Request};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The longest address or program name a listed port may carry.
const MAX_PORT_TEXT_LEN: usize = 128;

/// The TCP ports listening in the sandbox, at most `max_ports`.
pub async fn list_ports<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    max_ports: u32,
    timeout: Duration,
) -> Result<Vec<ListeningPort>, ProtoError> {
    within(
        timeout,
        write_json(
            &mut stream,
            &Request::Ports(PortsRequest::ListPorts { max_ports }),
        ),
    )
    .await?;
    match next_event(&mut stream, timeout).await? {
        Event::Ports(PortsEvent::Ports { ports }) => {
            let too_long =
                |text: &Option<String>| text.as_ref().is_some_and(|t| t.len() > MAX_PORT_TEXT_LEN);
            if ports.len() > max_ports as usize
                || ports
                    .iter()
                    .any(|p| p.address.len() > MAX_PORT_TEXT_LEN || too_long(&p.program))
            {
                return Err(ProtoError::Unexpected("an oversized port list".into()));
            }
            Ok(ports)
        }
        other => Err(unexpected(other, "listing ports")),
    }
}

/// Asks the agent to connect to `port` on the sandbox's loopback; on success the stream is
/// the tunnel, ready for [`carry`].
pub async fn connect_port<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    port: u16,
    timeout: Duration,
) -> Result<S, ProtoError> {
    within(
        timeout,
        write_json(
            &mut stream,
            &Request::Ports(PortsRequest::PortConnect { port }),
        ),
    )
    .await?;
    match next_event(&mut stream, timeout).await? {
        Event::Ports(PortsEvent::PortConnected) => Ok(stream),
        other => Err(unexpected(other, "connecting to a port")),
    }
}

/// What a tunnel moved, in each direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Carried {
    pub to_port: u64,
    pub from_port: u64,
}

/// How one direction of a tunnel ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// Its sender said it will send no more (a TCP half-close), passed on to the other side.
    HalfClosed,
    /// Its connection failed or closed: the tunnel ends.
    Broken,
}

/// Carries bytes between the tunnel and `local` until both directions end, as TCP does: each
/// reads one chunk at a time and writes it before reading the next, so a slow reader holds
/// the other side back and nothing piles up. A half-close either way is passed on and the
/// other direction goes on (a client that sends its request and shuts its side still gets
/// the answer); a failed connection ends both. `pace` is awaited with each chunk's size
/// before it goes on (a rate limit); it may simply return.
pub async fn carry<S, L, P, F>(tunnel: S, local: L, pace: P) -> Carried
where
    S: AsyncRead + AsyncWrite + Unpin,
    L: AsyncRead + AsyncWrite + Unpin,
    P: Fn(usize) -> F,
    F: std::future::Future<Output = ()>,
{
    let (mut tunnel_read, mut tunnel_write) = tokio::io::split(tunnel);
    let (mut local_read, mut local_write) = tokio::io::split(local);
    let (mut from_port, mut to_port) = (0u64, 0u64);
    {
        let from_port_side = async {
            loop {
                let Ok(frame) = read_frame(&mut tunnel_read).await else {
                    return Ended::Broken;
                };
                if frame.kind != FrameKind::Stdout || frame.payload.is_empty() {
                    let _ = local_write.shutdown().await;
                    return Ended::HalfClosed;
                }
                pace(frame.payload.len()).await;
                if local_write.write_all(&frame.payload).await.is_err() {
                    return Ended::Broken;
                }
                from_port += frame.payload.len() as u64;
            }
        };
        let to_port_side = async {
            let mut buffer = vec![0; STDIN_CHUNK_LEN];
            loop {
                let read = match local_read.read(&mut buffer).await {
                    Err(_) => return Ended::Broken,
                    // An empty stdin frame is the agent's half-close of the port.
                    Ok(0) => {
                        return match write_frame(&mut tunnel_write, FrameKind::Stdin, &[]).await {
                            Ok(()) => Ended::HalfClosed,
                            Err(_) => Ended::Broken,
                        }
                    }
                    Ok(read) => read,
                };
                pace(read).await;
                if write_frame(&mut tunnel_write, FrameKind::Stdin, &buffer[..read])
                    .await
                    .is_err()
                {
                    return Ended::Broken;
                }
                to_port += read as u64;
            }
        };
        tokio::pin!(from_port_side, to_port_side);
        tokio::select! {
            ended = &mut from_port_side => if ended == Ended::HalfClosed {
                (&mut to_port_side).await;
            },
            ended = &mut to_port_side => if ended == Ended::HalfClosed {
                (&mut from_port_side).await;
            },
        }
    }
    Carried { to_port, from_port }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_tunnel_carries_both_ways_and_passes_half_closes_on() {
        let (service, mut agent) = tokio::io::duplex(1 << 16);
        let fake = tokio::spawn(async move {
            let request: Request = read_frame(&mut agent).await.unwrap().parse_json().unwrap();
            assert_eq!(
                request,
                Request::Ports(PortsRequest::PortConnect { port: 8000 })
            );
            write_json(&mut agent, &PortsEvent::PortConnected)
                .await
                .unwrap();
            let frame = read_frame(&mut agent).await.unwrap();
            assert_eq!(
                (frame.kind, frame.payload.as_slice()),
                (FrameKind::Stdin, &b"ping"[..])
            );
            // The client's half-close, after which the port still answers.
            let frame = read_frame(&mut agent).await.unwrap();
            assert_eq!((frame.kind, frame.payload.len()), (FrameKind::Stdin, 0));
            write_frame(&mut agent, FrameKind::Stdout, b"pong")
                .await
                .unwrap();
            write_frame(&mut agent, FrameKind::Stdout, b"")
                .await
                .unwrap();
        });
        let tunnel = connect_port(service, 8000, Duration::from_secs(5))
            .await
            .unwrap();
        let (mut ours, theirs) = tokio::io::duplex(1 << 16);
        let carrying = tokio::spawn(carry(tunnel, theirs, |_| async {}));
        ours.write_all(b"ping").await.unwrap();
        ours.shutdown().await.unwrap();
        let mut answer = Vec::new();
        ours.read_to_end(&mut answer).await.unwrap();
        assert_eq!(answer, b"pong");
        let carried = carrying.await.unwrap();
        assert_eq!((carried.to_port, carried.from_port), (4, 4));
        fake.await.unwrap();
    }
}
