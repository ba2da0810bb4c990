//! `sandboxd cp`: copies a file into a session (`cp LOCAL ID:PATH`) or out of one
//! (`cp ID:PATH LOCAL`). `-` as LOCAL is standard input or output.

use super::connection::{block_on, ServiceArgs};
use super::output::{print_json, OutputArgs};
use anyhow::{bail, Context, Result};
use clap::Args;
use sandboxd_api::FileWritten;
use sandboxd_client::{Client, Interface};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

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
/// beside it, so an interrupted copy never leaves a partial file under the target's name. A
/// local file is written sparse: its all-zero blocks take no room on this host.
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

/// The blocks a [`SparseWriter`] tests for zeros: the page and usual filesystem block size.
const SPARSE_BLOCK: usize = 4096;

/// Writes a file sparse: each aligned block of [`SPARSE_BLOCK`] zero bytes is skipped over
/// instead of written, leaving a hole, and [`finish`](Self::finish) sets the final length, so
/// a trailing hole counts too. Reads back the same bytes as a plain write.
struct SparseWriter {
    file: File,
    /// Bytes of the current block not yet written or skipped; never a full block.
    block: Vec<u8>,
    /// Bytes taken so far: the file's length once finished.
    len: u64,
    /// Where the file's cursor is.
    position: u64,
}

impl SparseWriter {
    fn new(file: File) -> SparseWriter {
        SparseWriter {
            file,
            block: Vec::with_capacity(SPARSE_BLOCK),
            len: 0,
            position: 0,
        }
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn write_all(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let take = (SPARSE_BLOCK - self.block.len()).min(data.len());
            self.block.extend_from_slice(&data[..take]);
            data = &data[take..];
            self.len += take as u64;
            if self.block.len() == SPARSE_BLOCK {
                self.flush_block()?;
            }
        }
        Ok(())
    }

    /// Writes the current block where it belongs unless it is all zeros.
    fn flush_block(&mut self) -> io::Result<()> {
        let start = self.len - self.block.len() as u64;
        if self.block.iter().any(|&byte| byte != 0) {
            if self.position != start {
                self.file.seek(SeekFrom::Start(start))?;
            }
            self.file.write_all(&self.block)?;
            self.position = self.len;
        }
        self.block.clear();
        Ok(())
    }

    /// Writes what is left and sets the length the holes leave out; returns the file.
    fn finish(mut self) -> io::Result<File> {
        self.flush_block()?;
        self.file.set_len(self.len)?;
        Ok(self.file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// Writes `chunks` through a sparse writer; returns the file's bytes and its allocation.
    fn written(chunks: &[&[u8]]) -> (Vec<u8>, u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut writer = SparseWriter::new(File::create(&path).unwrap());
        for chunk in chunks {
            writer.write_all(chunk).unwrap();
        }
        let expected: u64 = chunks.iter().map(|c| c.len() as u64).sum();
        assert_eq!(writer.len(), expected);
        writer.finish().unwrap().sync_all().unwrap();
        let allocated = std::fs::metadata(&path).unwrap().blocks() * 512;
        (std::fs::read(&path).unwrap(), allocated)
    }

    #[test]
    fn zero_blocks_become_holes_and_the_bytes_read_back_the_same() {
        let zeros = vec![0u8; 8 << 20];
        let (bytes, allocated) = written(&[&zeros]);
        assert_eq!(bytes, zeros);
        assert!(
            allocated < 64 << 10,
            "{allocated} bytes allocated for zeros"
        );

        // Data between holes, in chunks that do not line up with the blocks.
        let mut mixed = vec![0u8; 3 << 20];
        mixed[5000] = 1;
        mixed[(2 << 20) + 17] = 2;
        let last = mixed.len() - 1;
        mixed[last] = 3;
        let chunks: Vec<&[u8]> = mixed.chunks(65_537).collect();
        let (bytes, allocated) = written(&chunks);
        assert_eq!(bytes, mixed);
        assert!(allocated < 256 << 10, "{allocated} bytes allocated");
    }

    #[test]
    fn short_odd_and_dense_files_are_written_whole() {
        assert_eq!(written(&[]).0, b"");
        assert_eq!(written(&[b"abc"]).0, b"abc");
        assert_eq!(written(&[&[0, 0, 0]]).0, [0, 0, 0]);
        let dense: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8 + 1).collect();
        let (bytes, allocated) = written(&[&dense[..10], &dense[10..]]);
        assert_eq!(bytes, dense);
        assert!(allocated >= dense.len() as u64);
    }
}
