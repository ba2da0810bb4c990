//! A computer action checked and turned into the command that does it in the sandbox
//! (xdotool, scrot), and what its activity entry says. Every value from the caller goes in as
//! an argument of its own, never into a shell string; key names are checked to be key names,
//! so none can pass for an option of xdotool.

use crate::error::Error;
use sandboxd_api::{
    ComputerAction, ComputerRequest, MouseButton, Region, ScrollDirection, MAX_TYPED_CHARS,
};

/// The display a desktop session's programs draw on (E2B's Desktop SDK uses it too).
pub const DISPLAY: &str = ":0";

/// Takes a screenshot, the pointer drawn in it, and writes the PNG to stdout (scrot's `-`).
pub const SCREENSHOT_ARGV: [&str; 3] = ["scrot", "--pointer", "-"];

/// Milliseconds xdotool waits between typed characters (its own default).
const TYPE_DELAY_MS: u64 = 12;

/// Wheel notches of a scroll that names none, and the most one may turn.
const DEFAULT_SCROLL: u32 = 3;
const MAX_SCROLL: u32 = 50;

/// xdotool's commands: after `key`, a word that names one starts that command (its chaining),
/// so none may pass for a key name.
const XDOTOOL_COMMANDS: &[&str] = &[
    "behave",
    "behave_screen_edge",
    "click",
    "exec",
    "get_desktop",
    "get_desktop_for_window",
    "get_desktop_viewport",
    "get_num_desktops",
    "getactivewindow",
    "getdisplaygeometry",
    "getmouselocation",
    "getwindowclassname",
    "getwindowfocus",
    "getwindowgeometry",
    "getwindowname",
    "getwindowpid",
    "help",
    "key",
    "keydown",
    "keyup",
    "mousedown",
    "mousemove",
    "mousemove_relative",
    "mouseup",
    "search",
    "selectwindow",
    "set_desktop",
    "set_desktop_for_window",
    "set_desktop_viewport",
    "set_num_desktops",
    "set_window",
    "sleep",
    "type",
    "version",
    "windowactivate",
    "windowclose",
    "windowfocus",
    "windowkill",
    "windowmap",
    "windowminimize",
    "windowmove",
    "windowquit",
    "windowraise",
    "windowreparent",
    "windowsize",
    "windowstate",
    "windowunmap",
];

/// The longest key list one `key` action may press.
const MAX_KEYS_LEN: usize = 256;

/// The largest coordinate taken: X11 screens are at most 32767 pixels across.
const MAX_COORDINATE: u32 = 32767;

/// A checked action: the argv that does it, and what its activity entry records.
#[derive(Debug, PartialEq)]
pub struct Planned {
    /// The activity log's name for it (`computer_click`, ...).
    pub action: &'static str,
    /// What was addressed: coordinates, buttons, key names; typed text only by its length.
    pub target: String,
    /// The command, `None` for a screenshot (taken by [`SCREENSHOT_ARGV`]).
    pub argv: Option<Vec<String>>,
    /// How long the command may take.
    pub timeout_secs: u64,
}

