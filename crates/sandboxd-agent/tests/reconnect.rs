//! The agent's connections end to end: the spares it keeps, what it does when the service
//! closes one, goes away or comes back.

mod common;

use common::*;
use sandboxd_agent_proto::host::{make_wake_fifo, wake_agent};
use sandboxd_agent_proto::{ping, run_exec, AGENT_SPARES, MAX_IDLE};
use std::time::{Duration, Instant};

#[tokio::test]
async fn says_hello_and_answers_pings() {
    let fixture = Fixture::start().await;
    let mut connection = fixture.connection().await;
    ping(&mut connection, Duration::from_secs(2)).await.unwrap();
    ping(&mut connection, Duration::from_secs(2)).await.unwrap();
    // Once it answered, a connection counts as a spare again; closed, it is replaced.
    drop(connection);
    fixture.await_spares(Duration::from_secs(2)).await;
}

#[tokio::test]
async fn with_no_spare_left_in_the_hub_the_agent_dials_one_more_when_asked() {
    let fixture = Fixture::start().await;
    fixture.await_spares(READY_TIMEOUT).await;
    // Connections that answered and are still held, as a request's lease is until it is
    // given back: the agent counts them as spares, so it dials no replacement by itself.
    let mut held = Vec::new();
    while fixture.hub.idle_count() > 0 {
        assert!(
            held.len() < 3 * AGENT_SPARES,
            "the hub keeps getting connections"
        );
        let mut lease = fixture.connection().await;
        ping(&mut lease, Duration::from_secs(2)).await.unwrap();
        held.push(lease);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut more = fixture
        .hub
        .acquire(Duration::from_secs(2))
        .await
        .expect("asked through its wake FIFO, the agent dials one more");
    ping(&mut more, Duration::from_secs(2)).await.unwrap();
}

#[tokio::test]
async fn connections_carry_request_after_request_and_spares_do_not_pile_up() {
    let fixture = Fixture::start().await;
    let echo = |round: usize| request(&["sh", "-c", "echo $0", &round.to_string()]);
    // The agent answers on one connection for as long as it stays open.
    let mut held = fixture.connection().await;
    for round in 0..3 {
        let result = run_exec(&mut held, &echo(round), None, REPORT_GRACE)
            .await
            .unwrap();
        assert_eq!(text(&result.stdout), format!("{round}\n"));
    }
    held.give_back();
    // Given back after each request, connections are reused, and the agent counts them as
    // spares again rather than dialing a new one per request (the hub would then hold its
    // maximum of 8). The agent counts a connection idle only once its answer is out, and the
    // hub hands out the oldest spare, so the next request may find the agent one spare short
    // (two on a loaded machine, when the thread that answered last is still not scheduled)
    // and have one more dialed; the hub closes such extras when they are given back.
    for round in 0..40 {
        let mut connection = fixture.connection().await;
        let result = run_exec(&mut connection, &echo(round), None, REPORT_GRACE)
            .await
            .unwrap();
        assert_eq!(text(&result.stdout), format!("{round}\n"));
        connection.give_back();
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        fixture.hub.idle_count() < MAX_IDLE,
        "{} parked: as many as the hub keeps",
        fixture.hub.idle_count()
    );
}

/// Within this long of the service's word the agent is back: well before its fallback, the
/// earliest it dials again without the word (6 s after its dial failed).
const WOKEN_WITHIN: Duration = Duration::from_secs(4);

#[tokio::test]
async fn agent_reconnects_when_the_service_comes_back() {
    let mut fixture = Fixture::start().await;
    fixture.restart_hub().await;
    wake_agent(&fixture.socket);
    fixture
        .hub
        .wait_ready(WOKEN_WITHIN)
        .await
        .expect("the agent dials the new hub at the word");
    // One connection first: thousands of agents come back at once.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(fixture.hub.idle_count(), 1, "one connection at first");
    let result = fixture
        .exec(&request(&["echo", "back"]), None)
        .await
        .unwrap();
    assert_eq!(text(&result.stdout), "back\n");
    // The other spares follow within 1.5 + 3 s.
    fixture.await_spares(Duration::from_secs(6)).await;
}

/// The agent's threads named "connection", by id, once there is one per spare: the hub counts
/// a connection at its hello, which the agent writes before the thread serving it runs.
async fn connection_threads(agent: &Agent) -> std::collections::BTreeSet<u32> {
    let give_up = Instant::now() + READY_TIMEOUT;
    loop {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", agent.0.id())).unwrap();
        let threads: std::collections::BTreeSet<u32> = tasks
            .map(|task| task.unwrap().path())
            .filter(|task| {
                std::fs::read_to_string(task.join("comm"))
                    .is_ok_and(|c| c.trim_end() == "connection")
            })
            .map(|task| task.file_name().unwrap().to_str().unwrap().parse().unwrap())
            .collect();
        if threads.len() >= AGENT_SPARES || Instant::now() > give_up {
            return threads;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn connections_after_the_service_came_back_are_served_by_the_same_threads() {
    let mut fixture = Fixture::start().await;
    fixture.await_spares(READY_TIMEOUT).await;
    let before = connection_threads(&fixture.agent).await;
    assert_eq!(before.len(), AGENT_SPARES, "a thread per spare: {before:?}");
    fixture.restart_hub().await;
    wake_agent(&fixture.socket);
    fixture.await_spares(Duration::from_secs(10)).await;
    // Thousands of agents losing the service at once: their threads exiting and being made
    // again cost the host seconds of CPU, so they wait for the next connections instead.
    // (A dial that wins the race with a thread seeing its connection close gets a new one.)
    let after = connection_threads(&fixture.agent).await;
    assert!(after.is_superset(&before), "{before:?} then {after:?}");
    let result = fixture.exec(&request(&["echo", "back"]), None).await;
    assert_eq!(text(&result.unwrap().stdout), "back\n");
}

#[tokio::test]
async fn a_service_going_away_is_not_dialed_again_until_its_word() {
    // A killed service's listener still accepts until the kernel releases it, seconds later
    // with thousands of sandboxes: its connections close first, without a dismissal.
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("agent.sock");
    secret_beside(&socket);
    make_wake_fifo(&socket).unwrap();
    let dying = tokio::net::UnixListener::bind(&socket).unwrap();
    let _agent = Agent::spawn(&socket);
    let mut spares = Vec::new();
    for _ in 0..AGENT_SPARES {
        let (spare, _) = tokio::time::timeout(READY_TIMEOUT, dying.accept())
            .await
            .expect("the agent dials its spares")
            .unwrap();
        spares.push(spare);
    }
    drop(spares);
    assert!(
        tokio::time::timeout(Duration::from_secs(2), dying.accept())
            .await
            .is_err(),
        "the agent dialed a service that went away"
    );
    wake_agent(&socket);
    tokio::time::timeout(WOKEN_WITHIN, dying.accept())
        .await
        .expect("the agent dials at the word")
        .unwrap();
}

#[tokio::test]
async fn without_the_word_the_agent_comes_back_at_its_fallback() {
    let mut fixture = Fixture::start().await;
    fixture.restart_hub().await;
    // Nobody wakes it: the word was lost (a sandbox process may read the FIFO too).
    assert!(
        fixture.hub.wait_ready(WOKEN_WITHIN).await.is_err(),
        "without the word it waits"
    );
    fixture
        .hub
        .wait_ready(Duration::from_secs(15))
        .await
        .expect("the agent dials again at its fallback");
    let result = fixture.exec(&request(&["echo", "back"]), None).await;
    assert_eq!(text(&result.unwrap().stdout), "back\n");
}
