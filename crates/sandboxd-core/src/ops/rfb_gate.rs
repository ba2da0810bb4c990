//! The viewer's half of a live view's VNC connection (RFB 3.8, RFC 6143), read message by
//! message so that the person's keyboard, mouse, clipboard and screen-size messages reach the
//! sandbox only while they have taken over. View-only is enforced here, in the service, not by
//! the page: a page that sends input anyway has it dropped.
//!
//! Every client message has a length known from its first bytes, so the gate forwards whole
//! messages or none; one it cannot size ends the connection, since guessing would let input
//! through inside something that looked harmless. For the same reason the encodings a viewer
//! asks for are narrowed to those that change no client message's framing. The server's half
//! (the screen) is not parsed at all: it passes through in bounded chunks.

use crate::error::Error;

/// The largest client message accepted: a clipboard's text, mostly.
pub(crate) const MAX_MESSAGE: usize = 1 << 20;

/// The only protocol version and security type spoken: the service starts the sandbox's VNC
/// server on its loopback without a password, and reaches it only through the agent.
const PROTOCOL_VERSION: &[u8; 12] = b"RFB 003.008\n";
const SECURITY_NONE: u8 = 1;

/// Keys remembered as held, to release them when control is given back.
const MAX_HELD_KEYS: usize = 64;

/// Encodings and pseudo-encodings a viewer may ask for (noVNC asks for these): the framing of
/// client messages stays as parsed here with any of them. One not listed is left out of the
/// viewer's SetEncodings (e.g. ExtendedMouseButtons, -316, which lengthens PointerEvent).
const ALLOWED_ENCODINGS: &[i32] = &[
    0,              // Raw
    1,              // CopyRect
    2,              // RRE
    5,              // Hextile
    6,              // zlib
    7,              // Tight
    15,             // TRLE
    16,             // ZRLE
    21,             // JPEG
    50,             // H.264
    -223,           // DesktopSize
    -224,           // LastRect
    -239,           // Cursor
    -240,           // XCursor
    -257,           // QEMUPointerMotionChange
    -258,           // QEMUExtendedKeyEvent: its message is sized below
    -261,           // LEDState
    -307,           // DesktopName
    -308,           // ExtendedDesktopSize: SetDesktopSize is sized below
    -309,           // xvp
    -312,           // Fence
    -313,           // ContinuousUpdates
    -314,           // CursorWithAlpha
    0x574d_5664,    // VMware cursor
    -1_063_131_698, // ExtendedClipboard (0xc0a1e5ce): its negative lengths are sized below
];

/// JPEG quality (-32..-23) and compression level (-256..-247) pseudo-encodings.
fn allowed_encoding(encoding: i32) -> bool {
    ALLOWED_ENCODINGS.contains(&encoding)
        || (-32..=-23).contains(&encoding)
        || (-256..=-247).contains(&encoding)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Version,
    Security,
    ClientInit,
    Messages,
}

/// What a complete client message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Asks for the screen (pixel format, updates, fences): always delivered.
    Screen,
    /// The encodings asked for: delivered narrowed.
    Encodings,
    Key,
    QemuKey,
    Pointer,
    /// Clipboard, xvp (reboot, shutdown) or a screen-size change: input like keys.
    OtherInput,
}

/// The viewer-to-sandbox stream of one live view.
#[derive(Debug)]
pub struct InputGate {
    stage: Stage,
    pending: Vec<u8>,
    control: bool,
    held_keys: Vec<u32>,
    pointer: Option<(u16, u16, u8)>,
    refused: u64,
}

impl Default for InputGate {
    fn default() -> Self {
        InputGate {
            stage: Stage::Version,
            pending: Vec::new(),
            control: false,
            held_keys: Vec::new(),
            pointer: None,
            refused: 0,
        }
    }
}

impl InputGate {
    /// Whether the viewer's input is delivered.
    pub fn in_control(&self) -> bool {
        self.control
    }

    /// Input messages dropped so far because the viewer had not taken over.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// From now on input is delivered.
    pub fn take_over(&mut self) {
        self.control = true;
    }

    /// View-only again: appends to `out` what releases the keys and buttons still held, so
    /// nothing stays pressed on the screen.
    pub fn give_back(&mut self, out: &mut Vec<u8>) {
        if !self.control {
            return;
        }
        self.control = false;
        if self.stage != Stage::Messages {
            return;
        }
        for key in self.held_keys.drain(..) {
            out.extend_from_slice(&[4, 0, 0, 0]);
            out.extend_from_slice(&key.to_be_bytes());
        }
        if let Some((x, y, buttons)) = self.pointer {
            if buttons != 0 {
                out.extend_from_slice(&[5, 0]);
                out.extend_from_slice(&x.to_be_bytes());
                out.extend_from_slice(&y.to_be_bytes());
                self.pointer = Some((x, y, 0));
            }
        }
    }

