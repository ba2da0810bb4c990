//! An in-memory backend and agent, for fast tests of the core and its faces without a container
//! engine. It is a fake, never a stand-in for the real suites: the agent speaks the real
//! protocol over an in-memory pipe, but "runs" a command by echoing it, and keeps files in a
//! map.
//!
//! What it runs (the script is `command`, or the last element of `argv`): `exit N` exits with
//! N; `sleep` waits until the request's timeout (it is then reported `timed_out`); `oom` exits
//! 137 as a shell does when the kernel OOM-killed its child, reported `oom_killed` as the agent
//! does from the sandbox cgroup's count; `seq N` prints the numbers 1 to N; any other
//! script prints its last word and exits 0 (`echo hello` prints `hello`). With stdin, the
//! input is echoed to stdout instead. An upload the service cancels (over its limit) writes
//! nothing.

use async_trait::async_trait;
use sandboxd_agent_proto::host::{read_frame, write_frame, write_json};
use sandboxd_agent_proto::{
    ArchiveSummary, DirEntry, EntryKind, Event, ExecRequest, ExitReport, FileStat, FrameKind,
    Request, ERROR_CANCELLED, ERROR_TOO_LARGE,
};
use sandboxd_backend::{
    AgentIo, AgentStream, Backend, BackendError, ExistingSandbox, ImageProgress, ImageRequest,
    Sandbox, SandboxSpec, Usage, HOME_DIR, WORKDIR,
};
use std::collections::{BTreeMap, HashSet};
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadBuf};

/// Files of one fake sandbox: path to contents.
type Files = Arc<Mutex<BTreeMap<String, Vec<u8>>>>;

#[derive(Default)]
struct State {
    /// Running sandboxes by session id, with their files.
    sandboxes: BTreeMap<String, (Sandbox, String, Files)>,
    /// Images the platform has.
    images: HashSet<String>,
    /// Sandboxes that stopped (as if their container exited), still listed.
    stopped: HashSet<String>,
    /// Sandboxes that are paused: their agent does not answer.
    paused: HashSet<String>,
}

/// The fake platform. Its knobs let a test make creates fail, images go missing or a sandbox
/// vanish.
#[derive(Default)]
pub struct FakeBackend {
    state: Mutex<State>,
    /// Creates that fail from now on, with an engine error.
    pub failing_creates: AtomicU32,
    /// Creates made, successful or not.
    pub creates: AtomicU32,
    /// How long a create takes.
    pub create_delay: Mutex<Duration>,
    /// How long taking back a sandbox takes (its agent dialing back).
    pub adopt_delay: Mutex<Duration>,
    /// Read by every listing: held for writing, it keeps listings waiting as a slow engine does.
    listing: Arc<tokio::sync::RwLock<()>>,
    /// Per session: held for writing, its archives wait as a starved agent's do.
    archives: Mutex<BTreeMap<String, Arc<tokio::sync::RwLock<()>>>>,
    /// Archives waiting for their session's hold to go.
    pub archives_waiting: Arc<AtomicU32>,
}

impl FakeBackend {
    /// A platform that has these images.
    pub fn with_images(images: &[&str]) -> Arc<FakeBackend> {
        let backend = FakeBackend::default();
        backend.state().images = images.iter().map(|i| i.to_string()).collect();
        Arc::new(backend)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("fake backend lock")
    }

    /// The sandboxes that run now.
    pub fn running(&self) -> usize {
        let state = self.state();
        state.sandboxes.len() - state.stopped.len()
    }

    /// Stops a sandbox as if its container exited on its own.
    pub fn stop(&self, session_id: &str) {
        self.state().stopped.insert(session_id.to_string());
    }

    /// Whether the sandbox is paused now.
    pub fn is_paused(&self, session_id: &str) -> bool {
        self.state().paused.contains(session_id)
    }