/// Checks `request` and plans its command.
pub fn plan(request: &ComputerRequest) -> Result<Planned, Error> {
    use ComputerAction as A;
    let fields = Fields::of(request);
    let allowed: &[&str] = match request.action {
        A::Screenshot => &["region", "max_width"],
        A::MouseMove => &["x", "y"],
        A::Click | A::MouseDown | A::MouseUp => &["x", "y", "button"],
        A::DoubleClick => &["x", "y"],
        A::Drag => &["x", "y", "to_x", "to_y"],
        A::Scroll => &["x", "y", "direction", "amount"],
        A::Key => &["keys"],
        A::Type => &["text"],
        A::ScreenSize | A::CursorPosition => &[],
    };
    if let Some(extra) = fields.present.iter().find(|f| !allowed.contains(f)) {
        return Err(invalid(format!(
            "`{}` does not take `{extra}`{}",
            name(request.action),
            takes(allowed)
        )));
    }
    if request.max_width == Some(0) {
        return Err(invalid("`max_width` must be at least 1"));
    }
    if let Some(region) = &request.region {
        check_region(region)?;
    }
    let at = point(request, "x", "y", request.x, request.y)?;
    let mut argv = xdotool();
    let mut target = at.map(|(x, y)| format!("{x},{y}")).unwrap_or_default();
    if let Some((x, y)) = at {
        // Without --sync, which waits forever when the pointer is already there; the X server
        // takes the events in order, so what follows acts at the new place.
        argv.extend(["mousemove", &x.to_string(), &y.to_string()].map(String::from));
    }
    let button = request.button.unwrap_or_default();
    let mut timeout_secs = 10;
    let action = match request.action {
        A::Screenshot => {
            let region = request
                .region
                .map(|r| format!(" {},{} {}x{}", r.x, r.y, r.width, r.height));
            return Ok(Planned {
                action: "computer_screenshot",
                target: region.unwrap_or_default().trim_start().to_string(),
                argv: None,
                timeout_secs: 20,
            });
        }
        A::MouseMove => {
            if at.is_none() {
                return Err(invalid("`mouse_move` needs `x` and `y`"));
            }
            "computer_mouse_move"
        }
        A::Click => {
            // xdotool sleeps its click delay (100 ms) after every click, a lone one too.
            argv.extend(["click", "--delay", "0", button_number(button)].map(String::from));
            target = join(&target, button_name(button));
            "computer_click"
        }
        A::DoubleClick => {
            argv.extend(["click", "--repeat", "2", "--delay", "60", "1"].map(String::from));
            "computer_double_click"
        }
        A::MouseDown | A::MouseUp => {
            let (verb, action) = if request.action == A::MouseDown {
                ("mousedown", "computer_mouse_down")
            } else {
                ("mouseup", "computer_mouse_up")
            };
            argv.extend([verb.into(), button_number(button).into()]);
            target = join(&target, button_name(button));
            action
        }
        A::Drag => {
            let Some((to_x, to_y)) = point(request, "to_x", "to_y", request.to_x, request.to_y)?
            else {
                return Err(invalid(
                    "`drag` needs `to_x` and `to_y` (and `x`, `y` to start from)",
                ));
            };
            if at.is_none() {
                return Err(invalid("`drag` needs `x` and `y` to start from"));
            }
            argv.extend(
                [
                    "mousedown",
                    "1",
                    "mousemove",
                    &to_x.to_string(),
                    &to_y.to_string(),
                ]
                .map(String::from),
            );
            argv.extend(["mouseup", "1"].map(String::from));
            target = format!("{target} to {to_x},{to_y}");
            "computer_drag"
        }
        A::Scroll => {
            let Some(direction) = request.direction else {
                return Err(invalid(
                    "`scroll` needs `direction`: up, down, left or right",
                ));
            };
            let amount = request.amount.unwrap_or(DEFAULT_SCROLL);
            if !(1..=MAX_SCROLL).contains(&amount) {
                return Err(invalid(format!(
                    "`amount` must be 1 to {MAX_SCROLL} wheel notches"
                )));
            }
            let wheel = match direction {
                ScrollDirection::Up => "4",
                ScrollDirection::Down => "5",
                ScrollDirection::Left => "6",
                ScrollDirection::Right => "7",
            };
            let repeat = amount.to_string();
            argv.extend(["click", "--repeat", &repeat, "--delay", "20", wheel].map(String::from));
            let direction = serde_json::to_value(direction)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            target = join(&target, &format!("{direction} {amount}"));
            "computer_scroll"
        }
        A::Key => {
            let keys = checked_keys(request.keys.as_deref())?;
            argv.push("key".to_string());
            argv.extend(keys.iter().map(|k| k.to_string()));
            target = keys.join(" ");
            "computer_key"
        }
        A::Type => {
            let Some(text) = request.text.as_deref().filter(|t| !t.is_empty()) else {
                return Err(invalid("`type` needs `text`"));
            };
            let chars = text.chars().count();
            if chars > MAX_TYPED_CHARS {
                return Err(invalid(format!(
                    "`text` holds {chars} characters, over the limit of {MAX_TYPED_CHARS}; type it in parts"
                )));
            }
            if text.contains('\0') {
                return Err(invalid("`text` may not contain NUL"));
            }
            argv.extend(
                ["type", "--delay", &TYPE_DELAY_MS.to_string(), "--", text].map(String::from),
            );
            timeout_secs += (chars as u64 * TYPE_DELAY_MS).div_ceil(1000);
            target = format!("{chars} characters");
            "computer_type"
        }
        A::ScreenSize => {
            argv.push("getdisplaygeometry".into());
            "computer_screen_size"
        }
        A::CursorPosition => {
            argv.extend(["getmouselocation", "--shell"].map(String::from));
            "computer_cursor_position"
        }
    };
    Ok(Planned {
        action,
        target,
        argv: Some(argv),
        timeout_secs,
    })
}

