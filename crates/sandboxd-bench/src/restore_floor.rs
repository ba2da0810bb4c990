//! The floor under the gVisor resume, fork and snapshot-open figures ([`crate::pause_disk`]):
//! runsc alone, the same binary the engine runs, restoring the same Python sandbox holding
//! 64 MiB from its checkpoint image, with no engine, network, service or agent in the way.
//!
//! The sandbox runs from a bundle of the image's files (exported through the Engine API) in a
//! runsc state root of its own, without a network (`--network=none`) and with its root's
//! overlay in memory, so that several restores can share the bundle. It is checkpointed once;
//! each restore is then `runsc restore --detach` into a new container, timed until an exec of
//! `true` in it has answered, as the service's figures are until its agent answers.

use crate::raw::Raw;
use crate::report::Sample;
use anyhow::{bail, Context, Result};
use std::ffi::CString;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The floors, each taken as the service's figure over it is.
pub(crate) struct RestoreFloor {
    /// One restore, until an exec answers.
    pub(crate) single: Sample,
    /// Four restores of the image at once, until an exec in each has answered.
    pub(crate) four: Sample,
}

/// What the sandbox holds: the service's Python session's 64 MiB, with a mark once held.
const HOLD: &str = "import os, time\nheld = bytearray(os.urandom(64 << 20))\nopen('/tmp/held', 'w').close()\ntime.sleep(1e9)";
/// Container ids of one width: runsc confuses ids that are prefixes of each other.
const SOURCE: &str = "sbxfloor-source";
/// The most rounds of four restores (each holds four copies of the memory).
const FOUR_ROUNDS: usize = 5;

/// Measures `n` single restores and up to [`FOUR_ROUNDS`] rounds of four, from a checkpoint
/// of `image`.
pub(crate) async fn run(n: usize, raw: &Raw, image: &str) -> Result<RestoreFloor> {
    let runsc = engine_runsc(raw).await?;
    let work = tempfile::Builder::new()
        .prefix("sandboxd-bench-restore-")
        .tempdir()?;
    let bundle = work.path().join("bundle");
    raw.export_image(
        image,
        &work.path().join("rootfs.tar"),
        &bundle.join("rootfs"),
    )
    .await
    .with_context(|| format!("exporting {image} for runsc alone"))?;
    let dir = work.path().to_path_buf();
    let floor = tokio::task::spawn_blocking(move || {
        let runsc = Runsc {
            binary: runsc,
            root: dir.join("state"),
            bundle,
        };
        runsc.measure(n, &dir.join("image"))
    })
    .await??;
    drop(work);
    Ok(floor)
}

/// The runsc beside the engine's runtime: host-setup registers its restoring wrapper as
/// `runsc`, with gVisor's own binary next to it.
async fn engine_runsc(raw: &Raw) -> Result<PathBuf> {
    let info = raw.docker.info().await?;
    let wrapper = info
        .runtimes
        .and_then(|runtimes| runtimes.get("runsc").and_then(|r| r.path.clone()))
        .context("the engine has no runsc runtime: run SANDBOXD_GVISOR=1 scripts/host-setup.sh")?;
    let runsc = Path::new(&wrapper).with_file_name("runsc");
    if !runsc.is_file() {
        bail!("no runsc beside the engine's runtime {wrapper}");
    }
    Ok(runsc)
}

struct Runsc {
    binary: PathBuf,
    /// Its own state root: nothing of the engine's is touched.
    root: PathBuf,
    bundle: PathBuf,
}

