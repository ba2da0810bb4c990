//! Listening mode (`--listen ADDR`), for platforms that reach into the sandbox instead of
//! letting it dial out (Kubernetes: the service connects through the API server's
//! port-forward to a loopback port in the pod, which has no other network).
//!
//! Each accepted connection must first [`Request::Claim`] with the sandbox's secret. Told the
//! secret's digest at start (`--claim-digest`, where the agent listens on the pod's network,
//! which other pods reach), the agent accepts only claims of that secret. Without it, the
//! first secret the agent is sent becomes its own: on a loopback port nothing runs in the
//! sandbox before the service's first connection, so no sandbox process can claim first.
//! Either way later connections (also a sandbox process dialing the port) must present the
//! same secret or are closed.
//! A claimed connection is then served exactly like a dialed one: its bytes are relayed to one
//! end of a unix socket pair whose other end goes to [`dialer::serve_connection`].

use crate::dialer;
use crate::sys;
use sandboxd_agent_proto::{
    read_frame, write_json, AgentSecret, Event, FrameKind, Request, PROTOCOL_VERSION,
};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::Duration;

/// Connections relayed at once; each has a relay thread besides its serving thread.
const MAX_CONNECTIONS: usize = 64;
/// A connection must claim within this long, so idle sockets cannot pile up.
const CLAIM_TIMEOUT: Duration = Duration::from_secs(10);
const RELAY_BUFFER: usize = 64 * 1024;
const RELAY_STACK_SIZE: usize = 128 * 1024;