/// The fields of a request that are set, by their names in the API.
struct Fields {
    present: Vec<&'static str>,
}

impl Fields {
    fn of(r: &ComputerRequest) -> Fields {
        let set = [
            ("x", r.x.is_some()),
            ("y", r.y.is_some()),
            ("to_x", r.to_x.is_some()),
            ("to_y", r.to_y.is_some()),
            ("button", r.button.is_some()),
            ("direction", r.direction.is_some()),
            ("amount", r.amount.is_some()),
            ("keys", r.keys.is_some()),
            ("text", r.text.is_some()),
            ("region", r.region.is_some()),
            // Any action may ask for a screenshot after it, at most this wide.
            ("max_width", r.max_width.is_some() && !r.screenshot),
        ];
        Fields {
            present: set.iter().filter(|(_, s)| *s).map(|(n, _)| *n).collect(),
        }
    }
}

fn xdotool() -> Vec<String> {
    vec!["xdotool".to_string()]
}

fn invalid(message: impl Into<String>) -> Error {
    Error::bad_request("invalid_request", message)
}

fn takes(allowed: &[&str]) -> String {
    if allowed.is_empty() {
        " (it takes no fields but `screenshot`)".to_string()
    } else {
        format!(
            " (it takes {})",
            allowed
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// The API's name of an action.
pub fn name(action: ComputerAction) -> String {
    serde_json::to_value(action)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn join(target: &str, more: &str) -> String {
    if target.is_empty() {
        more.to_string()
    } else {
        format!("{target} {more}")
    }
}

/// Both coordinates or neither.
fn point(
    request: &ComputerRequest,
    x_name: &str,
    y_name: &str,
    x: Option<u32>,
    y: Option<u32>,
) -> Result<Option<(u32, u32)>, Error> {
    match (x, y) {
        (Some(x), Some(y)) if x <= MAX_COORDINATE && y <= MAX_COORDINATE => Ok(Some((x, y))),
        (Some(_), Some(_)) => Err(invalid(format!(
            "`{x_name}` and `{y_name}` must be at most {MAX_COORDINATE}"
        ))),
        (None, None) => Ok(None),
        _ => Err(invalid(format!(
            "`{}` takes `{x_name}` and `{y_name}` together, or neither",
            name(request.action)
        ))),
    }
}

fn check_region(region: &Region) -> Result<(), Error> {
    if region.width == 0 || region.height == 0 {
        return Err(invalid("`region` must be at least 1x1"));
    }
    if region.x.saturating_add(region.width) > MAX_COORDINATE + 1
        || region.y.saturating_add(region.height) > MAX_COORDINATE + 1
    {
        return Err(invalid("`region` lies beyond any screen"));
    }
    Ok(())
}

fn button_number(button: MouseButton) -> &'static str {
    match button {
        MouseButton::Left => "1",
        MouseButton::Middle => "2",
        MouseButton::Right => "3",
    }
}

fn button_name(button: MouseButton) -> &'static str {
    match button {
        MouseButton::Left => "left",
        MouseButton::Middle => "middle",
        MouseButton::Right => "right",
    }
}

/// Key names (X keysyms, or a chord of them joined with `+`), separated by spaces. Only
/// letters, digits, `_` and `+` between names: nothing that could read as an option or a
/// command of xdotool's.
fn checked_keys(keys: Option<&str>) -> Result<Vec<&str>, Error> {
    let Some(keys) = keys.map(str::trim).filter(|k| !k.is_empty()) else {
        return Err(invalid(
            "`key` needs `keys`: X key names, a chord joined with `+` (e.g. \"ctrl+c\", \"Return\")",
        ));
    };
    if keys.len() > MAX_KEYS_LEN {
        return Err(invalid(format!(
            "`keys` is longer than {MAX_KEYS_LEN} bytes; press them in parts"
        )));
    }
    let chords: Vec<&str> = keys.split_whitespace().collect();
    for chord in &chords {
        let names_ok = chord.split('+').all(|name| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        let command = XDOTOOL_COMMANDS.contains(&chord.to_ascii_lowercase().as_str());
        if !names_ok || command {
            return Err(invalid(format!(
                "`keys` has {chord:?}, which is not a key name or a chord of them: use X key names (letters, digits, `_`) joined with `+`, e.g. \"ctrl+shift+t\", \"Return\", \"Page_Down\""
            )));
        }
    }
    Ok(chords)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sandboxd_api::ComputerRequest as R;

    fn argv(request: &R) -> Vec<String> {
        plan(request).unwrap().argv.unwrap()
    }

    #[test]
    fn a_click_moves_then_clicks_in_one_command() {
        let planned = plan(&R {
            button: Some(MouseButton::Right),
            ..R::at(ComputerAction::Click, 10, 20)
        })
        .unwrap();
        assert_eq!(
            planned.argv.unwrap(),
            [
                "xdotool",
                "mousemove",
                "10",
                "20",
                "click",
                "--delay",
                "0",
                "3"
            ]
        );
        assert_eq!(planned.action, "computer_click");
        assert_eq!(planned.target, "10,20 right");
        assert_eq!(
            argv(&R::new(ComputerAction::Click)),
            ["xdotool", "click", "--delay", "0", "1"]
        );
    }

    #[test]
    fn typed_text_is_one_argument_and_recorded_by_its_length() {
        let text = "$(rm -rf /); `id` -- --help";
        let planned = plan(&R {
            text: Some(text.into()),
            ..R::new(ComputerAction::Type)
        })
        .unwrap();
        let argv = planned.argv.unwrap();
        assert_eq!(argv.last().unwrap(), text);
        assert_eq!(argv[argv.len() - 2], "--");
        assert_eq!(
            planned.target,
            format!("{} characters", text.chars().count())
        );
        assert!(!planned.target.contains("rm"));
    }

    #[test]
    fn keys_are_key_names_never_options() {
        let planned = plan(&R {
            keys: Some("ctrl+shift+t Return".into()),
            ..R::new(ComputerAction::Key)
        })
        .unwrap();
        assert_eq!(
            planned.argv.unwrap(),
            ["xdotool", "key", "ctrl+shift+t", "Return"]
        );
        assert_eq!(planned.target, "ctrl+shift+t Return");
        for bad in [
            "--window 1 a",
            "a;b",
            "ctrl++c",
            "",
            "a\nb-c",
            "-a",
            "a exec",
            "Type",
        ] {
            let result = plan(&R {
                keys: Some(bad.into()),
                ..R::new(ComputerAction::Key)
            });
            assert!(result.is_err(), "{bad:?}");
        }
    }

    #[test]
    fn fields_an_action_does_not_take_are_refused() {
        let error = plan(&R {
            text: Some("x".into()),
            ..R::at(ComputerAction::Click, 1, 1)
        })
        .unwrap_err()
        .to_string();
        assert!(error.contains("`click` does not take `text`"), "{error}");
        let half = plan(&R {
            x: Some(1),
            ..R::new(ComputerAction::Click)
        })
        .unwrap_err()
        .to_string();
        assert!(half.contains("together"), "{half}");
        assert!(plan(&R::new(ComputerAction::MouseMove)).is_err());
        assert!(plan(&R::new(ComputerAction::Scroll)).is_err());
        // A screenshot after any action may be sized.
        assert!(plan(&R {
            screenshot: true,
            max_width: Some(640),
            ..R::at(ComputerAction::MouseMove, 1, 1)
        })
        .is_ok());
    }

    #[test]
    fn drag_and_scroll() {
        let drag = plan(&R {
            to_x: Some(30),
            to_y: Some(40),
            ..R::at(ComputerAction::Drag, 10, 20)
        })
        .unwrap();
        assert_eq!(
            drag.argv.unwrap().join(" "),
            "xdotool mousemove 10 20 mousedown 1 mousemove 30 40 mouseup 1"
        );
        assert_eq!(drag.target, "10,20 to 30,40");
        let scroll = plan(&R {
            direction: Some(ScrollDirection::Up),
            ..R::new(ComputerAction::Scroll)
        })
        .unwrap();
        assert_eq!(
            scroll.argv.unwrap().join(" "),
            "xdotool click --repeat 3 --delay 20 4"
        );
        assert_eq!(scroll.target, "up 3");
        let too_far = plan(&R {
            direction: Some(ScrollDirection::Down),
            amount: Some(51),
            ..R::new(ComputerAction::Scroll)
        });
        assert!(too_far.is_err());
    }
}