impl Runsc {
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .arg(format!("--root={}", self.root.display()))
            .args(["--network=none", "--overlay2=root:memory"])
            .args(args);
        command
    }

    /// Runs runsc with `args`; what it says goes to a file, not a pipe: a detached sandbox
    /// keeps the descriptors it was given, and a pipe read to its end would never end.
    fn run(&self, args: &[&str]) -> Result<()> {
        let mut said = tempfile::tempfile_in(&self.root)?;
        let status = self
            .command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(said.try_clone()?)
            .status()?;
        if !status.success() {
            let mut text = String::new();
            said.seek(SeekFrom::Start(0))?;
            said.take(64 << 10).read_to_string(&mut text)?;
            bail!(
                "runsc {}: {}",
                args.join(" "),
                text.lines().last().unwrap_or("failed")
            );
        }
        Ok(())
    }

    /// A restore into a new container `id`, until an exec of `true` in it has answered.
    fn restore(&self, image: &Path, id: &str) -> Result<()> {
        let bundle = self.bundle.display().to_string();
        let image = image.display().to_string();
        self.run(&[
            "restore",
            "--detach",
            "--image-path",
            &image,
            "--bundle",
            &bundle,
            id,
        ])?;
        self.run(&["exec", id, "true"])
    }

    fn measure(&self, n: usize, image: &Path) -> Result<RestoreFloor> {
        std::fs::create_dir_all(&self.root)?;
        std::fs::create_dir_all(image)?;
        let _removed_at_end = Containers(self);
        self.spec()?;
        let bundle = self.bundle.display().to_string();
        self.run(&["run", "--detach", "--bundle", &bundle, SOURCE])?;
        let deadline = Instant::now() + Duration::from_secs(60);
        while self
            .run(&["exec", SOURCE, "test", "-f", "/tmp/held"])
            .is_err()
        {
            if Instant::now() > deadline {
                bail!("runsc alone: the Python process did not come to hold 64 MiB within 60 s");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let path = image.display().to_string();
        self.run(&["checkpoint", "--image-path", &path, SOURCE])?;
        self.delete(SOURCE);

        let mut single = Vec::new();
        for round in 0..n {
            let id = format!("sbxfloor-one-{round:03}");
            let started = Instant::now();
            self.restore(image, &id)?;
            single.push(started.elapsed());
            self.delete(&id);
        }
        let mut four = Vec::new();
        for round in 0..n.min(FOUR_ROUNDS) {
            let ids: Vec<String> = (0..4)
                .map(|k| format!("sbxfloor-four-{round}{k}"))
                .collect();
            let started = Instant::now();
            std::thread::scope(|scope| {
                let restores: Vec<_> = ids
                    .iter()
                    .map(|id| scope.spawn(|| self.restore(image, id)))
                    .collect();
                restores
                    .into_iter()
                    .map(|restore| restore.join().expect("restoring thread panicked"))
                    .collect::<Result<Vec<_>>>()
            })?;
            four.push(started.elapsed());
            for id in &ids {
                self.delete(id);
            }
        }
        Ok(RestoreFloor {
            single: Sample(single),
            four: Sample(four),
        })
    }

    /// The bundle's config: runsc's default spec with the holding Python as its process.
    fn spec(&self) -> Result<()> {
        let bundle = self.bundle.display().to_string();
        self.run(&["spec", "--bundle", &bundle, "--", "python3", "-c", HOLD])?;
        let path = self.bundle.join("config.json");
        let mut config: serde_json::Value = serde_json::from_slice(&std::fs::read(&path)?)?;
        config["process"]["terminal"] = false.into();
        config["root"]["readonly"] = false.into();
        std::fs::write(&path, serde_json::to_vec(&config)?)?;
        Ok(())
    }

    fn delete(&self, id: &str) {
        let _ = self.run(&["delete", "--force", id]);
    }
}

/// Whatever runsc still runs in the state root when the measurement ends (also on failure)
/// is deleted, and the network namespace it mounted there for `--network=none` unmounted, so
/// that the state root can be removed.
struct Containers<'a>(&'a Runsc);

impl Drop for Containers<'_> {
    fn drop(&mut self) {
        if let Ok(listed) = self.0.command(&["list", "--quiet"]).output() {
            for id in String::from_utf8_lossy(&listed.stdout).split_whitespace() {
                self.0.delete(id);
            }
        }
        let Ok(netns) = CString::new(self.0.root.join("null-netns").into_os_string().into_vec())
        else {
            return;
        };
        // SAFETY: `netns` is a NUL-terminated path that outlives the call; umount2 reads it only.
        unsafe { libc::umount2(netns.as_ptr(), libc::MNT_DETACH) };
    }
}
