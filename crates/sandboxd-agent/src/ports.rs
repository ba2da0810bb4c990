//! Ports inside the sandbox: a connection to one on the sandbox's loopback, carried over the
//! agent connection, and the listing of those listening. Whatever the network mode, the
//! agent is in the sandbox's network namespace, so its loopback is the sandbox's own.

use sandboxd_agent_proto::{
    read_frame, write_frame, write_json, ErrorCode, Event, FrameKind, ListeningPort, PortsEvent,
    PortsRequest, ProtoError, Request, OUTPUT_CHUNK_LEN,
};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::thread;
use std::time::Duration;

/// How long a connect to the loopback may take: it answers at once or not at all.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The stack of the thread that carries the port's bytes to the service.
const PUMP_STACK_SIZE: usize = 64 * 1024;
/// Bytes of /proc/net/tcp{,6} read at most: far more than 64k sockets' lines.
const MAX_PROC_NET_BYTES: u64 = 16 << 20;
/// Processes and descriptors looked through for the sockets' owners.
const MAX_PROCESSES: usize = 4096;
const MAX_FDS_PER_PROCESS: usize = 4096;
/// A socket's state in /proc/net/tcp: listening.
const TCP_LISTEN: &str = "0A";

/// The table of the port requests: each to its handler.
pub(crate) fn serve(c: &mut UnixStream, request: PortsRequest) -> Result<(), ProtoError> {
    match request {
        PortsRequest::PortConnect { port } => connect(c, port),
        PortsRequest::ListPorts { max_ports } => list(c, max_ports),
    }
}

/// Connects to `port` on the loopback and carries bytes both ways until either side ends.
/// The connection is not reusable after, so this always ends it with an `Err`.
pub fn connect(connection: &mut UnixStream, port: u16) -> Result<(), ProtoError> {
    let addresses = [
        SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        SocketAddr::from((Ipv6Addr::LOCALHOST, port)),
    ];
    let mut refused = None;
    let mut upstream = None;
    for address in addresses {
        match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
            Ok(stream) => {
                upstream = Some(stream);
                break;
            }
            // Refused on either address means nothing listens; another error (no IPv6 in
            // the sandbox) says less.
            Err(e)
                if refused
                    .as_ref()
                    .is_none_or(|r: &io::Error| r.kind() != ErrorKind::ConnectionRefused) =>
            {
                refused = Some(e)
            }
            Err(_) => {}
        }
    }
    let Some(upstream) = upstream else {
        let error = refused.unwrap_or_else(|| ErrorKind::ConnectionRefused.into());
        write_json(connection, &refusal_for_connect(port, error))?;
        return Ok(());
    };
    let _ = upstream.set_nodelay(true);
    write_json(connection, &PortsEvent::PortConnected)?;
    let mut from_port = upstream.try_clone()?;
    let mut to_service = connection.try_clone()?;
    let pump = thread::Builder::new()
        .name("port".into())
        .stack_size(PUMP_STACK_SIZE)
        .spawn(move || {
            let mut buffer = vec![0; OUTPUT_CHUNK_LEN];
            loop {
                match from_port.read(&mut buffer) {
                    Ok(0) | Err(_) => {
                        let _ = write_frame(&mut to_service, FrameKind::Stdout, &[]);
                        return;
                    }
                    Ok(read) => {
                        if write_frame(&mut to_service, FrameKind::Stdout, &buffer[..read]).is_err()
                        {
                            return;
                        }
                    }
                }
            }
        })?;
    let mut to_port = upstream;
    let ended = carry_to_port(connection, &mut to_port);
    // Ends the pump's read, and the service's side of the tunnel with it.
    let _ = to_port.shutdown(Shutdown::Both);
    let _ = connection.shutdown(Shutdown::Both);
    let _ = pump.join();
    Err(ended.err().unwrap_or(ProtoError::Closed))
}

/// The refusal of a connection to `port` on the sandbox's loopback.
fn refusal_for_connect(port: u16, error: io::Error) -> Event {
    let code = match error.kind() {
        io::ErrorKind::ConnectionRefused => ErrorCode::ConnectionRefused,
        _ => ErrorCode::Io,
    };
    Event::Error {
        code,
        message: format!("nothing answers on port {port} in the sandbox: {error}"),
    }
}

/// Writes the service's stdin frames to the port until the service ends the tunnel.
fn carry_to_port(connection: &mut UnixStream, port: &mut TcpStream) -> Result<(), ProtoError> {
    loop {
        let frame = read_frame(connection)?;
        match frame.kind {
            FrameKind::Stdin if frame.payload.is_empty() => {
                let _ = port.shutdown(Shutdown::Write);
            }
            FrameKind::Stdin => port.write_all(&frame.payload)?,
            FrameKind::Json if frame.parse_json::<Request>().ok() == Some(Request::Cancel) => {
                return Ok(())
            }
            _ => return Err(ProtoError::Unexpected("a frame in a port tunnel".into())),
        }
    }
}

/// Answers with the TCP ports listening in the sandbox and the processes holding them.
pub fn list(connection: &mut UnixStream, max_ports: u32) -> Result<(), ProtoError> {
    let mut sockets = Vec::new();
    for (file, v6) in [("/proc/net/tcp", false), ("/proc/net/tcp6", true)] {
        let mut text = String::new();
        if let Ok(handle) = fs::File::open(file) {
            let _ = handle.take(MAX_PROC_NET_BYTES).read_to_string(&mut text);
        }
        sockets.extend(text.lines().skip(1).filter_map(|line| listening(line, v6)));
    }
    // One entry per port and address (a socket per thread with SO_REUSEPORT is one port).
    let mut seen = HashSet::new();
    sockets.retain(|(port, address, _)| seen.insert((*port, address.clone())));
    sockets.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    sockets.truncate(max_ports as usize);
    let owners = owners(sockets.iter().map(|(_, _, inode)| *inode).collect());
    let ports = sockets
        .into_iter()
        .map(|(port, address, inode)| {
            let pid = owners.get(&inode).copied();
            ListeningPort {
                port,
                address,
                pid,
                program: pid.and_then(program_name),
            }
        })
        .collect();
    write_json(connection, &PortsEvent::Ports { ports })
}

