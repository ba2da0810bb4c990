//! A bound on what a kernel can make the agent allocate. The ZeroMQ crate has no message size
//! cap: a frame's header alone makes its decoder reserve the frame's whole length, and a
//! message's frames pile up until its last, so one hostile message could make the agent (the
//! sandbox's PID 1, whose death ends the session) allocate without bound. The agent's sockets
//! therefore reach the kernel through a loopback relay of its own that reads the ZMTP framing
//! of what the kernel sends and cuts the connection, before forwarding the header, at a
//! message over [`MAX_KERNEL_MESSAGE`] bytes; the run then reports that its output was too
//! large and the kernel is replaced (its connection is gone). What the agent sends the kernel
//! passes unread.

use std::net::Ipv4Addr;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// The largest message (all its frames) the agent takes from a kernel. Results over
/// `MAX_KERNEL_RESULT_LEN` are dropped and counted anyway; this only bounds the allocation.
pub const MAX_KERNEL_MESSAGE: u64 = 32 << 20;
/// The ZMTP 3 greeting, passed through as it is.
const GREETING_LEN: u64 = 64;
const READ_CHUNK: usize = 64 * 1024;
/// Connections a relay carries at once.
const MAX_RELAYED: usize = 4;
/// How long a relayed connection waits for a starting kernel to listen (as long as a kernel
/// has to start), and how often it tries.
const CONNECT_PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);
const CONNECT_RETRY: std::time::Duration = std::time::Duration::from_millis(50);
/// Where the relay's connections to the kernel come from.
const RELAY_SOURCE: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// A relay to one of the kernel's ports; it stops listening when dropped.
pub struct Relay {
    pub port: u16,
    listening: tokio::task::JoinHandle<()>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.listening.abort();
    }
}

/// Listens on a loopback port of its own, relaying each connection to `kernel_port`;
/// `too_large` is notified when the kernel sent a message over the cap (its connection is cut).
pub async fn relay(kernel_port: u16, too_large: Arc<Notify>) -> std::io::Result<Relay> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let port = listener.local_addr()?.port();
    let listening = tokio::spawn(async move {
        // A ZeroMQ socket reconnects when its connection drops (the kernel may not listen
        // yet): each connection is relayed on its own.
        let slots = Arc::new(tokio::sync::Semaphore::new(MAX_RELAYED));
        while let Ok((client, _)) = listener.accept().await {
            // Anyone in the sandbox can connect: each connection costs a buffer, so only a few
            // are relayed at once (the agent's socket needs one).
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                continue;
            };
            let too_large = too_large.clone();
            tokio::spawn(async move {
                let _slot = slot;
                let Some(kernel) = connect(kernel_port).await else {
                    return;
                };
                let (mut from_client, mut to_client) = client.into_split();
                let (mut from_kernel, mut to_kernel) = kernel.into_split();
                tokio::select! {
                    _ = tokio::io::copy(&mut from_client, &mut to_kernel) => {}
                    checked = checked_copy(&mut from_kernel, &mut to_client) => {
                        if checked == Err(Oversized) {
                            too_large.notify_one();
                        }
                    }
                }
            });
        }
    });
    Ok(Relay { port, listening })
}

/// Connects to the kernel's port, waiting for a kernel that is still starting to listen.
/// From another loopback address: a connection from 127.0.0.1 to a port nobody listens on
/// yet can be given that port as its own and connect to itself (TCP's simultaneous open).
async fn connect(port: u16) -> Option<TcpStream> {
    let deadline = tokio::time::Instant::now() + CONNECT_PATIENCE;
    loop {
        let attempt = async {
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.bind((RELAY_SOURCE, 0).into())?;
            socket.connect((Ipv4Addr::LOCALHOST, port).into()).await
        };
        match attempt.await {
            Ok(stream) => return Some(stream),
            Err(_) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(CONNECT_RETRY).await;
            }
            Err(_) => return None,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
struct Oversized;

/// Copies until either side closes (`Ok`), or until a message over the cap begins.
async fn checked_copy(
    from: &mut (impl AsyncReadExt + Unpin),
    to: &mut (impl AsyncWriteExt + Unpin),
) -> Result<(), Oversized> {
    let mut framing = Framing::default();
    let mut buffer = vec![0; READ_CHUNK];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return Ok(()),
            Ok(read) => read,
        };
        framing.feed(&buffer[..read])?;
        if to.write_all(&buffer[..read]).await.is_err() {
            return Ok(());
        }
    }
}

