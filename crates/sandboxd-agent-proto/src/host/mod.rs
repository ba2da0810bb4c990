//! The service side of the protocol: async framing, the dial-in [`AgentHub`] and the clients.

mod archive;
mod exec;
mod files;
mod files_meta;
mod hub;
mod kernel;
mod ports;
mod process;
mod secret;
mod wake;

pub use archive::{archive_stream_limit, open_archive, upload_archive, ArchiveDownload};
pub use exec::{ping, run_exec, ExecResult, OutputSink, OUTPUT_SINK};
pub use files::{
    delete_path, list_dir, open_file, upload_file, DirListing, FileDownload, ReadLimits,
    UploadError,
};
pub use files_meta::{make_dir, move_path, stat_path, watch_dir, DirWatch};
pub use hub::{AgentHub, AgentLease, HELLO_TIMEOUT, MAX_IDLE};
pub use kernel::{
    declare_kernel, item_size, list_kernels, shutdown_kernel, start_kernel_run, KernelItem,
    KernelRun,
};
pub use ports::{carry, connect_port, list_ports, Carried};
pub use process::{
    attach_process, kill_all_processes, list_processes, resize_process, signal_process,
    start_process, write_process_stdin, OutputEvent, ProcessInput, ProcessOutput,
};
pub use secret::{claim, AgentKey};
pub use wake::{make_wake_fifo, wake_agent};

use crate::frame::{decode_header, encode_header, json_frame, HEADER_LEN};
use crate::{Frame, FrameKind, ProtoError, MAX_FRAME_LEN};
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Reads one frame; see [`crate::read_frame`] for how a closed peer is reported.
pub async fn read_frame<R: AsyncRead + Unpin + ?Sized>(
    reader: &mut R,
) -> Result<Frame, ProtoError> {
    read_frame_limited(reader, MAX_FRAME_LEN).await
}

/// [`read_frame`] with a lower size limit, for frames that have no reason to be large.
pub(crate) async fn read_frame_limited<R: AsyncRead + Unpin + ?Sized>(
    reader: &mut R,
    max_len: usize,
) -> Result<Frame, ProtoError> {
    let mut header = [0; HEADER_LEN];
    // Usually the whole header in one read, never past it (see `crate::read_frame`).
    let first = reader.read(&mut header).await?;
    if first == 0 {
        return Err(ProtoError::Closed);
    }
    reader.read_exact(&mut header[first..]).await?;
    let (kind, len) = decode_header(header, max_len)?;
    let mut payload = vec![0; len];
    reader.read_exact(&mut payload).await?;
    Ok(Frame { kind, payload })
}

pub async fn write_frame<W: AsyncWrite + Unpin + ?Sized>(
    writer: &mut W,
    kind: FrameKind,
    payload: &[u8],
) -> Result<(), ProtoError> {
    let header = encode_header(kind, payload.len())?;
    writer.write_all(&header).await?;
    writer.write_all(payload).await?;
    writer.flush().await?;
    Ok(())
}

/// Writes `message` as a JSON frame, in one write.
pub async fn write_json<W: AsyncWrite + Unpin + ?Sized, T: Serialize>(
    writer: &mut W,
    message: &T,
) -> Result<(), ProtoError> {
    writer.write_all(&json_frame(message)?).await?;
    writer.flush().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Request;

    #[tokio::test]
    async fn async_and_sync_framing_agree() {
        let mut wire = Vec::new();
        write_json(&mut wire, &Request::Ping).await.unwrap();
        write_frame(&mut wire, FrameKind::Stdin, b"").await.unwrap();
        let mut sync_reader = std::io::Cursor::new(wire.clone());
        assert_eq!(
            crate::read_frame(&mut sync_reader)
                .unwrap()
                .parse_json::<Request>()
                .unwrap(),
            Request::Ping
        );

        let mut reader = wire.as_slice();
        assert_eq!(read_frame(&mut reader).await.unwrap().kind, FrameKind::Json);
        let eof = read_frame(&mut reader).await.unwrap();
        assert_eq!((eof.kind, eof.payload.len()), (FrameKind::Stdin, 0));
        assert!(matches!(
            read_frame(&mut reader).await,
            Err(ProtoError::Closed)
        ));
    }

    #[tokio::test]
    async fn async_reader_refuses_oversize_and_unknown_kinds() {
        let mut oversized: &[u8] = &[2, 0, 0x10, 0, 1];
        assert!(matches!(
            read_frame(&mut oversized).await,
            Err(ProtoError::FrameTooLarge { len }) if len == MAX_FRAME_LEN as u64 + 1
        ));
        let mut over_custom_limit: &[u8] = &[1, 0, 0, 0, 65, b'x'];
        assert!(matches!(
            read_frame_limited(&mut over_custom_limit, 64).await,
            Err(ProtoError::FrameTooLarge { len: 65 })
        ));
        let mut unknown: &[u8] = &[9, 0, 0, 0, 0];
        assert!(matches!(
            read_frame(&mut unknown).await,
            Err(ProtoError::UnknownKind(9))
        ));
        let mut truncated: &[u8] = &[2, 0, 0, 0, 4, b'a'];
        assert!(matches!(
            read_frame(&mut truncated).await,
            Err(ProtoError::Io(_))
        ));
    }
}
