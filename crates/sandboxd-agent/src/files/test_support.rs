//! Helpers for the file operations' tests: an operation run against a simulated service.

use sandboxd_agent_proto::ErrorCode;
use sandboxd_agent_proto::{read_frame, Event, ProtoError};
use std::fs;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::thread::{self, JoinHandle};

/// Runs `op` as the agent would on one end of a socket pair; the other end is the service.
pub(super) fn start<F>(op: F) -> (UnixStream, JoinHandle<Result<(), ProtoError>>)
where
    F: FnOnce(&mut UnixStream) -> Result<(), ProtoError> + Send + 'static,
{
    let (mut agent, service) = UnixStream::pair().unwrap();
    (service, thread::spawn(move || op(&mut agent)))
}

pub(super) fn event(service: &mut UnixStream) -> Event {
    read_frame(service).unwrap().parse_json().unwrap()
}

pub(super) fn error_code(event: Event) -> ErrorCode {
    match event {
        Event::Error { code, .. } => code,
        other => panic!("not an error: {other:?}"),
    }
}

pub(super) fn path_in(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_str().unwrap().to_string()
}

pub(super) fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
