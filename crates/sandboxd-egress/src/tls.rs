//! TLS redirected from port 443: the ClientHello's server name picks the host, and the
//! connection is passed through untouched (the proxy never sees the plaintext).

use crate::policy::ConnectionRecord;
use crate::policy::Door;
use crate::policy::Refusal;
use crate::state::Client;
use crate::state::Shared;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const HTTPS_PORT: u16 = 443;
/// A fatal `access_denied` alert (TLS 1.2 record framing, which TLS 1.3 clients accept before
/// the handshake): the client reports that the peer denied access, rather than a reset.
const ACCESS_DENIED_ALERT: [u8; 7] = [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x31];

pub(crate) async fn serve(shared: Arc<Shared>, mut stream: TcpStream, client: Client) {
    let session = &client.session;
    let (hello, name) = match read_server_name(&shared, &mut stream).await {
        Ok(read) => read,
        Err(refusal) => {
            shared.refused(session, Door::Tls, "", HTTPS_PORT, refusal);
            let _ = stream.write_all(&ACCESS_DENIED_ALERT).await;
            return;
        }
    };
    if shared.intercepts(&client, &name, HTTPS_PORT) {
        let stream = crate::counted::Counted::replaying(hello, stream);
        let intercepted = crate::intercept::serve(
            shared.clone(),
            client.clone(),
            stream,
            name,
            HTTPS_PORT,
            Door::Tls,
        );
        return intercepted.await;
    }
    let mut upstream = match shared.open(session, &name, HTTPS_PORT).await {
        Ok(upstream) => upstream,
        Err(refusal) => {
            shared.refused(session, Door::Tls, &name, HTTPS_PORT, refusal);
            let _ = stream.write_all(&ACCESS_DENIED_ALERT).await;
            return;
        }
    };
    let mut record = ConnectionRecord::allowed(session, Door::Tls, &name, HTTPS_PORT);
    if upstream.write_all(&hello).await.is_err() {
        return shared.policy.record(record);
    }
    record.bytes_sent = hello.len() as u64;
    shared.tunnel(stream, upstream, record).await;
}

/// Reads the ClientHello (bounded in size and time) and returns the bytes read with the server
/// name it asks for; a connection that is not TLS, or names no server, is refused.
pub(crate) async fn read_server_name(
    shared: &Shared,
    stream: &mut TcpStream,
) -> Result<(Vec<u8>, String), Refusal> {
    let limit = shared.settings.max_header_bytes;
    let read = async {
        let mut acceptor = rustls::server::Acceptor::default();
        let mut hello = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let n = stream
                .read(&mut chunk)
                .await
                .map_err(|_| Refusal::NotHttp("the connection closed before a TLS ClientHello"))?;
            if n == 0 {
                return Err(Refusal::NotHttp(
                    "the connection closed before a TLS ClientHello",
                ));
            }
            hello.extend_from_slice(&chunk[..n]);
            if hello.len() > limit {
                return Err(Refusal::NotHttp("the TLS ClientHello is too long"));
            }
            acceptor
                .read_tls(&mut &chunk[..n])
                .map_err(|_| Refusal::NotHttp("port 443 carries TLS only"))?;
            match acceptor.accept() {
                Ok(Some(accepted)) => {
                    let name = accepted.client_hello().server_name().map(str::to_string);
                    return name.map(|name| (hello, name)).ok_or(Refusal::NotHttp(
                        "a TLS connection must name its server (SNI)",
                    ));
                }
                Ok(None) => continue,
                Err(_) => return Err(Refusal::NotHttp("port 443 carries TLS only")),
            }
        }
    };
    tokio::time::timeout(shared.settings.header_timeout, read)
        .await
        .unwrap_or(Err(Refusal::NotHttp("no TLS ClientHello in time")))
}
