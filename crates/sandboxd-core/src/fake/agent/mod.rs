//! The fake agent: it speaks the real protocol over an in-memory pipe, one request per
//! connection, and answers each request from its topic's file, by the table in [`serve`] (as
//! the real agent's `serve.rs`). Requests it has no topic for are refused as `bad_request`.

mod archive;
mod exec;
mod files;
mod ports;
mod process;
mod store;
mod wire;

pub(super) use archive::ArchiveGate;
pub(super) use store::Files;

use sandboxd_agent_proto::host::{read_frame, write_json};
use sandboxd_agent_proto::{ErrorCode, Event, Request};
use tokio::io::DuplexStream;
use wire::refuse;

/// Answers one request on the connection, as the real agent would.
pub(super) async fn serve(mut stream: DuplexStream, files: Files, gate: ArchiveGate) -> Option<()> {
    let request: Request = read_frame(&mut stream).await.ok()?.parse_json().ok()?;
    let (c, f) = (&mut stream, &files);
    match request {
        Request::Ping => write_json(c, &Event::Pong).await.ok(),
        Request::Exec(request) => exec::exec(c, f, request).await,
        Request::ListDir { path, .. } => files::list_dir(c, f, &path).await,
        Request::ReadFile { path, .. } => files::read_file(c, f, &path).await,
        Request::WriteFile { path, .. } => files::write_file(c, f, &path).await,
        Request::Delete { path, .. } => files::delete(c, f, &path).await,
        Request::Stat { path } => files::stat(c, f, &path).await,
        Request::MakeDir { path, .. } => files::make_dir(c, f, &path).await,
        Request::Move {
            from,
            to,
            overwrite,
        } => files::move_path(c, f, (&from, &to), overwrite).await,
        Request::Watch { path, .. } => files::watch(c, f, &path).await,
        Request::ReadArchive { path, max_bytes } => {
            archive::read_archive(c, f, (&path, max_bytes), gate).await
        }
        Request::WriteArchive { path, .. } => archive::write_archive(c, f, &path).await,
        Request::ProcessList => process::list(c).await,
        Request::KillAll => process::kill_all(c).await,
        Request::ListPorts { .. } => ports::list(c).await,
        Request::PortConnect { port } => ports::connect(c, port).await,
        _ => refuse(c, ErrorCode::BadRequest, "the fake agent does not do that").await,
    }
}
