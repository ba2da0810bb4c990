//! A person's live view of a desktop session's screen: a VNC connection to a server the
//! service starts in the sandbox (x11vnc on the display, on the sandbox's loopback, reached
//! through the agent like any port), with the viewer's half read by an [`InputGate`] so that
//! the view is view-only until the person takes over. Taking over and giving back are activity
//! entries of their own (`computer_take_over`, `computer_give_back`); the view itself is one
//! (`computer_view`, with its bytes), and input refused while view-only one more at its end.

use crate::core::Core;
use crate::error::Error;
use crate::ops::computer::TEXT_OUTPUT_LIMIT;
use crate::ops::rfb_gate::{InputGate, MAX_MESSAGE};
use crate::state::activity::{Actor, Caller, PendingEntry};
use crate::state::sessions::Sessions;
use tokio::io::DuplexStream;

/// Where the live view's VNC server listens, on the sandbox's loopback only (E2B's Desktop SDK
/// starts its own on 5900, which this leaves alone).
const VIEW_PORT: u16 = 5910;

/// Starts x11vnc on the display unless it already listens, and waits until it does. Its one
/// argument is the port. Fails at once (3) when no display answers, so the caller starts one.
const VNC_SCRIPT: &str = r#"port="$1"
listening() { netstat -ltn 2>/dev/null | grep -q ":$port .*LISTEN"; }
listening && exit 0
xdpyinfo >/dev/null 2>&1 || exit 3
setsid -f x11vnc -display "$DISPLAY" -rfbport "$port" -localhost -shared -forever -nopw -norc -quiet -o /tmp/sandboxd-x11vnc.log </dev/null >/dev/null 2>&1
i=0
until listening; do i=$((i + 1)); [ "$i" -gt 100 ] && exit 1; sleep 0.1; done"#;

/// One live view's gate in front of its connection to the sandbox's VNC server.
pub struct ScreenView {
    gate: InputGate,
    sessions: Sessions,
    session_id: String,
    actor: Actor,
}

impl Core {
    /// Opens a live view of the session's screen, starting the display and the VNC server
    /// when they are not there yet: the view, and the VNC server's bytes both ways (write to
    /// it only what [`ScreenView::from_viewer`] and the others answer).
    pub async fn open_screen_view(
        &self,
        caller: &Caller,
        session_id: &str,
    ) -> Result<(ScreenView, DuplexStream), Error> {
        let session = self.running_session(caller, session_id, "computer_view")?;
        let mut entry = self.entry(caller, &session, "computer_view", ":0");
        let argv = ["/bin/sh", "-c", VNC_SCRIPT, "sandboxd-vnc"]
            .map(String::from)
            .into_iter()
            .chain([VIEW_PORT.to_string()])
            .collect::<Vec<_>>();
        if let Err(e) = self
            .run_on_screen(&session, &argv, 20, TEXT_OUTPUT_LIMIT)
            .await
        {
            return Err(entry.fail(e));
        }
        let stream = self.open_tunnel(&session, VIEW_PORT, entry).await?;
        let view = ScreenView {
            gate: InputGate::default(),
            sessions: self.sessions().clone(),
            session_id: session.id,
            actor: caller.actor(),
        };
        Ok((view, stream))
    }
}

impl ScreenView {
    /// The largest message the gate accepts from a viewer (a clipboard's text, mostly).
    pub const MAX_VIEWER_MESSAGE: usize = MAX_MESSAGE;

    /// What of the viewer's bytes goes on to the VNC server: an error ends the view.
    pub fn from_viewer(&mut self, data: &[u8]) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(data.len());
        self.gate.feed(data, &mut out)?;
        if self.gate.in_control() && !out.is_empty() {
            self.sessions.touch(&self.session_id);
        }
        Ok(out)
    }

    /// The viewer takes over: its keyboard and mouse reach the screen from now on.
    pub fn take_over(&mut self) {
        if !self.gate.in_control() {
            self.gate.take_over();
            self.record("computer_take_over", "");
        }
    }

    /// View-only again; answers what releases the keys and buttons still held, for the VNC
    /// server. `why` says what gave control back when it was not the viewer (the view closed).
    pub fn give_back(&mut self, why: &str) -> Vec<u8> {
        let mut out = Vec::new();
        if self.gate.in_control() {
            self.gate.give_back(&mut out);
            self.record("computer_give_back", why);
        }
        out
    }

    /// The view ends: control given back if it was held, input refused counted.
    pub fn end(mut self) -> Vec<u8> {
        let out = self.give_back("the view closed");
        let refused = self.gate.refused();
        if refused > 0 {
            let what = format!("{refused} input messages while view-only");
            self.record("computer_input_refused", &what);
        }
        out
    }

    fn record(&self, action: &'static str, target: &str) {
        let mut entry = PendingEntry::new(
            &self.sessions,
            &self.session_id,
            self.actor.clone(),
            action,
            target,
        );
        entry.end(None);
    }
}
