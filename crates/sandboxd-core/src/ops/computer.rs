//! Computer use: screenshots, mouse and keyboard on a desktop session's screen (a runtime of
//! the `desktop` recipe), each one command (xdotool, scrot) run through the agent's exec, and
//! each one activity entry (`computer_click`, ...) naming coordinates, buttons or key names;
//! typed text only by its length.
//!
//! The screen is the X display `:0`. When nothing draws it yet (a session opened through our
//! own API; E2B's Desktop SDK starts its own), the first action that finds it missing starts
//! it (Xvfb and XFCE, in a process session of their own so they outlive the command) and is
//! tried once more. A sandbox put in a warm pool has its desktop started before it is taken.

use crate::agent_error::{agent_error, Operation};
use crate::core::Core;
use crate::error::Error;
use crate::ops::computer_commands::{self, Planned, DISPLAY, SCREENSHOT_ARGV};
use crate::ops::exec::{self, with_session_env};
use crate::ops::screenshot_image;
use crate::state::activity::Caller;
use crate::state::sessions::Session;
use base64::Engine;
use sandboxd_agent_proto as proto;
use sandboxd_api::{
    ComputerAction, ComputerRequest, ComputerResult, Point, Region, ScreenSize, Screenshot,
    DEFAULT_SCREEN,
};
use std::collections::BTreeMap;
use std::time::Duration;

pub use crate::ops::screenshot_image::Shaped as ScreenshotPng;

/// Time the agent gets beyond a command's own timeout to report.
const AGENT_GRACE: Duration = Duration::from_secs(5);

/// What an action's command may print (a key, a position, an error).
pub(crate) const TEXT_OUTPUT_LIMIT: u64 = 64 << 10;

/// The largest screenshot read from the sandbox: a 4K screen's PNG is well under it.
const SCREENSHOT_LIMIT: u64 = 48 << 20;

/// Starts the display and the desktop on it, detached from the command that starts them. Its
/// one argument is the screen's geometry, which the service makes.
const DESKTOP_SCRIPT: &str = r#"exec </dev/null >/tmp/sandboxd-desktop.log 2>&1
Xvfb "$DISPLAY" -ac -screen 0 "$1" -dpi 96 -nolisten tcp &
i=0
until xdpyinfo >/dev/null 2>&1; do i=$((i + 1)); [ "$i" -gt 100 ] && exit 1; sleep 0.1; done
exec startxfce4"#;

/// How long a starting display may take to answer, and how often it is asked.
const DISPLAY_CHECKS: u32 = 50;
const DISPLAY_CHECK_INTERVAL: Duration = Duration::from_millis(200);

impl Core {
    /// One computer action on the session's screen.
    pub async fn computer(
        &self,
        caller: &Caller,
        session_id: &str,
        request: ComputerRequest,
    ) -> Result<ComputerResult, Error> {
        let planned = computer_commands::plan(&request)?;
        let session = self.running_session(caller, session_id, planned.action)?;
        let mut entry = self.entry(caller, &session, planned.action, &planned.target);
        let result = self.act(&session, &request, &planned).await;
        entry.finish(result)
    }

    /// A PNG of the screen (or of `region`), at most `max_width` wide: `GET
    /// .../computer/screenshot`, which answers with the image itself.
    pub async fn screenshot(
        &self,
        caller: &Caller,
        session_id: &str,
        region: Option<Region>,
        max_width: Option<u32>,
    ) -> Result<ScreenshotPng, Error> {
        let request = ComputerRequest {
            region,
            max_width,
            ..ComputerRequest::new(ComputerAction::Screenshot)
        };
        let planned = computer_commands::plan(&request)?;
        let session = self.running_session(caller, session_id, planned.action)?;
        let mut entry = self.entry(caller, &session, planned.action, &planned.target);
        let result = self.take_screenshot(&session, region, max_width).await;
        entry.bytes = result.as_ref().ok().map(|s| s.png.len() as u64);
        entry.finish(result)
    }