/// A listening socket's port, address and inode, from a line of /proc/net/tcp{,6}.
fn listening(line: &str, v6: bool) -> Option<(u16, String, u64)> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.get(3) != Some(&TCP_LISTEN) {
        return None;
    }
    let (address, port) = fields.get(1)?.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let inode = fields.get(9)?.parse().ok()?;
    // The address is in 32-bit words, each in the kernel's (little-endian) byte order.
    let words: Vec<u32> = (0..address.len() / 8)
        .map(|i| u32::from_str_radix(&address[i * 8..i * 8 + 8], 16).map(u32::from_be))
        .collect::<Result<_, _>>()
        .ok()?;
    let address = match (v6, words.as_slice()) {
        (false, [word]) => Ipv4Addr::from(word.to_be_bytes()).to_string(),
        (true, [a, b, c, d]) => {
            let mut bytes = [0u8; 16];
            for (i, word) in [a, b, c, d].iter().enumerate() {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word.to_be_bytes());
            }
            Ipv6Addr::from(bytes).to_string()
        }
        _ => return None,
    };
    Some((port, address, inode))
}

/// The process holding each socket inode, looked for in /proc/*/fd, within bounds.
fn owners(mut wanted: HashSet<u64>) -> HashMap<u64, u32> {
    let mut found = HashMap::new();
    let Ok(processes) = fs::read_dir("/proc") else {
        return found;
    };
    for entry in processes.flatten().take(MAX_PROCESSES) {
        if wanted.is_empty() {
            break;
        }
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten().take(MAX_FDS_PER_PROCESS) {
            let Ok(target) = fs::read_link(fd.path()) else {
                continue;
            };
            let inode = target
                .to_str()
                .and_then(|t| t.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok());
            if let Some(inode) = inode.filter(|i| wanted.remove(i)) {
                found.insert(inode, pid);
            }
        }
    }
    found
}

fn program_name(pid: u32) -> Option<String> {
    let mut name = String::new();
    fs::File::open(format!("/proc/{pid}/comm"))
        .ok()?
        .take(64)
        .read_to_string(&mut name)
        .ok()?;
    Some(name.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn proc_net_lines_give_listening_ports_and_addresses() {
        let v4 = "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 61000        0 4242 1 0000000000000000 100 0 0 10 0";
        assert_eq!(listening(v4, false), Some((8080, "127.0.0.1".into(), 4242)));
        let established = v4.replace(" 0A ", " 01 ");
        assert_eq!(listening(&established, false), None);
        let v6 = "   0: 00000000000000000000000001000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 61000 0 77 1";
        assert_eq!(listening(v6, true), Some((80, "::1".into(), 77)));
    }

    #[test]
    fn a_listener_of_this_process_is_listed_with_its_pid() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (mut agent, mut service) = UnixStream::pair().unwrap();
        list(&mut agent, 10_000).unwrap();
        let Event::Ports(PortsEvent::Ports { ports }) =
            read_frame(&mut service).unwrap().parse_json().unwrap()
        else {
            panic!("not a port list")
        };
        let ours = ports
            .iter()
            .find(|p| p.port == port)
            .expect("our port listed");
        assert_eq!(ours.address, "127.0.0.1");
        // The owners are looked for among the first MAX_PROCESSES of /proc only; a test host
        // (unlike a sandbox, held to its process limit) may run more, ours among those beyond.
        let crowded = fs::read_dir("/proc").unwrap().count() > MAX_PROCESSES;
        let found = ours.pid == Some(std::process::id());
        assert!(found || (crowded && ours.pid.is_none()), "{ours:?}");
    }

    #[test]
    fn a_tunnel_carries_bytes_both_ways_and_a_closed_port_is_refused() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let echo = thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut received = Vec::new();
            stream.read_to_end(&mut received).unwrap();
            stream.write_all(&received).unwrap();
        });
        let (mut agent, mut service) = UnixStream::pair().unwrap();
        let tunnel = thread::spawn(move || connect(&mut agent, port));
        let event: Event = read_frame(&mut service).unwrap().parse_json().unwrap();
        assert_eq!(event, Event::Ports(PortsEvent::PortConnected));
        let data: Vec<u8> = (0..200_000u32).map(|i| i.to_le_bytes()[0]).collect();
        for chunk in data.chunks(60_000) {
            write_frame(&mut service, FrameKind::Stdin, chunk).unwrap();
        }
        write_frame(&mut service, FrameKind::Stdin, &[]).unwrap();
        let mut echoed = Vec::new();
        loop {
            let frame = read_frame(&mut service).unwrap();
            assert_eq!(frame.kind, FrameKind::Stdout);
            if frame.payload.is_empty() {
                break;
            }
            echoed.extend(frame.payload);
        }
        assert!(echoed == data, "the echo differs");
        echo.join().unwrap();
        drop(service);
        assert!(
            tunnel.join().unwrap().is_err(),
            "a tunnel's connection is not reused"
        );

        let closed = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let (mut agent, mut service) = UnixStream::pair().unwrap();
        connect(&mut agent, port).unwrap();
        let event: Event = read_frame(&mut service).unwrap().parse_json().unwrap();
        assert!(
            matches!(&event, Event::Error { code, .. } if code == "connection_refused"),
            "{event:?}"
        );
    }
}
