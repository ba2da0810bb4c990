//! A person's live view of a desktop session over a WebSocket: the VNC protocol to a server
//! the service starts in the sandbox, view-only until the viewer takes over (see
//! `sandboxd_core::ScreenView`, whose gate drops input in the service, whatever the page
//! does). The view is opened before the upgrade, so a failure is an ordinary HTTP error.

use crate::error::ApiError;
use crate::extract::{Authenticated, Upgrade};
use crate::state::AppState;
use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket};
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use sandboxd_api::ScreenViewMessage;
use sandboxd_core::ScreenView;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// What a viewer's text message may be.
const TEXT_MESSAGES: &str = r#"a text message is {"type": "take_over"} or {"type": "give_back"}"#;

/// The most of the screen's bytes sent in one message.
const SCREEN_CHUNK: usize = 64 << 10;

#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/computer/view",
    tag = "computer",
    summary = "A live view of a desktop session's screen over a WebSocket (VNC), view-only until taken over",
    description = "For a person watching a desktop session (the dashboard's Screen sub-tab). The service starts a VNC server on the sandbox's display (x11vnc, on the sandbox's loopback port 5910, reached through the agent; the display too if nothing draws it yet) and upgrades to a WebSocket whose binary messages are the VNC protocol both ways (RFB 3.8, no password: noVNC's `RFB` speaks it over this socket). The view starts view-only: the service reads the viewer's messages and drops its keys, pointer, clipboard and screen-size changes. A text message ScreenViewMessage `{\"type\": \"take_over\"}` delivers them from then on; `{\"type\": \"give_back\"}` (or the socket closing) makes the view view-only again and releases keys and buttons still held. A browser offers a ticket from POST /v1/sessions/{id}/tickets as the subprotocol `ticket.<ticket>` beside `sandboxd`. Activity entries: `computer_view` (its bytes, at its end), `computer_take_over`, `computer_give_back`, and `computer_input_refused` (how many input messages were dropped while view-only).",
    params(("id" = String, Path, description = "The session's id")),
    responses(
        (status = 101, description = "Switched to the WebSocket"),
        (status = 400, description = "`not_a_websocket`", body = sandboxd_api::ErrorBody),
        (status = 409, description = "`no_desktop` (the runtime has no desktop), `no_display` (the display did not start) or `computer_failed` (the VNC server did not start, with what it said)", body = sandboxd_api::ErrorBody),
        (status = 429, description = "`too_many_port_connections`", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn view(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    Upgrade(upgrade): Upgrade,
) -> Result<Response, ApiError> {
    let (view, stream) = state.core.open_screen_view(&caller, &id).await?;
    Ok(upgrade
        // A viewer's message is at most one whole VNC message (the gate's limit) and a little.
        .max_message_size(ScreenView::MAX_VIEWER_MESSAGE + 1024)
        .on_upgrade(move |socket| run_view(socket, view, stream))
        .into_response())
}

/// Carries the view until either side ends it; a viewer's message the gate refuses closes
/// the socket saying why (1008).
async fn run_view(socket: WebSocket, mut view: ScreenView, stream: DuplexStream) {
    let (mut screen_in, mut screen_out) = tokio::io::split(stream);
    let (mut to_viewer, mut from_viewer) = socket.split();
    let ended = tokio::select! {
        () = screen_to_viewer(&mut screen_in, &mut to_viewer) => Ended::Screen,
        ended = viewer_to_screen(&mut from_viewer, &mut view, &mut screen_out) => ended,
    };
    let release = view.end();
    if !release.is_empty() {
        let _ = screen_out.write_all(&release).await;
    }
    let _ = screen_out.shutdown().await;
    let (code, reason) = match ended {
        // The socket answers the viewer's close by itself, as it closes.
        Ended::Viewer => {
            let _ = to_viewer.close().await;
            return;
        }
        Ended::Screen => (close_code::NORMAL, String::new()),
        Ended::Refused(reason) => (close_code::POLICY, close_reason(&reason)),
    };
    let close = CloseFrame {
        code,
        reason: reason.into(),
    };
    let _ = to_viewer.send(Message::Close(Some(close))).await;
    let _ = to_viewer.close().await;
}

/// A close frame's reason is at most 123 bytes: the words cut at a character's edge.
fn close_reason(words: &str) -> String {
    let mut end = words.len().min(123);
    while !words.is_char_boundary(end) {
        end -= 1;
    }
    words[..end].to_string()
}

/// What ended a view.
enum Ended {
    /// The viewer closed the socket (or it broke).
    Viewer,
    /// The VNC server's connection ended: the session or its desktop did.
    Screen,
    /// The gate refused a viewer's message, in these words.
    Refused(String),
}

/// The screen's bytes, as they come, in messages of at most [`SCREEN_CHUNK`].
async fn screen_to_viewer(
    screen: &mut ReadHalf<DuplexStream>,
    viewer: &mut SplitSink<WebSocket, Message>,
) {
    let mut buffer = vec![0u8; SCREEN_CHUNK];
    loop {
        match screen.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let chunk = buffer[..n].to_vec();
                if viewer.send(Message::Binary(chunk.into())).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// The viewer's messages through the gate, until it closes or sends what the gate refuses.
async fn viewer_to_screen(
    viewer: &mut SplitStream<WebSocket>,
    view: &mut ScreenView,
    screen: &mut WriteHalf<DuplexStream>,
) -> Ended {
    while let Some(Ok(message)) = viewer.next().await {
        let deliver = match message {
            Message::Binary(data) => match view.from_viewer(&data) {
                Ok(deliver) => deliver,
                Err(e) => return Ended::Refused(e.to_string()),
            },
            Message::Text(text) => match serde_json::from_str::<ScreenViewMessage>(&text) {
                Ok(ScreenViewMessage::TakeOver) => {
                    view.take_over();
                    Vec::new()
                }
                Ok(ScreenViewMessage::GiveBack) => view.give_back(""),
                Err(_) => return Ended::Refused(TEXT_MESSAGES.into()),
            },
            Message::Close(_) => return Ended::Viewer,
            Message::Ping(_) | Message::Pong(_) => Vec::new(),
        };
        if !deliver.is_empty() && screen.write_all(&deliver).await.is_err() {
            return Ended::Screen;
        }
    }
    Ended::Viewer
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(view))
}

#[cfg(test)]
mod tests {
    use super::close_reason;

    #[test]
    fn a_close_reason_fits_its_frame() {
        assert_eq!(close_reason("short"), "short");
        let long = "é".repeat(100);
        let cut = close_reason(&long);
        assert!(cut.len() <= 123 && long.starts_with(&cut) && cut.len() >= 121);
    }
}
