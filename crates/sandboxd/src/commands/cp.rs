//! `sandboxd cp`: copies a file or a directory tree into a session (`cp LOCAL ID:PATH`) or out
//! of one (`cp ID:PATH LOCAL`). `-` as LOCAL is standard input or output (a tree goes out as a
//! tar). As cp(1): into an existing directory, or a PATH ending in `/` (or empty, `ID:`), the
//! copy keeps its own name.

use super::connection::{block_on, resolve_id, ServiceArgs};
use super::cp_tree::{self, TreeCopied};
use super::output::{counted, print_json, OutputArgs};
use super::sparse::SparseWriter;
use anyhow::{bail, Context, Result};
use clap::Args;
use sandboxd_api::FileWritten;
use sandboxd_client::{Body, Client, ClientError, Interface};
use std::io::{Seek, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct CpArgs {
    /// What to copy: a local file or directory, `-` for standard input, or ID:PATH in a
    /// session.
    source: String,
    /// Where to: ID:PATH in a session (`ID:` for its working directory, `ID:dir/` into a
    /// directory), or a local file or directory, `-` for standard output. A relative PATH is
    /// relative to the sandbox's working directory.
    destination: String,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

/// What of a local file's mode a copy into a session keeps.
const PERMISSION_BITS: u32 = 0o777;

/// A path in a session.
struct Remote {
    id: String,
    path: String,
}

/// A path on this host.
enum Local {
    /// `-`: standard input or output.
    Standard,
    File(PathBuf),
}

enum Location {
    Session(Remote),
    Local(Local),
}

impl Location {
    /// `ID:PATH` names a session's path when ID has no `/` (write `./a:b` for a local file
    /// whose name has a colon).
    fn parse(arg: &str) -> Location {
        if arg == "-" {
            return Location::Local(Local::Standard);
        }
        match arg.split_once(':') {
            Some((id, path)) if !id.is_empty() && !id.contains('/') => Location::Session(Remote {
                id: id.to_string(),
                path: path.to_string(),
            }),
            _ => Location::Local(Local::File(PathBuf::from(arg))),
        }
    }
}

/// What was copied, as `--json` prints it.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Copied {
    File(FileWritten),
    Tree(TreeCopied),
}

pub fn run(args: CpArgs) -> Result<()> {
    let source = Location::parse(&args.source);
    let destination = Location::parse(&args.destination);
    let json = args.output.json;
    let (copied, shown_at) = match (source, destination) {
        (Location::Session(remote), Location::Local(local)) => {
            if json && matches!(local, Local::Standard) {
                bail!("--json prints to standard output, which is where the copy would go");
            }
            let client = args.service.client(Interface::Cli)?;
            let copied = block_on(async {
                let remote = resolved(&client, remote).await?;
                download(&client, &remote, &local).await
            })??;
            (copied, None)
        }
        (Location::Local(local), Location::Session(remote)) => {
            let client = args.service.client(Interface::Cli)?;
            block_on(async {
                let remote = resolved(&client, remote).await?;
                let copied = upload(&client, &local, &remote).await?;
                anyhow::Ok((copied, Some(remote.id)))
            })??
        }
        (Location::Session(_), Location::Session(_)) => {
            bail!("both sides name a session; copy through a local file")
        }
        (Location::Local(_), Location::Local(_)) => bail!(
            "one side must be a path in a session, as ID:PATH (e.g. `sandboxd cp data.csv ID:`)"
        ),
    };
    if json {
        return print_json(&copied);
    }
    let at = shown_at.map(|id| format!("{id}:")).unwrap_or_default();
    match copied {
        Copied::File(file) if file.path != "-" => {
            println!("copied {} to {at}{}", bytes(file.bytes), file.path)
        }
        Copied::File(_) => {}
        Copied::Tree(tree) if tree.path != "-" => println!(
            "copied {}, {}, {} ({}) to {at}{}",
            counted(tree.files, "file", "files"),
            counted(tree.dirs, "directory", "directories"),
            counted(tree.symlinks, "symlink", "symlinks"),
            bytes(tree.bytes),
            tree.path
        ),
        Copied::Tree(_) => {}
    }
    Ok(())
}

/// A count of bytes copied, exact (a table shows sizes short instead).
fn bytes(count: u64) -> String {
    counted(count, "byte", "bytes")
}

async fn resolved(client: &Client, remote: Remote) -> Result<Remote> {
    Ok(Remote {
        id: resolve_id(client, &remote.id).await?,
        path: remote.path,
    })
}

/// `dir/name` for a copy into a directory.
fn joined(dir: &str, name: &str) -> String {
    match dir {
        "" => name.to_string(),
        dir if dir.ends_with('/') => format!("{dir}{name}"),
        dir => format!("{dir}/{name}"),
    }
}

fn local_name(path: &Path) -> Result<String> {
    match path.file_name() {
        Some(name) => Ok(name.to_string_lossy().into_owned()),
        None => bail!("{} names no file; name it", path.display()),
    }
}

async fn upload(client: &Client, local: &Local, remote: &Remote) -> Result<Copied> {
    let (id, path) = (&remote.id, remote.path.as_str());
    let file = match local {
        Local::Standard => {
            if path.is_empty() || path.ends_with('/') {
                bail!(
                    "standard input has no name: name the file, e.g. {id}:{}",
                    joined(path, "input")
                );
            }
            let (body, reading) = streamed_body(|mut out| {
                std::io::copy(&mut std::io::stdin().lock(), &mut out)
                    .context("cannot read standard input")
            });
            let written = client.write_file(id, path, None, body).await;
            let read = reading.await.context("reading standard input failed")?;
            return Ok(Copied::File(settle(written, read)?.0));
        }
        Local::File(file) => file,
    };
    let opened = tokio::fs::File::open(file)
        .await
        .with_context(|| format!("cannot read {}", file.display()))?;
    let name = local_name(file)?;
    let metadata = opened.metadata().await?;
    if metadata.is_dir() {
        return upload_tree(client, file, remote, &name).await;
    }
    // Its permission bits go with it (an executable stays one), never setuid or setgid.
    let mode = Some(metadata.permissions().mode() & PERMISSION_BITS);
    let target = if path.is_empty() || path.ends_with('/') {
        joined(path, &name)
    } else {
        path.to_string()
    };
    match client.write_file(id, &target, mode, opened).await {
        // An existing directory: the copy goes into it.
        Err(e) if e.code() == Some("is_directory") && target == path => {
            let opened = tokio::fs::File::open(file).await?;
            Ok(Copied::File(
                client
                    .write_file(id, &joined(path, &name), mode, opened)
                    .await?,
            ))
        }
        written => Ok(Copied::File(written?)),
    }
}

/// Uploads the tree under `dir` as the remote directory (into it when it exists).
async fn upload_tree(client: &Client, dir: &Path, remote: &Remote, name: &str) -> Result<Copied> {
    let path = remote.path.as_str();
    let into_existing =
        path.is_empty() || path.ends_with('/') || client.list_files(&remote.id, path).await.is_ok();
    let target = if into_existing {
        joined(path, name)
    } else {
        path.to_string()
    };
    let dir = dir.to_path_buf();
    let (body, packing) = streamed_body(move |out| cp_tree::pack(&dir, out));
    let uploaded = client.upload_archive(&remote.id, &target, body).await;
    let packed = packing.await.context("packing the tree failed")?;
    let (written, packed) = settle(uploaded, packed)?;
    let skipped = packed.skipped;
    Ok(Copied::Tree(TreeCopied {
        path: written.path,
        files: written.files,
        dirs: written.dirs,
        symlinks: written.symlinks,
        bytes: written.bytes,
        skipped,
    }))
}

/// A request body written by `produce` on a thread of its own while the request streams it;
/// a failure of `produce` breaks the body off, so nothing partial is accepted.
fn streamed_body<T: Send + 'static>(
    produce: impl FnOnce(&mut dyn Write) -> Result<T> + Send + 'static,
) -> (Body, tokio::task::JoinHandle<Result<T>>) {
    let (sender, receiver) = tokio::sync::mpsc::channel::<std::io::Result<Vec<u8>>>(8);
    let producing = tokio::task::spawn_blocking(move || {
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, ChannelWriter(sender.clone()));
        let produced = produce(&mut out).and_then(|value| {
            out.flush()?;
            Ok(value)
        });
        if let Err(e) = &produced {
            let _ = sender.blocking_send(Err(std::io::Error::other(format!("{e:#}"))));
        }
        produced
    });
    let body = Body::wrap_stream(futures_util::stream::unfold(
        receiver,
        |mut receiver| async { receiver.recv().await.map(|chunk| (chunk, receiver)) },
    ));
    (body, producing)
}