/// Where a ZMTP 3 byte stream is: the greeting, then frames of a flags byte, a length (one
/// byte, or eight big-endian when the flags say long) and the body.
#[derive(Debug)]
enum Position {
    Greeting {
        left: u64,
    },
    Flags,
    Length {
        long: bool,
        /// The frame ends its message: a message frame without MORE (a command is apart from
        /// messages: it neither counts in one nor ends one).
        last: bool,
        command: bool,
        read: u8,
        value: u64,
    },
    Body {
        left: u64,
        last: bool,
    },
}

#[derive(Debug)]
struct Framing {
    position: Position,
    /// The bytes of the message so far (its frames before this one).
    message: u64,
}

impl Default for Framing {
    fn default() -> Self {
        Framing {
            position: Position::Greeting { left: GREETING_LEN },
            message: 0,
        }
    }
}

impl Framing {
    fn feed(&mut self, mut bytes: &[u8]) -> Result<(), Oversized> {
        while let Some((&first, rest)) = bytes.split_first() {
            match &mut self.position {
                Position::Greeting { left } | Position::Body { left, .. } => {
                    let taken = bytes
                        .len()
                        .min(usize::try_from(*left).unwrap_or(usize::MAX));
                    *left -= taken as u64;
                    bytes = &bytes[taken..];
                    if *left == 0 {
                        if let Position::Body { last: true, .. } = self.position {
                            self.message = 0;
                        }
                        self.position = Position::Flags;
                    }
                    continue;
                }
                Position::Flags => {
                    let command = first & 0b100 != 0;
                    self.position = Position::Length {
                        long: first & 0b10 != 0,
                        last: !command && first & 0b01 == 0,
                        command,
                        read: 0,
                        value: 0,
                    };
                }
                Position::Length {
                    long,
                    last,
                    command,
                    read,
                    value,
                } => {
                    *value = (*value << 8) | u64::from(first);
                    *read += 1;
                    if *read == if *long { 8 } else { 1 } {
                        let (left, last) = (*value, *last);
                        let counted = if *command {
                            left
                        } else {
                            self.message = self.message.saturating_add(left);
                            self.message
                        };
                        if counted > MAX_KERNEL_MESSAGE {
                            return Err(Oversized);
                        }
                        if left == 0 && last {
                            self.message = 0;
                        }
                        self.position = if left == 0 {
                            Position::Flags
                        } else {
                            Position::Body { left, last }
                        };
                    }
                }
            }
            bytes = rest;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(more: bool, body: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::new();
        if body.len() > 255 {
            bytes.push(0b10 | u8::from(more));
            bytes.extend_from_slice(&(body.len() as u64).to_be_bytes());
        } else {
            bytes.push(u8::from(more));
            bytes.push(u8::try_from(body.len()).unwrap());
        }
        bytes.extend_from_slice(body);
        bytes
    }

    #[test]
    fn messages_within_the_cap_pass_in_any_split() {
        let mut stream = vec![0xff; usize::try_from(GREETING_LEN).unwrap()];
        for _ in 0..3 {
            stream.extend(frame(true, b"identity"));
            stream.extend(frame(true, &[]));
            stream.extend(frame(false, &vec![b'x'; 70_000]));
        }
        for split in [1, 7, 64, 1000, stream.len()] {
            let mut framing = Framing::default();
            for chunk in stream.chunks(split) {
                assert_eq!(framing.feed(chunk), Ok(()), "split {split}");
            }
            assert!(matches!(framing.position, Position::Flags), "{framing:?}");
            assert_eq!(framing.message, 0);
        }
    }

    #[test]
    fn a_message_over_the_cap_is_refused_at_its_header() {
        let mut framing = Framing::default();
        framing
            .feed(&vec![0xff; usize::try_from(GREETING_LEN).unwrap()])
            .unwrap();
        let mut header = vec![0b10];
        header.extend_from_slice(&(MAX_KERNEL_MESSAGE + 1).to_be_bytes());
        assert_eq!(framing.feed(&header), Err(Oversized));

        // Many frames of one message count together.
        let mut framing = Framing::default();
        framing
            .feed(&vec![0xff; usize::try_from(GREETING_LEN).unwrap()])
            .unwrap();
        let piece = frame(true, &vec![0; 1 << 20]);
        let refused = (0..40).find_map(|_| framing.feed(&piece).err());
        assert_eq!(refused, Some(Oversized));
    }
}