    async fn act(
        &self,
        session: &Session,
        request: &ComputerRequest,
        planned: &Planned,
    ) -> Result<ComputerResult, Error> {
        let mut result = ComputerResult {
            action: request.action,
            screen: None,
            cursor: None,
            screenshot: None,
        };
        let Some(argv) = &planned.argv else {
            let shot = self
                .take_screenshot(session, request.region, request.max_width)
                .await?;
            result.screenshot = Some(encoded(shot));
            return Ok(result);
        };
        let output = self
            .run_on_screen(session, argv, planned.timeout_secs, TEXT_OUTPUT_LIMIT)
            .await?;
        let text = String::from_utf8_lossy(&output);
        match request.action {
            ComputerAction::ScreenSize => result.screen = Some(parse_screen_size(&text)?),
            ComputerAction::CursorPosition => result.cursor = Some(parse_cursor(&text)?),
            _ => {}
        }
        if request.screenshot {
            let shot = self
                .take_screenshot(session, None, request.max_width)
                .await?;
            result.screenshot = Some(encoded(shot));
        }
        Ok(result)
    }

    async fn take_screenshot(
        &self,
        session: &Session,
        region: Option<Region>,
        max_width: Option<u32>,
    ) -> Result<ScreenshotPng, Error> {
        let argv = SCREENSHOT_ARGV.map(String::from);
        let png = self
            .run_on_screen(session, &argv, 20, SCREENSHOT_LIMIT)
            .await?;
        screenshot_image::shape(png, region, max_width)
    }

    /// Runs `argv` with the display set and answers its stdout; when it fails because no
    /// display answers, starts the desktop and runs it once more.
    pub(crate) async fn run_on_screen(
        &self,
        session: &Session,
        argv: &[String],
        timeout_secs: u64,
        output_limit: u64,
    ) -> Result<Vec<u8>, Error> {
        let first = self.run(session, argv, timeout_secs, output_limit).await;
        if let Ok(ran) = &first {
            if succeeded(ran) {
                return Ok(first?.stdout);
            }
        }
        match self.display_answers(session).await {
            Some(true) => return Err(failed(argv, first)),
            Some(false) => self.start_desktop(session).await?,
            None => return Err(no_desktop(&session.runtime)),
        }
        let second = self.run(session, argv, timeout_secs, output_limit).await;
        match second {
            Ok(ran) if succeeded(&ran) => Ok(ran.stdout),
            other => Err(failed(argv, other)),
        }
    }

    /// Starts the desktop of a sandbox put in a warm pool, when its image has one (X tools
    /// and no display yet), so a session taken from the pool finds its screen answering.
    /// Nothing for other images (one `xdpyinfo` that is not found).
    pub(crate) async fn warm_desktop(&self, sandbox: &sandboxd_backend::Sandbox, runtime: &str) {
        let session = Session::new(
            sandbox.session_id.clone(),
            runtime.to_string(),
            None,
            BTreeMap::new(),
            sandbox.clone(),
        );
        if self.display_answers(&session).await == Some(false) {
            if let Err(e) = self.start_desktop(&session).await {
                tracing::warn!(runtime, error = %e, "a pooled sandbox's desktop did not start; its first action starts it");
            }
        }
    }

    /// Whether the display answers; `None` when the sandbox has no X tools at all.
    async fn display_answers(&self, session: &Session) -> Option<bool> {
        let argv = ["xdpyinfo", "-display", DISPLAY].map(String::from);
        match self.run(session, &argv, 10, TEXT_OUTPUT_LIMIT).await {
            Ok(ran) if ran.report.exit_code == Some(127) => None,
            // What it prints (the display's description, about 100 KB) is not needed whole.
            Ok(ran) => Some(ran.report.exit_code == Some(0)),
            Err(_) => None,
        }
    }

    /// Starts Xvfb and XFCE, and waits for the display to answer.
    async fn start_desktop(&self, session: &Session) -> Result<(), Error> {
        let geometry = format!("{}x{}x24", DEFAULT_SCREEN.width, DEFAULT_SCREEN.height);
        let argv = [
            "setsid",
            "-f",
            "/bin/sh",
            "-c",
            DESKTOP_SCRIPT,
            "sandboxd-desktop",
            &geometry,
        ]
        .map(String::from);
        self.run(session, &argv, 10, TEXT_OUTPUT_LIMIT).await?;
        for _ in 0..DISPLAY_CHECKS {
            if self.display_answers(session).await == Some(true) {
                return Ok(());
            }
            tokio::time::sleep(DISPLAY_CHECK_INTERVAL).await;
        }
        Err(Error::Conflict {
            code: "no_display",
            message: "the desktop did not start: its display :0 did not answer within 10 s (the sandbox's /tmp/sandboxd-desktop.log says why)".into(),
        })
    }