/// How an upload of a streamed body went: a local failure (a file that cannot be read) is what
/// to report, unless it only followed from the service ending the upload (its refusal, then).
fn settle<T, U>(uploaded: Result<T, ClientError>, produced: Result<U>) -> Result<(T, U)> {
    match (uploaded, produced) {
        (Ok(uploaded), Ok(produced)) => Ok((uploaded, produced)),
        (Err(refused), Err(local)) if crate::exit::is_broken_pipe(&local) => Err(refused.into()),
        (_, Err(local)) => Err(local),
        (Err(refused), Ok(_)) => Err(refused.into()),
    }
}

/// Hands what is written to the upload's body, chunk by chunk.
struct ChannelWriter(tokio::sync::mpsc::Sender<std::io::Result<Vec<u8>>>);

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0
            .blocking_send(Ok(data.to_vec()))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the upload ended"))?;
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Copies a session's file or tree out: a file to standard output, or to a local file
/// through a temporary file beside it, so an interrupted copy never leaves a partial file
/// under the target's name; a tree to standard output as a tar, or as a new local directory.
async fn download(client: &Client, remote: &Remote, local: &Local) -> Result<Copied> {
    if remote.path.is_empty() {
        bail!(
            "name what to copy after the colon, e.g. {}:out.txt",
            remote.id
        );
    }
    let mut download = match client.read_file(&remote.id, &remote.path).await {
        Ok(download) => download,
        Err(e) if e.code() == Some("is_directory") => {
            return download_tree(client, remote, local).await
        }
        Err(e) => return Err(e.into()),
    };
    let target = match local {
        Local::Standard => {
            let mut bytes = 0;
            let mut stdout = std::io::stdout().lock();
            while let Some(chunk) = download.chunk().await? {
                stdout
                    .write_all(&chunk)
                    .context("cannot write to standard output")?;
                bytes += chunk.len() as u64;
            }
            stdout.flush()?;
            return Ok(Copied::File(FileWritten {
                path: "-".into(),
                bytes,
            }));
        }
        Local::File(file) if file.is_dir() => file.join(local_name(Path::new(&remote.path))?),
        Local::File(file) => file.clone(),
    };
    let partial = target.with_file_name(format!(
        ".{}.sandboxd-{}.part",
        local_name(&target)?,
        std::process::id()
    ));
    let copied = async {
        let file = std::fs::File::create(&partial)
            .with_context(|| format!("cannot create {}", partial.display()))?;
        let mut file = SparseWriter::new(file);
        while let Some(chunk) = download.chunk().await? {
            file.write_all(&chunk)
                .with_context(|| format!("cannot write {}", partial.display()))?;
        }
        let bytes = file.len();
        let file = file
            .finish()
            .with_context(|| format!("cannot write {}", partial.display()))?;
        file.sync_all()?;
        tokio::fs::rename(&partial, &target)
            .await
            .with_context(|| format!("cannot write {}", target.display()))?;
        anyhow::Ok(bytes)
    }
    .await;
    match copied {
        Ok(bytes) => Ok(Copied::File(FileWritten {
            path: target.display().to_string(),
            bytes,
        })),
        Err(e) => {
            let _ = tokio::fs::remove_file(&partial).await;
            Err(e)
        }
    }
}

