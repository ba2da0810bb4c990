//! The Docker engine restarting under a running service. It stops every container on the
//! engine, so it runs alone, after the rest of the suite (scripts/test.sh does that).

mod common;

use common::{base_config, TestService};
use std::process::Command;
use std::time::{Duration, Instant};

fn restart_engine() {
    let stopped = Command::new("pkill")
        .args(["-TERM", "-x", "dockerd"])
        .status()
        .unwrap();
    assert!(stopped.success(), "no dockerd to stop");
    let deadline = Instant::now() + Duration::from_secs(60);
    while Command::new("pgrep")
        .args(["-x", "dockerd"])
        .status()
        .unwrap()
        .success()
    {
        assert!(Instant::now() < deadline, "dockerd did not stop");
        std::thread::sleep(Duration::from_millis(200));
    }
    let setup = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/host-setup.sh");
    let started = Command::new("bash").arg(setup).status().unwrap();
    assert!(
        started.success(),
        "host-setup.sh could not start dockerd again"
    );
}

#[tokio::test]
#[ignore = "restarts the Docker engine: run alone, as scripts/test.sh does"]
async fn the_service_survives_an_engine_restart() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    assert_eq!(service.sh(&id, "echo before").await["stdout"], "before\n");

    tokio::task::spawn_blocking(restart_engine).await.unwrap();

    let health = service.healthz().await;
    assert_eq!(health.status(), 200, "the service kept serving");
    let info = service.wait_for_end(&id, Duration::from_secs(20)).await;
    assert_eq!(
        info["state"], "ended",
        "the session whose sandbox died is reported: {info}"
    );
    assert!(
        info["end_reason"]
            .as_str()
            .unwrap()
            .contains("Docker engine restarted"),
        "{info}"
    );

    let fresh = service.open("sh").await;
    assert_eq!(
        service.sh(&fresh, "echo after").await["stdout"],
        "after\n",
        "new sessions work"
    );
}
