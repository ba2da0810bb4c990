//! The interactive terminal over a WebSocket.

use crate::common::{base_config, TestService, TOKEN};
use crate::helpers::{activity, EVENT_TIMEOUT};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens the terminal WebSocket of a session; `query` starts with `?` or is empty.
async fn open_terminal(
    service: &TestService,
    id: &str,
    query: &str,
) -> Result<Socket, tokio_tungstenite::tungstenite::Error> {
    let url = format!(
        "{}/v1/sessions/{id}/pty{query}",
        service.url.replacen("http", "ws", 1)
    );
    let mut request = url.into_client_request().unwrap();
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    let (socket, _) = tokio_tungstenite::connect_async(request).await?;
    Ok(socket)
}

async fn next_message(socket: &mut Socket) -> Message {
    let message = tokio::time::timeout(EVENT_TIMEOUT, socket.next()).await;
    message.expect("a message in time").unwrap().unwrap()
}

/// Reads terminal output until `needle` appears in it. WebSocket pings and pongs may come
/// between output messages at any time and are passed over; a text message (the exit or an
/// error) or the close before `needle` fails the test.
async fn read_terminal_until(socket: &mut Socket, needle: &str) -> String {
    let mut seen = String::new();
    while !seen.contains(needle) {
        match next_message(socket).await {
            Message::Binary(data) => seen += &String::from_utf8_lossy(&data),
            Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("{other:?} before {needle:?}; saw {seen:?}"),
        }
    }
    seen
}

#[tokio::test]
async fn terminal_over_a_websocket() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    let opened = Instant::now();
    let mut socket = open_terminal(&service, &id, "?cols=90&rows=30")
        .await
        .unwrap();
    let Message::Text(started) = next_message(&mut socket).await else {
        panic!("the first message is the start");
    };
    let started: Value = serde_json::from_str(started.as_str()).unwrap();
    assert_eq!(started["type"], "started");
    assert_eq!(started["process"]["pty"], true);
    println!("terminal open after {:?}", opened.elapsed());

    let typed = Instant::now();
    socket
        .send(Message::Binary("echo hi-from-pty\n".into()))
        .await
        .unwrap();
    // The command's output line, not the terminal's echo of the command.
    read_terminal_until(&mut socket, "\nhi-from-pty\r\n").await;
    println!("echo round trip {:?}", typed.elapsed());
    socket
        .send(Message::Binary("stty size\n".into()))
        .await
        .unwrap();
    read_terminal_until(&mut socket, "30 90").await;

    let resize = json!({"type": "resize", "cols": 120, "rows": 40}).to_string();
    socket.send(Message::Text(resize.into())).await.unwrap();
    socket
        .send(Message::Binary("stty size\n".into()))
        .await
        .unwrap();
    read_terminal_until(&mut socket, "40 120").await;

    // The process shows in the list while the terminal is open.
    let list = service
        .get_json(&format!("/v1/sessions/{id}/processes"))
        .await;
    assert!(list["processes"][0]["pty"] == true && list["processes"][0]["state"] == "running");

    socket
        .send(Message::Binary("exit 3\n".into()))
        .await
        .unwrap();
    let exit = loop {
        match next_message(&mut socket).await {
            Message::Binary(_) | Message::Ping(_) | Message::Pong(_) => {}
            Message::Text(text) => break serde_json::from_str::<Value>(text.as_str()).unwrap(),
            other => panic!("{other:?} before the exit message"),
        }
    };
    assert_eq!(
        exit,
        json!({"type": "exit", "exit_code": 3, "signal": null})
    );
    assert!(matches!(next_message(&mut socket).await, Message::Close(_)));

    let entries = activity(&service, &id).await;
    let pty = entries.iter().find(|e| e["action"] == "pty").unwrap();
    assert_eq!(
        (pty["target"].as_str(), pty["exit_code"].as_i64()),
        (Some("sh"), Some(3))
    );

    // Closing the socket hangs the shell up, as closing a terminal window does.
    let mut socket = open_terminal(&service, &id, "").await.unwrap();
    let Message::Text(started) = next_message(&mut socket).await else {
        panic!("the first message is the start");
    };
    let started: Value = serde_json::from_str(started.as_str()).unwrap();
    let shell = started["process"]["id"].as_str().unwrap().to_string();
    socket.close(None).await.unwrap();
    drop(socket);
    let give_up = Instant::now() + Duration::from_secs(10);
    let hung_up = loop {
        let info = service
            .get_json(&format!("/v1/sessions/{id}/processes/{shell}"))
            .await;
        if info["state"] == "exited" {
            break info;
        }
        assert!(Instant::now() < give_up, "{info}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(hung_up["signal"], 1, "SIGHUP");

    // Invalid sizes are refused before the upgrade.
    match open_terminal(&service, &id, "?cols=0").await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), 400)
        }
        other => panic!("{:?}", other.map(|_| "upgraded")),
    }
}
