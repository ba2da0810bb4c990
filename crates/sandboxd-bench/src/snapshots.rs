//! Pause, resume, snapshots and forks: through sandboxd, and pause and resume also through the
//! raw API (the engine's own pause and unpause), the floor of what the service adds.

use crate::raw::Raw;
use crate::report::time;
use crate::report::{print_row, Sample};
use crate::sandboxd::Api;
use anyhow::{Context, Result};
use serde_json::json;

pub(crate) async fn run(
    n: usize,
    api: &Api,
    raw: &Raw,
    session: &str,
    container: &str,
) -> Result<()> {
    let post = reqwest::Method::POST;
    let (mut pause, mut raw_pause, mut resume, mut raw_resume) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        time(
            &mut pause,
            api.call(post.clone(), &format!("/v1/sessions/{session}/pause"), None),
        )
        .await?;
        time(&mut raw_pause, async {
            Ok(raw.docker.pause_container(container).await?)
        })
        .await?;
        time(
            &mut resume,
            api.call(
                post.clone(),
                &format!("/v1/sessions/{session}/resume"),
                None,
            ),
        )
        .await?;
        time(&mut raw_resume, async {
            Ok(raw.docker.unpause_container(container).await?)
        })
        .await?;
    }
    print_row("pause", &Sample(pause), Some(&Sample(raw_pause)));
    print_row("resume", &Sample(resume), Some(&Sample(raw_resume)));

    api.exec(
        session,
        "head -c 10485760 /dev/urandom > /workspace/ten.bin",
    )
    .await?;
    let (mut snapshots, mut opens, mut forks) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..n {
        let body = json!({"name": format!("bench {round}")});
        let path = format!("/v1/sessions/{session}/snapshots");
        let snapshot = time(&mut snapshots, api.call(post.clone(), &path, Some(body))).await?;
        let id = snapshot["id"].as_str().context("no snapshot id")?;
        let body = json!({"snapshot": id});
        let opened = time(
            &mut opens,
            api.call(post.clone(), "/v1/sessions", Some(body)),
        )
        .await?;
        api.close(opened["id"].as_str().context("no session id")?)
            .await?;
        api.call(
            reqwest::Method::DELETE,
            &format!("/v1/snapshots/{id}"),
            None,
        )
        .await?;

        let path = format!("/v1/sessions/{session}/fork");
        let forked = time(
            &mut forks,
            api.call(post.clone(), &path, Some(json!({"count": 3}))),
        )
        .await?;
        for forked in forked["sessions"].as_array().context("no sessions")? {
            api.close(forked["id"].as_str().context("no session id")?)
                .await?;
        }
    }
    api.exec(session, "rm /workspace/ten.bin").await?;
    print_row("snapshot, 10 MB of files", &Sample(snapshots), None);
    print_row("open from a snapshot, 10 MB", &Sample(opens), None);
    print_row("fork 3, 10 MB", &Sample(forks), None);
    Ok(())
}
