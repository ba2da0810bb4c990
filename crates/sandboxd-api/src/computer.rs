//! `POST /v1/sessions/{id}/computer`: one action on a desktop session's screen, mouse or
//! keyboard (a runtime of the `desktop` recipe), shaped as model providers' computer-use
//! tools are: an `action` and the fields it takes, in one flat body.

use serde::{Deserialize, Serialize};

/// The screen a desktop session starts with, unless the display was started otherwise (E2B's
/// Desktop SDK starts its own, at the resolution it is given).
pub const DEFAULT_SCREEN: ScreenSize = ScreenSize {
    width: 1024,
    height: 768,
};

/// The longest text one `type` action may send.
pub const MAX_TYPED_CHARS: usize = 10_000;

/// What to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ComputerAction {
    /// A PNG of the screen (or of `region`), at most `max_width` wide.
    Screenshot,
    /// Moves the pointer to `x`, `y`.
    MouseMove,
    /// Clicks `button` (left by default), at `x`, `y` when given, else where the pointer is.
    Click,
    /// Clicks the left button twice, at `x`, `y` when given.
    DoubleClick,
    /// Presses `button` and holds it (at `x`, `y` when given).
    MouseDown,
    /// Releases `button` (at `x`, `y` when given).
    MouseUp,
    /// Presses the left button at `x`, `y`, moves to `to_x`, `to_y` and releases it there.
    Drag,
    /// Turns the wheel `amount` notches (3 by default) in `direction`, at `x`, `y` when given.
    Scroll,
    /// Presses `keys`: X key names, a chord joined with `+` (`ctrl+c`, `Return`,
    /// `ctrl+shift+t`), several separated by spaces, pressed one after the other.
    Key,
    /// Types `text` as the keyboard would (at most 10000 characters).
    Type,
    /// The screen's width and height.
    ScreenSize,
    /// Where the pointer is.
    CursorPosition,
}

/// A mouse button.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum MouseButton {
    #[default]
    Left,
    Middle,
    Right,
}

/// Which way a scroll turns the wheel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ScrollDirection {
    Up,
    Down,
    Left,
    Right,
}

/// A rectangle of the screen, in screen pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Region {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

/// `POST /v1/sessions/{id}/computer`. Coordinates are screen pixels (of the full screen, not
/// of a scaled screenshot). Fields an action does not take are refused, not ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ComputerRequest {
    pub action: ComputerAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<u32>,
    /// Where a `drag` ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_x: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_y: Option<u32>,
    /// For `click`, `mouse_down` and `mouse_up`; left by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub button: Option<MouseButton>,
    /// For `scroll`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<ScrollDirection>,
    /// Wheel notches of a `scroll` (1 to 50; 3 by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<u32>,
    /// For `key`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<String>,
    /// For `type`. Recorded in the activity log by its length only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// For `screenshot`: the part of the screen to show (the whole screen by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<Region>,
    /// The widest a screenshot may be: a wider one is scaled down, keeping its proportions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_width: Option<u32>,
    /// Also answer with a screenshot taken after the action (at most `max_width` wide).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub screenshot: bool,
}

impl ComputerRequest {
    /// An action with none of its fields set.
    pub fn new(action: ComputerAction) -> ComputerRequest {
        ComputerRequest {
            action,
            x: None,
            y: None,
            to_x: None,
            to_y: None,
            button: None,
            direction: None,
            amount: None,
            keys: None,
            text: None,
            region: None,
            max_width: None,
            screenshot: false,
        }
    }

    /// The action at `x`, `y`.
    pub fn at(action: ComputerAction, x: u32, y: u32) -> ComputerRequest {
        ComputerRequest {
            x: Some(x),
            y: Some(y),
            ..ComputerRequest::new(action)
        }
    }
}

/// A width and a height, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ScreenSize {
    pub width: u32,
    pub height: u32,
}

/// A point of the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Point {
    pub x: u32,
    pub y: u32,
}

/// A screenshot: a PNG of `source` (screen pixels), scaled to `width` x `height`. A point of
/// the image maps to the screen as `source.x + px * source.width / width` (and so for y).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct Screenshot {
    pub width: u32,
    pub height: u32,
    pub source: Region,
    /// The PNG, base64-encoded (standard alphabet, padded). Left out where the image travels
    /// beside the record (MCP's image content block).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub png_base64: String,
}

/// What an action answers: the field its action reads, and a screenshot when one was asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct ComputerResult {
    pub action: ComputerAction,
    /// For `screen_size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<ScreenSize>,
    /// For `cursor_position`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Point>,
    /// For `screenshot`, and after any action asked with `screenshot: true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<Screenshot>,
}

/// The text messages a viewer sends on a desktop session's live view (`GET
/// /v1/sessions/{id}/computer/view`), whose binary messages are the VNC protocol (RFB 3.8)
/// both ways. A view starts view-only: the service delivers none of the viewer's keyboard,
/// mouse, clipboard or screen-size messages until it takes over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ScreenViewMessage {
    /// From now on this viewer's keyboard and mouse reach the screen.
    TakeOver,
    /// View-only again: keys still held are released, and no more input is delivered.
    GiveBack,
}

/// The most frames per second a recording of the screen takes.
pub const MAX_RECORDING_FPS: u32 = 30;

/// `POST /v1/sessions/{id}/computer/recording`: record the screen to a video file in the
/// sandbox until `DELETE` stops it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RecordingRequest {
    /// Where the video goes in the sandbox: an absolute path ending in `.mp4` (default
    /// `/workspace/screen-<unix time>.mp4`); its folder is made if missing.
    #[serde(default)]
    pub path: Option<String>,
    /// Frames per second, 1 to 30 (default 10).
    #[serde(default)]
    pub fps: Option<u32>,
}

/// A recording of the screen: started, or stopped with its file's size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Recording {
    /// The video file in the sandbox (H.264 in fragmented MP4, playable even if cut short).
    pub path: String,
    /// When stopped: the file's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}