    /// Keeps every listing waiting until the guard is dropped.
    pub fn hold_listings(&self) -> tokio::sync::OwnedRwLockWriteGuard<()> {
        self.listing
            .clone()
            .try_write_owned()
            .expect("listings are held once at a time")
    }

    /// Keeps the session's archives (of snapshots) waiting until the guard is dropped.
    pub fn hold_archives(&self, session_id: &str) -> tokio::sync::OwnedRwLockWriteGuard<()> {
        let mut archives = self.archives.lock().expect("archives lock");
        let hold = archives.entry(session_id.to_string()).or_default().clone();
        hold.try_write_owned()
            .expect("archives are held once at a time")
    }

    /// Removes a sandbox behind the service's back.
    pub fn vanish(&self, session_id: &str) {
        self.state().sandboxes.remove(session_id);
    }
}

#[async_trait]
impl Backend for FakeBackend {
    async fn create(&self, spec: &SandboxSpec) -> Result<Sandbox, BackendError> {
        self.creates.fetch_add(1, Ordering::SeqCst);
        let delay = *self.create_delay.lock().expect("delay lock");
        tokio::time::sleep(delay).await;
        let failing = self
            .failing_creates
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if failing.is_ok() {
            return Err(BackendError::Engine("the fake engine refused".into()));
        }
        if !self.state().images.contains(&spec.image) {
            return Err(BackendError::ImageMissing {
                image: spec.image.clone(),
                hint: "the fake platform has no such image".into(),
            });
        }
        let sandbox = Sandbox {
            session_id: spec.session_id.clone(),
            backend_id: format!("fake-{}", spec.session_id),
        };
        let mut state = self.state();
        state.sandboxes.insert(
            spec.session_id.clone(),
            (sandbox.clone(), spec.runtime.clone(), Files::default()),
        );
        drop(state);
        Ok(sandbox)
    }

    async fn adopt(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        let delay = *self.adopt_delay.lock().expect("delay lock");
        tokio::time::sleep(delay).await;
        match self.state().sandboxes.contains_key(&sandbox.session_id) {
            true => Ok(()),
            false => Err(BackendError::SandboxGone(sandbox.session_id.clone())),
        }
    }

    async fn adopt_paused(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        self.adopt(sandbox).await
    }

    async fn pause(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        self.set_paused(sandbox, true)
    }

    async fn resume(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        self.set_paused(sandbox, false)
    }

    fn writable_places(&self) -> Vec<String> {
        vec![WORKDIR.into(), "/tmp".into()]
    }

    async fn destroy(&self, sandbox: &Sandbox) -> Result<(), BackendError> {
        let mut state = self.state();
        state.sandboxes.remove(&sandbox.session_id);
        state.stopped.remove(&sandbox.session_id);
        state.paused.remove(&sandbox.session_id);
        Ok(())
    }

    async fn agent(&self, sandbox: &Sandbox) -> Result<AgentStream, BackendError> {
        let state = self.state();
        if state.stopped.contains(&sandbox.session_id) {
            return Err(BackendError::AgentUnavailable("the sandbox stopped".into()));
        }
        if state.paused.contains(&sandbox.session_id) {
            return Err(BackendError::AgentUnavailable(
                "the sandbox is paused".into(),
            ));
        }
        let Some((_, _, files)) = state.sandboxes.get(&sandbox.session_id) else {
            return Err(BackendError::SandboxGone(sandbox.session_id.clone()));
        };
        let (service_end, agent_end) = tokio::io::duplex(1 << 16);
        let archives = self.archives.lock().expect("archives lock");
        let hold = archives.get(&sandbox.session_id).cloned();
        drop(archives);
        let waiting = (hold, self.archives_waiting.clone());
        tokio::spawn(serve_agent(agent_end, files.clone(), waiting));
        Ok(Box::new(FakeConnection(service_end)))
    }

