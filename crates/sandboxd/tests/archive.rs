//! Directory trees as tar archives through the REST API, against a real service, its agent in a
//! real sandbox and Docker: a tree round-trips with its modes and symlinks; extraction refuses
//! escapes, hard links, devices and archives over the transfer limit, and leaves nothing.

mod common;

use common::{base_config, TestService, TOKEN};
use serde_json::Value;
use std::io::Read;

fn route(id: &str, path: &str) -> String {
    format!("/v1/sessions/{id}/archive?path={path}")
}

async fn sh_ok(service: &TestService, id: &str, command: &str) -> String {
    let result = service.sh(id, command).await;
    assert_eq!(result["exit_code"], 0, "{command}: {result}");
    result["stdout"].as_str().unwrap().to_string()
}

async fn upload(service: &TestService, id: &str, path: &str, tar: Vec<u8>) -> (u16, Value) {
    // A connection of its own: the service may answer a refused upload before reading all of
    // it, and close the connection then.
    let response = reqwest::Client::new()
        .put(service.url(&route(id, path)))
        .bearer_auth(TOKEN)
        .header("content-type", "application/x-tar")
        .body(tar)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// A one-entry tar whose name is written as is, past the tar crate's own checks.
fn single(kind: tar::EntryType, name: &str, data: &[u8]) -> Vec<u8> {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_size(data.len() as u64);
    header.set_mode(0o644);
    header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
    header.set_cksum();
    let mut builder = tar::Builder::new(Vec::new());
    builder.append(&header, data).unwrap();
    builder.into_inner().unwrap()
}

#[tokio::test]
async fn a_tree_round_trips_with_modes_and_symlinks() {
    let service = TestService::start(&base_config(2, ""));
    let id = service.open("sh").await;
    sh_ok(
        &service,
        &id,
        "mkdir -p tree/sub/empty && printf 'hello' > tree/sub/a.txt && printf '#!/bin/sh\\n' > tree/run.sh \
         && chmod 750 tree/run.sh && chmod 700 tree/sub && ln -s /etc/passwd tree/sub/passwd-link \
         && mkfifo tree/fifo",
    )
    .await;

    let response = service.get(&route(&id, "tree")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/x-tar");
    let tar = response.bytes().await.unwrap().to_vec();
    let mut seen = Vec::new();
    for entry in tar::Archive::new(tar.as_slice()).entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().display().to_string();
        let (kind, mode) = (entry.header().entry_type(), entry.header().mode().unwrap());
        let mut contents = String::new();
        entry.read_to_string(&mut contents).unwrap();
        match name.as_str() {
            "run.sh" => assert_eq!(mode, 0o750),
            "sub" => assert_eq!((kind, mode), (tar::EntryType::Directory, 0o700)),
            "sub/a.txt" => assert_eq!(contents, "hello"),
            "sub/passwd-link" => {
                assert_eq!(kind, tar::EntryType::Symlink, "not followed");
                let target = entry.link_name().unwrap().unwrap();
                assert_eq!(target.to_str(), Some("/etc/passwd"));
            }
            _ => {}
        }
        seen.push(name);
    }
    seen.sort();
    assert_eq!(
        seen,
        ["run.sh", "sub", "sub/a.txt", "sub/empty", "sub/passwd-link"],
        "the FIFO is left out"
    );

    let (status, written) = upload(&service, &id, "/tmp/copy/here", tar).await;
    assert_eq!(status, 200, "{written}");
    assert_eq!(
        (
            &written["files"],
            &written["dirs"],
            &written["symlinks"],
            &written["bytes"]
        ),
        (&2.into(), &2.into(), &1.into(), &15.into())
    );
    let listing = sh_ok(
        &service,
        &id,
        "cd /tmp/copy/here && stat -c '%n %a %F' run.sh sub sub/a.txt && readlink sub/passwd-link \
         && cat sub/a.txt && ls -A",
    )
    .await;
    assert_eq!(
        listing,
        "run.sh 750 regular file\nsub 700 directory\nsub/a.txt 644 regular file\n/etc/passwd\nhellorun.sh\nsub\n"
    );

    // Extracting again over the same names is refused, and changes nothing.
    let again = service.get(&route(&id, "tree")).send().await.unwrap();
    let (status, error) = upload(
        &service,
        &id,
        "/tmp/copy/here",
        again.bytes().await.unwrap().to_vec(),
    )
    .await;
    assert_eq!(
        (status, error["error"]["code"].as_str()),
        (409, Some("busy")),
        "{error}"
    );
    assert_eq!(
        sh_ok(&service, &id, "ls -A /tmp/copy/here").await,
        "run.sh\nsub\n"
    );

    let activity = service
        .get_json(&format!("/v1/sessions/{id}/activity"))
        .await;
    let actions: Vec<&str> = activity["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert!(actions.contains(&"download_archive") && actions.contains(&"upload_archive"));
}

#[tokio::test]
async fn escapes_special_entries_and_oversize_are_refused_and_leave_nothing() {
    let service = TestService::start(&base_config(2, "max_upload_bytes = \"1m\""));
    let id = service.open("sh").await;
    let through_symlink = {
        let mut builder = tar::Builder::new(Vec::new());
        let mut link = tar::Header::new_gnu();
        link.set_entry_type(tar::EntryType::Symlink);
        link.set_size(0);
        builder
            .append_link(&mut link, "escape", "/tmp/outside")
            .unwrap();
        let mut planted = single(tar::EntryType::Regular, "escape/planted", b"x");
        planted.truncate(planted.len() - 1024);
        let mut tar = builder.into_inner().unwrap();
        tar.truncate(tar.len() - 1024);
        tar.extend(planted);
        tar.extend([0u8; 1024]);
        tar
    };
    let oversized = {
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(2 << 20);
        header.set_mode(0o644);
        builder
            .append_data(&mut header, "big", std::io::repeat(7).take(2 << 20))
            .unwrap();
        builder.into_inner().unwrap()
    };
    sh_ok(&service, &id, "mkdir /tmp/outside").await;
    let cases = [
        (
            "dotdot",
            single(tar::EntryType::Regular, "../up", b"x"),
            400,
        ),
        (
            "absolute",
            single(tar::EntryType::Regular, "/tmp/abs", b"x"),
            400,
        ),
        ("through a symlink", through_symlink, 400),
        ("hard link", single(tar::EntryType::Link, "hard", b""), 400),
        ("device", single(tar::EntryType::Char, "null", b""), 400),
        ("over the limit", oversized, 413),
    ];
    for (case, tar, expected) in cases {
        let (status, error) = upload(&service, &id, "/tmp/t/target", tar).await;
        assert_eq!(status, expected, "{case}: {error}");
        let left = sh_ok(&service, &id, "ls -A /tmp; ls -A /tmp/outside").await;
        assert_eq!(left, "outside\n", "{case}: something was left");
    }
    // A download over the limit is refused before anything is sent.
    sh_ok(
        &service,
        &id,
        "mkdir big && head -c 1100000 /dev/zero > big/f",
    )
    .await;
    let response = service.get(&route(&id, "big")).send().await.unwrap();
    assert_eq!(response.status(), 413);
}