    /// Takes bytes from the viewer and appends to `out` the ones to deliver: whole messages,
    /// input only in control. An error ends the connection.
    pub fn feed(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let mut pending = std::mem::take(&mut self.pending);
        pending.extend_from_slice(data);
        let mut at = 0;
        // Each turn consumes one whole message (at least one byte), so this ends.
        while let Some(length) = self.next_length(&pending[at..])? {
            let end = at + length;
            if end > pending.len() {
                break;
            }
            self.pass(&pending[at..end], out)?;
            at = end;
        }
        pending.drain(..at);
        self.pending = pending;
        Ok(())
    }

    /// The length of the next unit, once enough of it is there to say (`None` before).
    fn next_length(&self, buf: &[u8]) -> Result<Option<usize>, Error> {
        if buf.is_empty() {
            return Ok(None);
        }
        let length = match self.stage {
            Stage::Version => Some(PROTOCOL_VERSION.len()),
            Stage::Security | Stage::ClientInit => Some(1),
            Stage::Messages => message_shape(buf)?.map(|(length, _)| length),
        };
        match length {
            Some(length) if length > MAX_MESSAGE => Err(refused(format!(
                "a message of {length} bytes (at most {MAX_MESSAGE})"
            ))),
            other => Ok(other),
        }
    }

    /// One whole unit: checked, and appended to `out` if it is delivered.
    fn pass(&mut self, unit: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        match self.stage {
            Stage::Version => {
                if unit != PROTOCOL_VERSION {
                    return Err(refused("a protocol version other than RFB 3.8".into()));
                }
                self.stage = Stage::Security;
                out.extend_from_slice(unit);
            }
            Stage::Security => {
                if unit != [SECURITY_NONE] {
                    return Err(refused(format!("security type {}", unit[0])));
                }
                self.stage = Stage::ClientInit;
                out.extend_from_slice(unit);
            }
            Stage::ClientInit => {
                // Shared, always: the agent's own actions and other viewers stay connected.
                self.stage = Stage::Messages;
                out.push(1);
            }
            Stage::Messages => {
                let Some((_, kind)) = message_shape(unit)? else {
                    return Ok(());
                };
                match kind {
                    Kind::Screen => out.extend_from_slice(unit),
                    Kind::Encodings => narrow_encodings(unit, out),
                    _ if !self.control => self.refused += 1,
                    Kind::Key => {
                        self.note_key(unit[1] != 0, be32(&unit[4..8]));
                        out.extend_from_slice(unit);
                    }
                    Kind::QemuKey => {
                        self.note_key(be16(&unit[2..4]) != 0, be32(&unit[4..8]));
                        out.extend_from_slice(unit);
                    }
                    Kind::Pointer => {
                        self.pointer = Some((be16(&unit[2..4]), be16(&unit[4..6]), unit[1]));
                        out.extend_from_slice(unit);
                    }
                    Kind::OtherInput => out.extend_from_slice(unit),
                }
            }
        }
        Ok(())
    }

    fn note_key(&mut self, down: bool, keysym: u32) {
        self.held_keys.retain(|&k| k != keysym);
        if down && self.held_keys.len() < MAX_HELD_KEYS {
            self.held_keys.push(keysym);
        }
    }
}

/// A client message's length and kind from its first bytes (`None` until they are there).
fn message_shape(buf: &[u8]) -> Result<Option<(usize, Kind)>, Error> {
    let Some(&kind) = buf.first() else {
        return Ok(None);
    };
    let header = |n: usize| buf.get(..n);
    let shape = match kind {
        0 => Some((20, Kind::Screen)),
        2 => header(4).map(|h| (4 + 4 * usize::from(be16(&h[2..4])), Kind::Encodings)),
        3 => Some((10, Kind::Screen)),
        4 => Some((8, Kind::Key)),
        5 => Some((6, Kind::Pointer)),
        // ClientCutText; a negative length is the extended clipboard's.
        6 => header(8).map(|h| {
            let length = i32::from_be_bytes([h[4], h[5], h[6], h[7]]).unsigned_abs();
            let length = usize::try_from(length).unwrap_or(usize::MAX);
            (8usize.saturating_add(length), Kind::OtherInput)
        }),
        150 => Some((10, Kind::Screen)),
        248 => header(9).map(|h| (9 + usize::from(h[8]), Kind::Screen)),
        250 => Some((4, Kind::OtherInput)),
        251 => header(8).map(|h| (8 + 16 * usize::from(h[6]), Kind::OtherInput)),
        255 => match header(2) {
            None => None,
            Some([_, 0]) => Some((12, Kind::QemuKey)),
            Some(h) => return Err(refused(format!("QEMU client message {}", h[1]))),
        },
        other => return Err(refused(format!("client message type {other}"))),
    };
    Ok(shape)
}

