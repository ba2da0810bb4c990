//! An interactive terminal over a WebSocket: the core starts the shell on a new terminal and
//! attaches to it before the upgrade, so a failure is an ordinary HTTP error; this bridges the
//! socket and the terminal until either side ends.

use crate::error::ApiError;
use crate::extract::{ApiQuery, Authenticated, QueryRequest, Upgrade};
use crate::state::AppState;
use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket};
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use sandboxd_api::TerminalMessage;
use sandboxd_core::activity::PendingEntry;
use sandboxd_core::terminal::{TerminalInput, TerminalOutput};
use sandboxd_core::{Error, Terminal};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// A terminal's input arrives in keystrokes and pastes.
const MAX_TERMINAL_MESSAGE: usize = 1 << 20;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TerminalQuery {
    cols: Option<u16>,
    rows: Option<u16>,
    command: Option<String>,
}

impl QueryRequest for TerminalQuery {
    const TAKES: &'static str = "`cols`, `rows` and `command`";
}

/// An interactive terminal over a WebSocket: `/bin/sh` (or `/bin/sh -c COMMAND`) on a new
/// pseudo-terminal. The process is started and attached before the upgrade, so a failure
/// is an ordinary HTTP error; closing the socket before it exits hangs it up.
#[utoipa::path(
    get,
    path = "/v1/sessions/{id}/pty",
    tag = "processes",
    summary = "An interactive terminal over a WebSocket",
    description = "Starts /bin/sh (or `/bin/sh -c COMMAND`) on a new pseudo-terminal and upgrades to a WebSocket: binary messages are the terminal's bytes both ways; text messages are TerminalMessage JSON (`resize` from the client; `started`, `exit` and `error` from the service). A browser, which cannot set `Authorization` on a WebSocket, offers a ticket from POST /v1/sessions/{id}/tickets as the subprotocol `ticket.<ticket>` beside `sandboxd` (other clients may offer the token as `bearer.<token in unpadded base64url>`). Closing the socket hangs the terminal up.",
    params(
        ("id" = String, Path, description = "The session's id"),
        ("cols" = Option<u16>, Query, description = "The terminal's width (default 80)"),
        ("rows" = Option<u16>, Query, description = "The terminal's height (default 24)"),
        ("command" = Option<String>, Query, description = "A command to run on the terminal instead of an interactive shell")
    ),
    responses(
        (status = 101, description = "Switched to the WebSocket"),
        (status = 400, description = "`invalid_request` or `spawn_failed`; or not a WebSocket upgrade", body = sandboxd_api::ErrorBody),
        crate::openapi::SessionErrors
    )
)]
pub async fn terminal(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<TerminalQuery>,
    Upgrade(upgrade): Upgrade,
) -> Result<Response, ApiError> {
    let terminal = state
        .core
        .open_terminal(&caller, &id, query.cols, query.rows, query.command)
        .await?;
    Ok(upgrade
        .max_message_size(MAX_TERMINAL_MESSAGE)
        .on_upgrade(move |socket| run_terminal(socket, terminal))
        .into_response())
}

async fn run_terminal(socket: WebSocket, terminal: Terminal) {
    let Terminal {
        info,
        mut output,
        mut input,
        mut entry,
    } = terminal;
    let (mut to_client, mut from_client) = socket.split();
    let started = TerminalMessage::Started { process: info };
    if send_message(&mut to_client, &started).await.is_err() {
        return;
    }
    let ended = {
        let output = terminal_output(&mut output, &mut to_client, &entry);
        let input = terminal_input(&mut from_client, &mut input, &entry);
        tokio::select! {
            ended = output => Some(ended),
            () = input => None,
        }
    };
    let (last, code) = match ended {
        // The client closed the terminal, a normal end: dropping the attachment hangs the
        // process up.
        None => {
            entry.end(None);
            return;
        }
        Some(Ok(info)) => {
            entry.exit_code = info.exit_code;
            entry.end(None);
            let last = TerminalMessage::Exit {
                exit_code: info.exit_code,
                signal: info.signal,
            };
            (last, close_code::NORMAL)
        }
        Some(Err(e)) => {
            let message = e.to_string();
            entry.end(Some(message.clone()));
            let last = TerminalMessage::Error {
                code: "agent_error".into(),
                message,
            };
            (last, close_code::ERROR)
        }
    };
    if send_message(&mut to_client, &last).await.is_ok() {
        let close = CloseFrame {
            code,
            reason: "".into(),
        };
        let _ = to_client.send(Message::Close(Some(close))).await;
    }
}

/// Forwards the terminal's output until the process exits; returns its final state.
async fn terminal_output(
    output: &mut TerminalOutput,
    to_client: &mut (impl Sink<Message> + Unpin),
    entry: &PendingEntry,
) -> Result<sandboxd_api::ProcessInfo, Error> {
    loop {
        match output.next().await? {
            Ok(data) => {
                entry.touch();
                if to_client.send(Message::Binary(data.into())).await.is_err() {
                    // The client is gone; its side notices and ends the terminal.
                    std::future::pending::<()>().await;
                }
            }
            Err(exited) => return Ok(exited),
        }
    }
}

/// Forwards keystrokes and resizes until the client closes the socket.
async fn terminal_input(
    from_client: &mut (impl Stream<Item = Result<Message, axum::Error>> + Unpin),
    input: &mut TerminalInput,
    entry: &PendingEntry,
) {
    while let Some(Ok(message)) = from_client.next().await {
        entry.touch();
        let sent = match message {
            Message::Binary(data) => input.send(&data).await,
            Message::Text(text) => match serde_json::from_str(text.as_str()) {
                Ok(TerminalMessage::Resize { cols, rows }) => input.resize(cols, rows).await,
                // Text messages are control messages; input comes as binary ones.
                _ => Ok(()),
            },
            Message::Close(_) => return,
            Message::Ping(_) | Message::Pong(_) => Ok(()),
        };
        if sent.is_err() {
            // The agent connection failed: the output side reports it.
            std::future::pending::<()>().await;
        }
    }
}

async fn send_message(
    to_client: &mut (impl Sink<Message> + Unpin),
    message: &TerminalMessage,
) -> Result<(), ()> {
    let text = serde_json::to_string(message).unwrap_or_default();
    to_client
        .send(Message::Text(text.into()))
        .await
        .map_err(|_| ())
}

/// This file's routes, each at the path its annotation documents (`app.rs` merges them).
pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(terminal))
}