    async fn usage(&self, sandbox: &Sandbox) -> Result<Usage, BackendError> {
        match self.state().sandboxes.contains_key(&sandbox.session_id) {
            true => Ok(Usage {
                memory_bytes: 1 << 20,
                processes: 1,
            }),
            false => Err(BackendError::SandboxGone(sandbox.session_id.clone())),
        }
    }

    async fn list(&self) -> Result<Vec<ExistingSandbox>, BackendError> {
        let _answering = self.listing.read().await;
        let state = self.state();
        Ok(state
            .sandboxes
            .iter()
            .map(|(id, (sandbox, runtime, _))| ExistingSandbox {
                sandbox: sandbox.clone(),
                runtime: runtime.clone(),
                running: !state.stopped.contains(id),
                paused: state.paused.contains(id),
            })
            .collect())
    }

    async fn has_image(&self, image: &str) -> Result<bool, BackendError> {
        Ok(self.state().images.contains(image))
    }

    async fn ensure_image(
        &self,
        request: &ImageRequest,
        progress: &(dyn Fn(ImageProgress) + Send + Sync),
    ) -> Result<String, BackendError> {
        if self.state().images.contains(&request.image) {
            return Ok(request.image.clone());
        }
        if request.build.is_none() {
            return Err(BackendError::ImageMissing {
                image: request.image.clone(),
                hint: "nothing can be pulled on the fake platform".into(),
            });
        }
        progress(ImageProgress {
            step: Some((1, 1)),
            line: "building on the fake platform".into(),
        });
        self.state().images.insert(request.image.clone());
        Ok(request.image.clone())
    }
}

impl FakeBackend {
    fn set_paused(&self, sandbox: &Sandbox, paused: bool) -> Result<(), BackendError> {
        let mut state = self.state();
        if !state.sandboxes.contains_key(&sandbox.session_id) {
            return Err(BackendError::SandboxGone(sandbox.session_id.clone()));
        }
        if paused {
            state.paused.insert(sandbox.session_id.clone());
        } else {
            state.paused.remove(&sandbox.session_id);
        }
        Ok(())
    }
}

/// The service's end of a fake agent connection; it is never reused.
struct FakeConnection(DuplexStream);

impl AgentIo for FakeConnection {
    fn reuse(self: Box<Self>) {}
}