/// SetEncodings with only the allowed encodings.
fn narrow_encodings(message: &[u8], out: &mut Vec<u8>) {
    let kept: Vec<&[u8]> = message[4..]
        .chunks_exact(4)
        .filter(|e| allowed_encoding(i32::from_be_bytes([e[0], e[1], e[2], e[3]])))
        .collect();
    let count = u16::try_from(kept.len()).expect("at most the message's own count");
    out.extend_from_slice(&[2, 0]);
    out.extend_from_slice(&count.to_be_bytes());
    for encoding in kept {
        out.extend_from_slice(encoding);
    }
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn refused(what: String) -> Error {
    Error::bad_request(
        "invalid_vnc_message",
        format!("the live view refused {what} from the viewer; it speaks RFB 3.8 without a password, as noVNC does"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gate past the handshake, and what the handshake delivered.
    fn connected() -> (InputGate, Vec<u8>) {
        let mut gate = InputGate::default();
        let mut out = Vec::new();
        gate.feed(b"RFB 003.008\n\x01\x00", &mut out).unwrap();
        (gate, out)
    }

    const KEY_A_DOWN: [u8; 8] = [4, 1, 0, 0, 0, 0, 0, 0x61];
    const CLICK_AT_10_20: [u8; 6] = [5, 1, 0, 10, 0, 20];
    const UPDATE_REQUEST: [u8; 10] = [3, 1, 0, 0, 0, 0, 4, 0, 3, 0];

    #[test]
    fn the_handshake_passes_and_the_session_is_shared() {
        let (_, out) = connected();
        assert_eq!(out, b"RFB 003.008\n\x01\x01");
        let mut out = Vec::new();
        let wrong = InputGate::default().feed(b"RFB 003.003\n", &mut out);
        assert!(wrong.is_err());
        let mut gate = InputGate::default();
        assert!(
            gate.feed(b"RFB 003.008\n\x02", &mut out).is_err(),
            "VNC auth"
        );
    }

    #[test]
    fn input_is_dropped_until_taken_over_and_the_screen_always_passes() {
        let (mut gate, _) = connected();
        let mut out = Vec::new();
        let mut stream = Vec::new();
        stream.extend_from_slice(&KEY_A_DOWN);
        stream.extend_from_slice(&CLICK_AT_10_20);
        stream.extend_from_slice(&UPDATE_REQUEST);
        stream.extend_from_slice(&[6, 0, 0, 0, 0, 0, 0, 3, b'a', b'b', b'c']);
        gate.feed(&stream, &mut out).unwrap();
        assert_eq!(out, UPDATE_REQUEST, "only the update request");
        assert_eq!(gate.refused(), 3);

        gate.take_over();
        out.clear();
        gate.feed(&stream, &mut out).unwrap();
        assert_eq!(out, stream, "everything, unchanged");
    }

    #[test]
    fn messages_split_anywhere_are_judged_whole() {
        let (mut gate, _) = connected();
        gate.take_over();
        let mut stream = Vec::new();
        stream.extend_from_slice(&CLICK_AT_10_20);
        stream.extend_from_slice(&[6, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe, 9, 9]);
        stream.extend_from_slice(&KEY_A_DOWN);
        let mut out = Vec::new();
        for byte in &stream {
            gate.feed(std::slice::from_ref(byte), &mut out).unwrap();
        }
        assert_eq!(out, stream);
    }

    #[test]
    fn giving_back_releases_held_keys_and_buttons() {
        let (mut gate, _) = connected();
        gate.take_over();
        let mut out = Vec::new();
        gate.feed(&KEY_A_DOWN, &mut out).unwrap();
        gate.feed(&CLICK_AT_10_20, &mut out).unwrap();
        out.clear();
        gate.give_back(&mut out);
        assert_eq!(out, [4, 0, 0, 0, 0, 0, 0, 0x61, 5, 0, 0, 10, 0, 20]);
        out.clear();
        gate.feed(&KEY_A_DOWN, &mut out).unwrap();
        assert!(out.is_empty(), "view-only again");
    }

    #[test]
    fn encodings_that_change_the_framing_are_left_out() {
        let (mut gate, _) = connected();
        let mut out = Vec::new();
        let mut message = vec![2, 0, 0, 3];
        for encoding in [7i32, -316, -258] {
            message.extend_from_slice(&encoding.to_be_bytes());
        }
        gate.feed(&message, &mut out).unwrap();
        let mut expected = vec![2, 0, 0, 2];
        expected.extend_from_slice(&7i32.to_be_bytes());
        expected.extend_from_slice(&(-258i32).to_be_bytes());
        assert_eq!(out, expected);
    }

    #[test]
    fn what_cannot_be_sized_or_is_too_big_ends_the_connection() {
        let (mut gate, _) = connected();
        let mut out = Vec::new();
        assert!(gate.feed(&[99, 0, 0, 0], &mut out).is_err());
        let (mut gate, _) = connected();
        assert!(gate.feed(&[6, 0, 0, 0, 0x7f, 0, 0, 0], &mut out).is_err());
        let (mut gate, _) = connected();
        assert!(gate.feed(&[255, 1, 0, 0], &mut out).is_err());
    }
}