async fn download_tree(client: &Client, remote: &Remote, local: &Local) -> Result<Copied> {
    let mut archive = client.download_archive(&remote.id, &remote.path).await?;
    let target = match local {
        Local::Standard => {
            let mut stdout = std::io::stdout().lock();
            while let Some(chunk) = archive.chunk().await? {
                stdout
                    .write_all(&chunk)
                    .context("cannot write to standard output")?;
            }
            stdout.flush()?;
            return Ok(Copied::Tree(TreeCopied {
                path: "-".into(),
                ..TreeCopied::default()
            }));
        }
        Local::File(dir) if dir.is_dir() => {
            let name = Path::new(&remote.path).file_name().with_context(|| {
                format!(
                    "{:?} has no name to copy it as; name a new directory",
                    remote.path
                )
            })?;
            dir.join(name)
        }
        Local::File(dir) => dir.clone(),
    };
    // Held in an unnamed file while it arrives, then extracted from it.
    let mut spool = tempfile::tempfile().context("cannot make a temporary file")?;
    while let Some(chunk) = archive.chunk().await? {
        spool
            .write_all(&chunk)
            .context("cannot write a temporary file")?;
    }
    spool.rewind()?;
    let copied = tokio::task::spawn_blocking(move || {
        cp_tree::extract(std::io::BufReader::new(spool), &target)
    })
    .await
    .context("extracting the tree failed")??;
    Ok(Copied::Tree(copied))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_paths_and_local_ones_are_told_apart() {
        let remote = |arg| match Location::parse(arg) {
            Location::Session(remote) => (remote.id, remote.path),
            Location::Local(_) => panic!("{arg} is local"),
        };
        assert_eq!(remote("abc:"), ("abc".into(), "".into()));
        assert_eq!(remote("abc:dir/"), ("abc".into(), "dir/".into()));
        assert!(matches!(Location::parse("./a:b"), Location::Local(_)));
        assert!(matches!(
            Location::parse("-"),
            Location::Local(Local::Standard)
        ));
        assert_eq!(joined("", "f"), "f");
        assert_eq!(joined("d/", "f"), "d/f");
        assert_eq!(joined("/workspace", "f"), "/workspace/f");
    }
}
