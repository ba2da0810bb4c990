//! Async framing for the service side, the same bytes as the std framing in `crate::frame`.

use crate::error::ProtoError;
use crate::frame::{decode_header, encode_header, json_frame, HEADER_LEN};
use crate::frame::{Frame, FrameKind};
use crate::limits::MAX_FRAME_LEN;
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Reads one frame; see [`crate::frame::read_frame`] for how a closed peer is reported.
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
    // Usually the whole header in one read, never past it (see `crate::frame::read_frame`).
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
    use crate::message::Request;

    #[tokio::test]
    async fn async_and_sync_framing_agree() {
        let mut wire = Vec::new();
        write_json(&mut wire, &Request::Ping).await.unwrap();
        write_frame(&mut wire, FrameKind::Stdin, b"").await.unwrap();
        let mut sync_reader = std::io::Cursor::new(wire.clone());
        assert_eq!(
            crate::frame::read_frame(&mut sync_reader)
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
