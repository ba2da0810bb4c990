//! Framing: `kind: u8`, `len: u32` big-endian, then `len` payload bytes.

use crate::error::ProtoError;
use crate::limits::MAX_FRAME_LEN;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::io::{ErrorKind, Read, Write};

/// Bytes before the payload: the kind and the length.
pub(crate) const HEADER_LEN: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum FrameKind {
    /// A UTF-8 JSON object: a `Request` or an `Event`.
    Json = 1,
    /// Process output, agent to service.
    Stdout = 2,
    /// Process error output, agent to service.
    Stderr = 3,
    /// Process input, service to agent; an empty payload closes the process's stdin.
    Stdin = 4,
}

impl TryFrom<u8> for FrameKind {
    type Error = ProtoError;

    fn try_from(byte: u8) -> Result<Self, ProtoError> {
        match byte {
            1 => Ok(Self::Json),
            2 => Ok(Self::Stdout),
            3 => Ok(Self::Stderr),
            4 => Ok(Self::Stdin),
            other => Err(ProtoError::UnknownKind(other)),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub kind: FrameKind,
    pub payload: Vec<u8>,
}

impl Frame {
    /// Decodes a JSON frame's payload; any other kind of frame is `Unexpected`.
    pub fn parse_json<T: DeserializeOwned>(&self) -> Result<T, ProtoError> {
        if self.kind != FrameKind::Json {
            return Err(ProtoError::Unexpected(format!(
                "a {:?} frame where a JSON message was expected",
                self.kind
            )));
        }
        Ok(serde_json::from_slice(&self.payload)?)
    }
}

pub(crate) fn encode_header(kind: FrameKind, len: usize) -> Result<[u8; HEADER_LEN], ProtoError> {
    if len > MAX_FRAME_LEN {
        return Err(ProtoError::FrameTooLarge { len: len as u64 });
    }
    let mut header = [0; HEADER_LEN];
    header[0] = kind as u8;
    let wire_len = u32::try_from(len).map_err(|_| ProtoError::FrameTooLarge { len: len as u64 })?;
    header[1..].copy_from_slice(&wire_len.to_be_bytes());
    Ok(header)
}

/// Validates a header against `max_len` (at most [`MAX_FRAME_LEN`]).
pub(crate) fn decode_header(
    header: [u8; HEADER_LEN],
    max_len: usize,
) -> Result<(FrameKind, usize), ProtoError> {
    let kind = FrameKind::try_from(header[0])?;
    let len = u32::from_be_bytes([header[1], header[2], header[3], header[4]]);
    match usize::try_from(len) {
        Ok(len) if len <= max_len => Ok((kind, len)),
        _ => Err(ProtoError::FrameTooLarge { len: len.into() }),
    }
}

/// Reads one frame. A peer that closes cleanly between frames gives [`ProtoError::Closed`];
/// one that closes inside a frame gives an `UnexpectedEof` i/o error.
pub fn read_frame<R: Read + ?Sized>(reader: &mut R) -> Result<Frame, ProtoError> {
    let mut header = [0; HEADER_LEN];
    // Usually the whole header in one read; never more than the header, so nothing past
    // this frame is taken from the stream.
    let first = loop {
        match reader.read(&mut header) {
            Ok(0) => return Err(ProtoError::Closed),
            Ok(read) => break read,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        }
    };
    reader.read_exact(&mut header[first..])?;
    let (kind, len) = decode_header(header, MAX_FRAME_LEN)?;
    let mut payload = vec![0; len];
    reader.read_exact(&mut payload)?;
    Ok(Frame { kind, payload })
}

pub fn write_frame<W: Write + ?Sized>(
    writer: &mut W,
    kind: FrameKind,
    payload: &[u8],
) -> Result<(), ProtoError> {
    let header = encode_header(kind, payload.len())?;
    writer.write_all(&header)?;
    writer.write_all(payload)?;
    writer.flush()?;
    Ok(())
}

/// Writes `message` as a JSON frame, in one write.
pub fn write_json<W: Write + ?Sized, T: Serialize>(
    writer: &mut W,
    message: &T,
) -> Result<(), ProtoError> {
    writer.write_all(&json_frame(message)?)?;
    writer.flush()?;
    Ok(())
}

/// `message` as a whole JSON frame, header and payload in one buffer, so it goes out in one
/// write and the peer wakes once for it.
pub(crate) fn json_frame<T: Serialize>(message: &T) -> Result<Vec<u8>, ProtoError> {
    let mut frame = vec![0; HEADER_LEN];
    serde_json::to_writer(&mut frame, message)?;
    let header = encode_header(FrameKind::Json, frame.len() - HEADER_LEN)?;
    frame[..HEADER_LEN].copy_from_slice(&header);
    Ok(frame)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Event, Request};
    use std::io::Cursor;

    fn encoded(kind: FrameKind, payload: &[u8]) -> Vec<u8> {
        let mut buffer = Vec::new();
        write_frame(&mut buffer, kind, payload).unwrap();
        buffer
    }

    #[test]
    fn header_is_kind_then_big_endian_length() {
        assert_eq!(
            encoded(FrameKind::Stderr, b"abc"),
            [3, 0, 0, 0, 3, b'a', b'b', b'c']
        );
        assert_eq!(encoded(FrameKind::Stdin, b""), [4, 0, 0, 0, 0]);
    }

    #[test]
    fn frames_round_trip_back_to_back() {
        let mut wire = encoded(FrameKind::Stdout, b"out");
        wire.extend(encoded(FrameKind::Stdin, b""));
        wire.extend(encoded(FrameKind::Json, &vec![b'x'; MAX_FRAME_LEN]));
        let mut reader = Cursor::new(wire);
        let first = read_frame(&mut reader).unwrap();
        assert_eq!(
            (first.kind, first.payload.as_slice()),
            (FrameKind::Stdout, &b"out"[..])
        );
        let second = read_frame(&mut reader).unwrap();
        assert_eq!((second.kind, second.payload.len()), (FrameKind::Stdin, 0));
        let third = read_frame(&mut reader).unwrap();
        assert_eq!(third.payload.len(), MAX_FRAME_LEN);
        assert!(matches!(read_frame(&mut reader), Err(ProtoError::Closed)));
    }

    #[test]
    fn oversized_frame_is_refused_from_its_header() {
        // Only the header is there: the reader must fail on it, not try to read 4 GiB.
        let mut reader = Cursor::new(vec![2, 0xff, 0xff, 0xff, 0xff]);
        assert!(matches!(
            read_frame(&mut reader),
            Err(ProtoError::FrameTooLarge { len: 0xffff_ffff })
        ));
        let one_over = (u32::try_from(MAX_FRAME_LEN).unwrap() + 1).to_be_bytes();
        let mut reader = Cursor::new([&[1], &one_over[..]].concat());
        assert!(matches!(
            read_frame(&mut reader),
            Err(ProtoError::FrameTooLarge { .. })
        ));
    }

    #[test]
    fn writer_refuses_oversized_payload() {
        let mut sink = Vec::new();
        let result = write_frame(&mut sink, FrameKind::Stdout, &vec![0; MAX_FRAME_LEN + 1]);
        assert!(matches!(result, Err(ProtoError::FrameTooLarge { .. })));
        assert!(sink.is_empty());
    }

    #[test]
    fn unknown_kind_is_an_error() {
        for kind in [0, 5, 255] {
            let mut reader = Cursor::new(vec![kind, 0, 0, 0, 0]);
            assert!(
                matches!(read_frame(&mut reader), Err(ProtoError::UnknownKind(k)) if k == kind)
            );
        }
    }

    #[test]
    fn eof_inside_a_frame_is_an_io_error() {
        let mut wire = encoded(FrameKind::Stdout, b"hello");
        wire.truncate(7);
        let result = read_frame(&mut Cursor::new(wire));
        assert!(matches!(result, Err(ProtoError::Io(e)) if e.kind() == ErrorKind::UnexpectedEof));
        let result = read_frame(&mut Cursor::new(vec![1, 0]));
        assert!(matches!(result, Err(ProtoError::Io(e)) if e.kind() == ErrorKind::UnexpectedEof));
    }

    #[test]
    fn json_frames_carry_messages() {
        let wire = {
            let mut buffer = Vec::new();
            write_json(&mut buffer, &Request::Ping).unwrap();
            buffer
        };
        let frame = read_frame(&mut Cursor::new(wire)).unwrap();
        assert_eq!(frame.payload, br#"{"op":"ping"}"#);
        assert_eq!(frame.parse_json::<Request>().unwrap(), Request::Ping);
        let not_json = Frame {
            kind: FrameKind::Stdout,
            payload: br#"{"type":"pong"}"#.to_vec(),
        };
        assert!(matches!(
            not_json.parse_json::<Event>(),
            Err(ProtoError::Unexpected(_))
        ));
        let garbage = Frame {
            kind: FrameKind::Json,
            payload: b"{nope".to_vec(),
        };
        assert!(matches!(
            garbage.parse_json::<Event>(),
            Err(ProtoError::BadJson(_))
        ));
    }
}