/// Accepts connections on `address` forever.
pub fn run(address: &str, claim_digest: Option<&str>) -> Result<(), String> {
    let listener =
        TcpListener::bind(address).map_err(|e| format!("cannot listen on {address}: {e}"))?;
    let claimed: Arc<OnceLock<AgentSecret>> = Arc::new(OnceLock::new());
    let claim_digest: Arc<Option<String>> = Arc::new(claim_digest.map(str::to_string));
    let open = Arc::new(AtomicUsize::new(0));
    let pool = dialer::Pool::shared()?;
    for stream in listener.incoming() {
        let Ok(stream) = stream else {
            // Out of descriptors or memory: let the peer retry later.
            thread::sleep(Duration::from_millis(50));
            continue;
        };
        if open.load(Ordering::Acquire) >= MAX_CONNECTIONS {
            continue;
        }
        open.fetch_add(1, Ordering::AcqRel);
        let (claimed, relays, pool) = (claimed.clone(), open.clone(), pool.clone());
        let claim_digest = claim_digest.clone();
        let spawned = thread::Builder::new()
            .name("relay".into())
            .stack_size(RELAY_STACK_SIZE)
            .spawn(move || {
                if claim(&stream, &claimed, claim_digest.as_deref()).is_ok() {
                    relay(stream, &pool);
                }
                relays.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            open.fetch_sub(1, Ordering::AcqRel);
        }
    }
    Err(format!("the listener on {address} stopped"))
}

/// Checks the connection's claim and answers with the agent's hello.
fn claim(
    stream: &TcpStream,
    claimed: &OnceLock<AgentSecret>,
    claim_digest: Option<&str>,
) -> io::Result<()> {
    let refused = || io::Error::new(io::ErrorKind::PermissionDenied, "bad claim");
    stream.set_read_timeout(Some(CLAIM_TIMEOUT))?;
    let frame = read_frame(&mut &*stream).map_err(|_| refused())?;
    if frame.kind != FrameKind::Json {
        return Err(refused());
    }
    let Ok(Request::Claim { secret }) = frame.parse_json::<Request>() else {
        return Err(refused());
    };
    // The digest is no secret: comparing it in variable time tells a dialer nothing.
    if claim_digest.is_some_and(|digest| secret.digest() != digest) {
        return Err(refused());
    }
    if *claimed.get_or_init(|| secret.clone()) != secret {
        return Err(refused());
    }
    stream.set_read_timeout(None)?;
    let hello = Event::Hello {
        version: PROTOCOL_VERSION,
        pid: std::process::id(),
        secret: None,
    };
    write_json(&mut &*stream, &hello).map_err(|_| refused())
}

/// Serves the claimed connection through a socket pair, copying both ways until either side
/// closes.
fn relay(outer: TcpStream, pool: &Arc<dialer::Pool>) {
    let Ok((mut inner, served)) = UnixStream::pair() else {
        return;
    };
    dialer::serve_connection(served, pool);
    let _ = outer.set_nodelay(true);
    let mut outer = outer;
    let mut buffer = vec![0; RELAY_BUFFER];
    loop {
        let mut fds = [
            libc::pollfd {
                fd: outer.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: inner.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        if sys::poll(&mut fds, -1).is_err() {
            break;
        }
        let ready =
            |fd: &libc::pollfd| fd.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0;
        if ready(&fds[0]) && !copy_once(&mut outer, &mut inner, &mut buffer) {
            break;
        }
        if ready(&fds[1]) && !copy_once(&mut inner, &mut outer, &mut buffer) {
            break;
        }
    }
    let _ = outer.shutdown(Shutdown::Both);
    let _ = inner.shutdown(Shutdown::Both);
}

/// One read and the whole write; false once the connection is over.
fn copy_once(from: &mut impl Read, to: &mut impl Write, buffer: &mut [u8]) -> bool {
    match from.read(buffer) {
        Ok(0) | Err(_) => false,
        Ok(n) => to.write_all(&buffer[..n]).is_ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandboxd_agent_proto::AGENT_SECRET_LEN;

    fn secret(byte: u8) -> AgentSecret {
        AgentSecret::from_bytes(&[byte; AGENT_SECRET_LEN])
    }

    fn connect_and_claim(address: std::net::SocketAddr, secret: &AgentSecret) -> Option<TcpStream> {
        let mut stream = TcpStream::connect(address).unwrap();
        let claim = Request::Claim {
            secret: secret.clone(),
        };
        write_json(&mut stream, &claim).unwrap();
        match read_frame(&mut stream).ok()?.parse_json::<Event>().ok()? {
            Event::Hello { secret: None, .. } => Some(stream),
            _ => None,
        }
    }

    /// An agent listening on a free loopback port, once it accepts connections.
    fn listening(claim_digest: Option<String>) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        let bound = address.to_string();
        thread::spawn(move || run(&bound, claim_digest.as_deref()));
        for _ in 0..100 {
            if TcpStream::connect(address).is_ok() {
                return address;
            }
            thread::sleep(Duration::from_millis(20));
        }
        panic!("the agent does not listen on {address}");
    }

    #[test]
    fn the_first_claim_sets_the_secret_and_later_ones_must_match() {
        let address = listening(None);
        let mut first = connect_and_claim(address, &secret(1)).expect("the first claim is taken");
        assert!(
            connect_and_claim(address, &secret(2)).is_none(),
            "another secret is refused"
        );
        let mut again = connect_and_claim(address, &secret(1)).expect("the same secret again");

        // A claimed connection is served like a dialed one.
        for stream in [&mut first, &mut again] {
            write_json(stream, &Request::Ping).unwrap();
            let pong = read_frame(stream).unwrap().parse_json::<Event>().unwrap();
            assert_eq!(pong, Event::Pong);
        }
    }

    #[test]
    fn told_a_digest_only_that_secret_is_taken_even_first() {
        let address = listening(Some(secret(3).digest()));
        assert!(
            connect_and_claim(address, &secret(1)).is_none(),
            "a first claim of another secret is refused"
        );
        let mut taken = connect_and_claim(address, &secret(3)).expect("the secret of the digest");
        write_json(&mut taken, &Request::Ping).unwrap();
        let pong = read_frame(&mut taken)
            .unwrap()
            .parse_json::<Event>()
            .unwrap();
        assert_eq!(pong, Event::Pong);
    }
}