impl AsyncRead for FakeConnection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for FakeConnection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// Answers one request on the connection, as the real agent would.
async fn serve_agent(
    mut stream: DuplexStream,
    files: Files,
    (hold, waiting): (Option<Arc<tokio::sync::RwLock<()>>>, Arc<AtomicU32>),
) -> Option<()> {
    let request: Request = read_frame(&mut stream).await.ok()?.parse_json().ok()?;
    match request {
        Request::Ping => write_json(&mut stream, &Event::Pong).await.ok(),
        Request::Exec(exec) if exec.cwd.as_deref().is_some_and(|cwd| !is_dir(&files, cwd)) => {
            // As the agent words it: quoting the program and the cwd.
            let message = format!(
                "cannot run {:?} in {:?}: No such file or directory",
                exec.argv[0],
                exec.cwd.unwrap_or_default()
            );
            refuse(&mut stream, "spawn_failed", &message).await
        }
        Request::Exec(exec) => run(&mut stream, exec).await,
        Request::ListDir { path, .. } => {
            let path = fake_key(&path);
            let prefix = format!("{}/", path.trim_end_matches('/'));
            let listed = files.lock().ok()?.clone();
            let entries: Vec<DirEntry> = listed
                .iter()
                .filter_map(|(name, contents)| {
                    let rest = name.strip_prefix(&prefix).or_else(|| {
                        (path == ".")
                            .then_some(name.as_str())
                            .filter(|n| !n.contains('/'))
                    })?;
                    Some(DirEntry {
                        name: rest.to_string(),
                        kind: EntryKind::File,
                        size: contents.len() as u64,
                        mode: 0o644,
                        modified_secs: 0,
                        modified_nanos: 0,
                        target_kind: None,
                    })
                })
                .collect();
            write_json(&mut stream, &Event::DirEntries { entries })
                .await
                .ok()?;
            write_json(&mut stream, &Event::DirEnd { truncated: false })
                .await
                .ok()
        }
        Request::ReadFile { path, .. } => {
            let path = fake_key(&path);
            let contents = files.lock().ok()?.get(&path).cloned();
            let Some(contents) = contents else {
                return refuse(&mut stream, "not_found", "no such file").await;
            };
            let size = Some(contents.len() as u64);
            write_json(&mut stream, &Event::FileOpened { size })
                .await
                .ok()?;
            write_frame(&mut stream, FrameKind::Stdout, &contents)
                .await
                .ok()?;
            let bytes = contents.len() as u64;
            write_json(&mut stream, &Event::FileEnd { bytes })
                .await
                .ok()
        }
        Request::WriteFile { path, .. } => {
            let path = fake_key(&path);
            write_json(&mut stream, &Event::WriteReady).await.ok()?;
            let Input::Complete(contents) = read_input(&mut stream).await? else {
                return refuse(&mut stream, ERROR_CANCELLED, "upload cancelled").await;
            };
            let bytes = contents.len() as u64;
            files.lock().ok()?.insert(path, contents);
            write_json(&mut stream, &Event::FileWritten { bytes })
                .await
                .ok()
        }
        // As the agent: nothing there is no error.
        Request::Delete { path, .. } => {
            files.lock().ok()?.remove(&fake_key(&path));
            write_json(&mut stream, &Event::Deleted).await.ok()
        }
        Request::ReadArchive { path, max_bytes } => {
            if let Some(hold) = hold {
                waiting.fetch_add(1, Ordering::SeqCst);
                let _ = hold.read().await;
                waiting.fetch_sub(1, Ordering::SeqCst);
            }
            let tree = archive_of(&files, &path);
            let bytes: u64 = tree.values().map(|c| c.len() as u64).sum();
            if bytes > max_bytes {
                return refuse(&mut stream, ERROR_TOO_LARGE, "over the limit").await;
            }
            let entries = tree.len() as u64;
            let opened = Event::ArchiveOpened { entries, bytes };
            write_json(&mut stream, &opened).await.ok()?;
            let encoded = serde_json::to_vec(&tree).ok()?;
            write_frame(&mut stream, FrameKind::Stdout, &encoded)
                .await
                .ok()?;
            let summary = ArchiveSummary {
                files: entries,
                bytes,
                ..ArchiveSummary::default()
            };
            write_json(&mut stream, &Event::ArchiveEnd(summary))
                .await
                .ok()
        }
        Request::WriteArchive { path, .. } => {
            write_json(&mut stream, &Event::WriteReady).await.ok()?;
            let Input::Complete(encoded) = read_input(&mut stream).await? else {
                return refuse(&mut stream, ERROR_CANCELLED, "upload cancelled").await;
            };
            let tree: BTreeMap<String, Vec<u8>> = serde_json::from_slice(&encoded).ok()?;
            let summary = ArchiveSummary {
                files: tree.len() as u64,
                bytes: tree.values().map(|c| c.len() as u64).sum(),
                ..ArchiveSummary::default()
            };
            files.lock().ok()?.extend(
                tree.into_iter()
                    .map(|(name, contents)| (in_sandbox(&path, &name), contents)),
            );
            write_json(&mut stream, &Event::ArchiveWritten(summary))
                .await
                .ok()
        }
        Request::ProcessList => {
            let processes = Vec::new();
            write_json(&mut stream, &Event::ProcessList { processes })
                .await
                .ok()
        }
        Request::KillAll => {
            let killed = Event::KilledAll {
                killed: 0,
                remaining: 0,
            };
            write_json(&mut stream, &killed).await.ok()
        }
        Request::Stat { path } => match fake_stat(&files, &fake_key(&path)) {
            Some(stat) => write_json(&mut stream, &Event::Stat(stat)).await.ok(),
            None => refuse(&mut stream, "not_found", "no such file").await,
        },
        Request::MakeDir { path, .. } => {
            let path = fake_key(&path);
            if files.lock().ok()?.contains_key(&path) {
                return refuse(&mut stream, "not_a_directory", "a file is there").await;
            }
            let created = !is_dir(&files, &path);
            write_json(&mut stream, &Event::DirMade { created })
                .await
                .ok()
        }
        Request::Move {
            from,
            to,
            overwrite,
        } => {
            let (from, to) = (fake_key(&from), fake_key(&to));
            let moved = {
                let mut files = files.lock().ok()?;
                if files.contains_key(&to) && !overwrite {
                    Err(("exists", "the destination exists"))
                } else if let Some(contents) = files.remove(&from) {
                    files.insert(to.clone(), contents);
                    Ok(())
                } else {
                    Err(("not_found", "no such file"))
                }
            };
            match moved.map(|()| fake_stat(&files, &to)) {
                Ok(Some(stat)) => write_json(&mut stream, &Event::Stat(stat)).await.ok(),
                Ok(None) => None,
                Err((code, message)) => refuse(&mut stream, code, message).await,
            }
        }
        // Watches without reporting anything, until the service lets go.
        Request::Watch { path, .. } if is_dir(&files, &fake_key(&path)) => {
            write_json(&mut stream, &Event::Watching).await.ok()?;
            let _ = read_frame(&mut stream).await;
            Some(())
        }
        Request::Watch { .. } => refuse(&mut stream, "not_found", "no such directory").await,
        Request::ListPorts { .. } => {
            let ports = Vec::new();
            write_json(&mut stream, &Event::Ports { ports }).await.ok()
        }
        // Nothing listens in a fake sandbox.
        Request::PortConnect { port } => {
            let message = format!("nothing answers on port {port}");
            refuse(&mut stream, "connection_refused", &message).await
        }
        _ => {
            refuse(
                &mut stream,
                "bad_request",
                "the fake agent does not do that",
            )
            .await
        }
    }
}

