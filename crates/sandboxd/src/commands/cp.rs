//! `sandboxd cp`: copies a file into a session (`cp LOCAL ID:PATH`) or out of one
//! (`cp ID:PATH LOCAL`). `-` as LOCAL is standard input or output.

use super::connection::{block_on, ServiceArgs};
use super::output::{print_json, OutputArgs};
use anyhow::{bail, Context, Result};
use clap::Args;
use sandboxd_api::FileWritten;
use sandboxd_client::{Client, Interface};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use tokio::io::AsyncWriteExt;

#[derive(Args)]
pub struct CpArgs {
    /// What to copy: a local file, `-` for standard input, or ID:PATH in a session.
    source: String,
    /// Where to: ID:PATH in a session, or a local file or directory, `-` for standard output.
    /// A relative PATH is relative to the sandbox's working directory.
    destination: String,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    service: ServiceArgs,
}

/// A file in a session.
struct Remote {
    id: String,
    path: String,
}

/// A file on this host.
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
    /// `ID:PATH` names a session's file when ID has no `/` (write `./a:b` for a local file
    /// whose name has a colon).
    fn parse(arg: &str) -> Result<Location> {
        if arg == "-" {
            return Ok(Location::Local(Local::Standard));
        }
        match arg.split_once(':') {
            Some((id, path)) if !id.is_empty() && !id.contains('/') => {
                if path.is_empty() {
                    bail!("name the file in the session after the colon, e.g. {id}:/workspace/out.txt");
                }
                Ok(Location::Session(Remote {
                    id: id.to_string(),
                    path: path.to_string(),
                }))
            }
            _ => Ok(Location::Local(Local::File(PathBuf::from(arg)))),
        }
    }
}

pub fn run(args: CpArgs) -> Result<()> {
    let source = Location::parse(&args.source)?;
    let destination = Location::parse(&args.destination)?;
    let json = args.output.json;
    match (source, destination) {
        (Location::Session(remote), Location::Local(local)) => {
            if json && matches!(local, Local::Standard) {
                bail!("--json prints to standard output, which is where the file would go");
            }
            let client = args.service.client(Interface::Cli)?;
            let copied = block_on(download(&client, &remote, &local))??;
            if json {
                print_json(&copied)
            } else {
                if let Local::File(_) = local {
                    println!("copied {} bytes to {}", copied.bytes, copied.path);
                }
                Ok(())
            }
        }
        (Location::Local(local), Location::Session(remote)) => {
            let client = args.service.client(Interface::Cli)?;
            let written = block_on(upload(&client, &local, &remote))??;
            if json {
                print_json(&written)
            } else {
                println!("copied {} bytes to {}:{}", written.bytes, remote.id, written.path);
                Ok(())
            }
        }
        (Location::Session(_), Location::Session(_)) => {
            bail!("both sides name a session; copy through a local file")
        }
        (Location::Local(_), Location::Local(_)) => bail!(
            "one side must be a file in a session, as ID:PATH (e.g. `sandboxd cp data.csv ID:data.csv`)"
        ),
    }
}

async fn upload(client: &Client, local: &Local, remote: &Remote) -> Result<FileWritten> {
    let (id, path) = (&remote.id, &remote.path);
    let written = match local {
        Local::File(file) => {
            let opened = tokio::fs::File::open(file)
                .await
                .with_context(|| format!("cannot read {}", file.display()))?;
            if opened.metadata().await?.is_dir() {
                bail!("{} is a directory; cp copies one file", file.display());
            }
            client.write_file(id, path, opened).await?
        }
        Local::Standard => {
            let mut contents = Vec::new();
            std::io::stdin()
                .read_to_end(&mut contents)
                .context("cannot read standard input")?;
            client.write_file(id, path, contents).await?
        }
    };
    Ok(written)
}

/// Copies a session's file to standard output, or to a local file through a temporary file
/// beside it, so an interrupted copy never leaves a partial file under the target's name.
async fn download(client: &Client, remote: &Remote, local: &Local) -> Result<FileWritten> {
    let mut download = client.read_file(&remote.id, &remote.path).await?;
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
            return Ok(FileWritten {
                path: "-".into(),
                bytes,
            });
        }
        Local::File(file) if file.is_dir() => file.join(file_name(&remote.path)?),
        Local::File(file) => file.clone(),
    };
    let partial = target.with_file_name(format!(
        ".{}.sandboxd-{}.part",
        file_name(&target.to_string_lossy())?,
        std::process::id()
    ));
    let copied = async {
        let mut file = tokio::fs::File::create(&partial)
            .await
            .with_context(|| format!("cannot create {}", partial.display()))?;
        let mut bytes = 0;
        while let Some(chunk) = download.chunk().await? {
            file.write_all(&chunk)
                .await
                .with_context(|| format!("cannot write {}", partial.display()))?;
            bytes += chunk.len() as u64;
        }
        file.sync_all().await?;
        tokio::fs::rename(&partial, &target)
            .await
            .with_context(|| format!("cannot write {}", target.display()))?;
        Ok(bytes)
    }
    .await;
    match copied {
        Ok(bytes) => Ok(FileWritten {
            path: target.display().to_string(),
            bytes,
        }),
        Err(e) => {
            let _ = tokio::fs::remove_file(&partial).await;
            Err(e)
        }
    }
}

/// The last component of a path, to name a copy after.
fn file_name(path: &str) -> Result<String> {
    match Path::new(path).file_name() {
        Some(name) => Ok(name.to_string_lossy().into_owned()),
        None => bail!("{path:?} names no file; give the destination file's name"),
    }
}
