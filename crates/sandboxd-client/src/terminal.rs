//! An interactive terminal over the PTY WebSocket.

use crate::client::Client;
use crate::error::ClientError;
use futures_util::{SinkExt, StreamExt};
use sandboxd_api::{ProcessInfo, TerminalMessage};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A shell on a new terminal in a sandbox, connected.
pub struct Terminal {
    socket: Socket,
    /// The process on the terminal, as the service started it.
    pub process: ProcessInfo,
}

/// What the terminal sends.
#[derive(Debug, Clone, PartialEq)]
pub enum TerminalEvent {
    Output(Vec<u8>),
    /// The shell exited; the socket closes after it.
    Exit {
        exit_code: Option<i32>,
        signal: Option<i32>,
    },
}

impl Client {
    /// `GET /v1/sessions/{id}/pty?cols=..&rows=..` as a WebSocket: `/bin/sh` on a new
    /// terminal of that size. Connecting is bounded by the request timeout.
    pub async fn open_terminal(
        &self,
        id: &str,
        cols: u16,
        rows: u16,
    ) -> Result<Terminal, ClientError> {
        let mut url = self.url(&["sessions", id, "pty"]);
        url.set_scheme("ws").expect("http and ws URLs are alike");
        url.query_pairs_mut()
            .append_pair("cols", &cols.to_string())
            .append_pair("rows", &rows.to_string());
        let mut request = url
            .as_str()
            .into_client_request()
            .map_err(|e| self.transport(&e.to_string()))?;
        let headers = request.headers_mut();
        let bearer = format!("Bearer {}", self.token);
        headers.insert(
            "authorization",
            bearer
                .parse()
                .map_err(|_| self.transport("the token is not a valid header"))?,
        );
        headers.insert(
            sandboxd_api::CLIENT_HEADER,
            self.interface.as_str().parse().expect("a plain name"),
        );
        let connected = tokio::time::timeout(
            self.request_timeout,
            tokio_tungstenite::connect_async(request),
        )
        .await
        .map_err(|_| self.timed_out())?;
        let mut socket = match connected {
            Ok((socket, _)) => socket,
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                let status = response.status();
                let body = response.body().clone().unwrap_or_default();
                return Err(self.error_from(status, url.to_string(), &body));
            }
            Err(e) => return Err(self.transport(&e.to_string())),
        };
        // The first message says which process runs on the terminal.
        loop {
            match socket.next().await {
                Some(Ok(Message::Text(text))) => {
                    if let Ok(TerminalMessage::Started { process }) = serde_json::from_str(&text) {
                        return Ok(Terminal { socket, process });
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(self.transport(&e.to_string())),
                None => return Err(self.transport("the terminal closed before it started")),
            }
        }
    }

    fn transport(&self, cause: &str) -> ClientError {
        ClientError::Transport {
            url: self.base_url().to_string(),
            cause: cause.to_string(),
        }
    }
}

impl Terminal {
    /// Sends keystrokes.
    pub async fn send(&mut self, input: &[u8]) -> Result<(), ClientError> {
        self.socket
            .send(Message::Binary(input.to_vec().into()))
            .await
            .map_err(|e| broken(&e))
    }

    /// Tells the terminal its new window size.
    pub async fn resize(&mut self, cols: u16, rows: u16) -> Result<(), ClientError> {
        let text = serde_json::to_string(&TerminalMessage::Resize { cols, rows })
            .expect("a plain message");
        self.socket
            .send(Message::Text(text.into()))
            .await
            .map_err(|e| broken(&e))
    }

    /// The next output or the exit; `None` when the socket closed without an exit.
    pub async fn next(&mut self) -> Result<Option<TerminalEvent>, ClientError> {
        loop {
            match self.socket.next().await {
                Some(Ok(Message::Binary(data))) => {
                    return Ok(Some(TerminalEvent::Output(data.to_vec())))
                }
                Some(Ok(Message::Text(text))) => match serde_json::from_str(&text) {
                    Ok(TerminalMessage::Exit { exit_code, signal }) => {
                        return Ok(Some(TerminalEvent::Exit { exit_code, signal }))
                    }
                    Ok(TerminalMessage::Error { code, message }) => {
                        return Err(ClientError::Api {
                            status: 502,
                            code,
                            message,
                            remedy: None,
                        })
                    }
                    _ => {}
                },
                Some(Ok(Message::Close(_))) | None => return Ok(None),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(broken(&e)),
            }
        }
    }

    /// Closes the socket, which hangs the shell up.
    pub async fn close(mut self) {
        let _ = self.socket.close(None).await;
    }
}

fn broken(error: &tokio_tungstenite::tungstenite::Error) -> ClientError {
    ClientError::Transport {
        url: "the terminal".into(),
        cause: error.to_string(),
    }
}