/// The fake's "archive" of a directory: its files by name below it, as JSON (the service
/// keeps archives as opaque bytes, so any encoding does). A relative name is in the working
/// directory, as the agent resolves it.
fn archive_of(files: &Files, dir: &str) -> BTreeMap<String, Vec<u8>> {
    let prefix = format!("{}/", dir.trim_end_matches('/'));
    let files = files.lock().map(|f| f.clone()).unwrap_or_default();
    files
        .into_iter()
        .filter_map(|(name, contents)| {
            let absolute = match name.starts_with('/') {
                true => name,
                false => format!("{WORKDIR}/{name}"),
            };
            Some((absolute.strip_prefix(&prefix)?.to_string(), contents))
        })
        .collect()
}

/// The key a file extracted under `dir` is kept by: relative in the working directory.
fn in_sandbox(dir: &str, name: &str) -> String {
    match dir.trim_end_matches('/') {
        WORKDIR => name.to_string(),
        dir => format!("{dir}/{name}"),
    }
}

/// A file of the map, or a directory holding one.
fn fake_stat(files: &Files, path: &str) -> Option<FileStat> {
    let size = files.lock().ok()?.get(path).map(|c| c.len() as u64);
    let kind = match size {
        Some(_) => EntryKind::File,
        None if is_dir(files, path) => EntryKind::Dir,
        None => return None,
    };
    let entry = DirEntry {
        name: path.rsplit('/').next().unwrap_or(path).to_string(),
        kind,
        size: size.unwrap_or(0),
        mode: 0o644,
        modified_secs: 0,
        modified_nanos: 0,
        target_kind: None,
    };
    Some(FileStat {
        entry,
        symlink_target: None,
        resolved_target: None,
    })
}