    /// One command through the agent, its output kept raw (a screenshot is binary).
    pub(crate) async fn run(
        &self,
        session: &Session,
        argv: &[String],
        timeout_secs: u64,
        output_limit: u64,
    ) -> Result<proto::ExecResult, Error> {
        let policy = &self.config().policy;
        let display = BTreeMap::from([("DISPLAY".to_string(), DISPLAY.to_string())]);
        let command = exec::Command {
            command: None,
            argv: Some(argv.to_vec()),
            cwd: None,
            env: with_session_env(&session.env, display),
            timeout_secs: timeout_secs.min(policy.max_timeout_secs),
        };
        let mut planned = exec::plan(command, policy)?;
        planned.output_limit = output_limit;
        let deadline = Duration::from_millis(planned.timeout_ms) + AGENT_GRACE;
        let mut stream = self.connect(session).await?;
        let ran = proto::run_exec(&mut stream, &planned, None, deadline).await;
        if exec::answered(&ran) {
            stream.reuse();
        }
        ran.map_err(|e| agent_error(Operation::Exec, e))
    }
}

fn succeeded(ran: &proto::ExecResult) -> bool {
    ran.report.exit_code == Some(0) && !ran.stdout_truncated
}

fn encoded(shot: ScreenshotPng) -> Screenshot {
    Screenshot {
        width: shot.width,
        height: shot.height,
        source: shot.source,
        png_base64: base64::engine::general_purpose::STANDARD.encode(&shot.png),
    }
}

fn no_desktop(runtime: &str) -> Error {
    Error::Conflict {
        code: "no_desktop",
        message: format!(
            "the session's runtime `{runtime}` has no desktop (no X server, xdotool or scrot in its image); open a session of a runtime built from the `desktop` recipe (the embedded default's `desktop`)"
        ),
    }
}

/// What a failed command said, as the caller's error.
fn failed(argv: &[String], ran: Result<proto::ExecResult, Error>) -> Error {
    let ran = match ran {
        Ok(ran) => ran,
        Err(e) => return e,
    };
    let program = argv.first().map_or("", String::as_str);
    let said = String::from_utf8_lossy(&ran.stderr);
    let said: String = said.trim().chars().take(300).collect();
    let how = if ran.stdout_truncated {
        "its output was over the limit".to_string()
    } else {
        match ran.report.exit_code {
            Some(code) => format!("exit status {code}"),
            None => "killed".to_string(),
        }
    };
    Error::Conflict {
        code: "computer_failed",
        message: format!("{program} failed ({how}): {said}"),
    }
}

/// `xdotool getdisplaygeometry`: "1024 768".
fn parse_screen_size(text: &str) -> Result<ScreenSize, Error> {
    let mut numbers = text.split_whitespace().map(str::parse::<u32>);
    match (numbers.next(), numbers.next()) {
        (Some(Ok(width)), Some(Ok(height))) => Ok(ScreenSize { width, height }),
        _ => Err(unreadable("screen size", text)),
    }
}

/// `xdotool getmouselocation --shell`: "X=10\nY=20\nSCREEN=0\nWINDOW=...".
fn parse_cursor(text: &str) -> Result<Point, Error> {
    let value = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.trim().parse::<u32>().ok())
    };
    match (value("X"), value("Y")) {
        (Some(x), Some(y)) => Ok(Point { x, y }),
        _ => Err(unreadable("pointer position", text)),
    }
}

fn unreadable(what: &str, text: &str) -> Error {
    let head: String = text.chars().take(100).collect();
    Error::Agent(format!("xdotool's {what} could not be read: {head:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xdotool_answers_are_read() {
        assert_eq!(
            parse_screen_size("1024 768\n").unwrap(),
            ScreenSize {
                width: 1024,
                height: 768
            }
        );
        assert_eq!(
            parse_cursor("X=10\nY=20\nSCREEN=0\nWINDOW=123\n").unwrap(),
            Point { x: 10, y: 20 }
        );
        assert!(parse_cursor("garbage").is_err());
        assert!(parse_screen_size("").is_err());
    }
}