/// The key of the file the service names at `path` (always absolute): the fake keeps the
/// working directory's files by their relative names, as tests seed them, and `/home/user` is
/// the same directory, as in a real sandbox.
fn fake_key(path: &str) -> String {
    let inside = path
        .strip_prefix(WORKDIR)
        .or_else(|| path.strip_prefix(HOME_DIR));
    match inside {
        Some("") => ".".into(),
        Some(rest) if rest.starts_with('/') => rest[1..].to_string(),
        _ => path.to_string(),
    }
}

/// The fake's directories: `/`, `.` and those holding a file.
fn is_dir(files: &Files, path: &str) -> bool {
    let prefix = format!("{}/", path.trim_end_matches('/'));
    path == "."
        || prefix == "/"
        || files
            .lock()
            .is_ok_and(|f| f.keys().any(|name| name.starts_with(&prefix)))
}

async fn run(stream: &mut DuplexStream, exec: ExecRequest) -> Option<()> {
    let script = exec.argv.last().cloned().unwrap_or_default();
    let mut report = ExitReport {
        exit_code: Some(0),
        ..ExitReport::default()
    };
    let output = if exec.stdin {
        match read_input(stream).await? {
            Input::Complete(input) => input,
            Input::Cancelled => return None,
        }
    } else if let Some(code) = script.strip_prefix("exit ") {
        report.exit_code = code.trim().parse().ok();
        Vec::new()
    } else if script == "oom" {
        report.oom_killed = true;
        report.exit_code = Some(137);
        b"Killed\n".to_vec()
    } else if let Some(count) = script.strip_prefix("seq ") {
        let count: u64 = count.trim().parse().unwrap_or(0);
        let mut lines = Vec::new();
        for n in 1..=count {
            lines.extend_from_slice(format!("{n}\n").as_bytes());
        }
        lines
    } else if script.starts_with("sleep") {
        tokio::time::sleep(Duration::from_millis(exec.timeout_ms)).await;
        report.exit_code = None;
        report.signal = Some(9);
        report.timed_out = true;
        Vec::new()
    } else {
        let word = script.split_whitespace().last().unwrap_or_default();
        format!("{word}\n").into_bytes()
    };
    report.stdout_bytes = output.len() as u64;
    // As the agent: the head (half the limit), then past the limit what it left out and the
    // tail (the other half).
    let limit = output.len().min(exec.output_limit as usize);
    let head = &output[..limit - limit / 2];
    let tail = &output[output.len() - limit / 2..];
    for chunk in head.chunks(1 << 16) {
        write_frame(stream, FrameKind::Stdout, chunk).await.ok()?;
    }
    let omitted = (output.len() - head.len() - tail.len()) as u64;
    if omitted > 0 {
        let event = Event::OutputOmitted {
            stderr: false,
            bytes: omitted,
        };
        write_json(stream, &event).await.ok()?;
    }
    for chunk in tail.chunks(1 << 16) {
        write_frame(stream, FrameKind::Stdout, chunk).await.ok()?;
    }
    write_json(stream, &Event::Exited(report)).await.ok()
}

/// What the service sent as input.
enum Input {
    /// Every stdin frame up to the empty one that ends them.
    Complete(Vec<u8>),
    /// A request came instead (a cancel, e.g. of an upload over its limit).
    Cancelled,
}

async fn read_input(stream: &mut DuplexStream) -> Option<Input> {
    let mut input = Vec::new();
    loop {
        let frame = read_frame(stream).await.ok()?;
        if frame.kind == FrameKind::Json {
            return Some(Input::Cancelled);
        }
        if frame.payload.is_empty() {
            return Some(Input::Complete(input));
        }
        input.extend_from_slice(&frame.payload);
    }
}

async fn refuse(stream: &mut DuplexStream, code: &str, message: &str) -> Option<()> {
    let error = Event::Error {
        code: code.into(),
        message: message.into(),
    };
    write_json(stream, &error).await.ok()
}
