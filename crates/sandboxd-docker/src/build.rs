//! Images for runtimes: found on the engine, pulled, or built from a recipe through the Engine
//! API's build endpoint, with the context (the Dockerfile and the files beside it) packed in
//! memory.

use crate::labels::{LABEL_RECIPE, LABEL_RECIPE_HASH};
use crate::link::{engine_error, is_not_found};
use bollard::query_parameters::{BuildImageOptionsBuilder, CreateImageOptionsBuilder};
use bollard::Docker;
use futures_util::{Stream, StreamExt};
use sandboxd_api::strip_ansi;
use sandboxd_backend::{BackendError, ImageBuild, ImageProgress, ImageRequest};
use std::collections::{HashMap, VecDeque};
use std::time::Duration;

/// Images named so are made on this host (scripts/build-images.sh, recipe builds) and never
/// pulled: a registry's `sandboxd/` namespace is not ours to trust.
const LOCAL_NAMESPACE: &str = "sandboxd/";

/// A pull that shows no progress for this long is given up: a registry that does not answer.
const PULL_STALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Lines of build output kept to explain a failure.
const FAILURE_TAIL_LINES: usize = 8;

/// The most of one build output line relayed (a progress bar redrawn without a line break is
/// one line).
const MAX_LINE_CHARS: usize = 1000;

type Progress<'a> = &'a (dyn Fn(ImageProgress) + Send + Sync);

pub(crate) async fn has_image(docker: &Docker, image: &str) -> Result<bool, BackendError> {
    match docker.inspect_image(image).await {
        Ok(_) => Ok(true),
        Err(e) if is_not_found(&e) => Ok(false),
        Err(e) => Err(engine_error(e)),
    }
}

/// There, else pulled, else built: see `Backend::ensure_image`. A recipe's own image is ours
/// (`sandboxd/recipe-...`), so it is built rather than pulled; its base may be pulled.
pub(crate) async fn ensure_image(
    docker: &Docker,
    request: &ImageRequest,
    progress: Progress<'_>,
) -> Result<String, BackendError> {
    if has_image(docker, &request.image).await? {
        return Ok(request.image.clone());
    }
    let Some(build) = &request.build else {
        pull(docker, &request.image, progress)
            .await
            .map_err(|tried| BackendError::ImageMissing {
                image: request.image.clone(),
                hint: format!("{tried}; {}", image_hint(&request.image)),
            })?;
        return Ok(request.image.clone());
    };
    if !has_image(docker, &build.base).await? {
        pull(docker, &build.base, progress)
            .await
            .map_err(|tried| BackendError::ImageMissing {
                image: build.base.clone(),
                hint: format!(
                    "it is the base of recipe \"{}\"; {tried}; {}, or change the recipe's `base`",
                    build.recipe,
                    image_hint(&build.base)
                ),
            })?;
    }
    build_image(docker, &request.image, build, progress).await?;
    Ok(request.image.clone())
}

/// Pulls an image, or says what was tried: never one of ours, and not a registry that stops
/// answering.
async fn pull(docker: &Docker, image: &str, progress: Progress<'_>) -> Result<(), String> {
    if image.starts_with(LOCAL_NAMESPACE) {
        return Err(format!(
            "it is not on the engine (and {LOCAL_NAMESPACE}... images are never pulled)"
        ));
    }
    let reference = with_tag(image);
    progress(ImageProgress {
        step: None,
        line: format!("pulling {reference}"),
    });
    let options = CreateImageOptionsBuilder::default()
        .from_image(&reference)
        .build();
    let mut stream = docker.create_image(Some(options), None, None);
    // Per layer, the last status reported: progress bars repeat theirs many times a second.
    let mut reported: HashMap<String, String> = HashMap::new();
    loop {
        let item = match tokio::time::timeout(PULL_STALL_TIMEOUT, stream.next()).await {
            Err(_) => {
                return Err(format!(
                    "it is not on the engine, and pulling it showed no progress for {}s",
                    PULL_STALL_TIMEOUT.as_secs()
                ))
            }
            Ok(None) => return Ok(()),
            Ok(Some(item)) => item,
        };
        let info = item.map_err(|e| {
            format!(
                "it is not on the engine, and pulling it failed: {}",
                engine_message(e)
            )
        })?;
        let Some(status) = info.status else { continue };
        let layer = info.id.unwrap_or_default();
        if reported.get(&layer) != Some(&status) {
            let line = if layer.is_empty() {
                status.clone()
            } else {
                format!("{layer}: {status}")
            };
            progress(ImageProgress { step: None, line });
            reported.insert(layer, status);
        }
    }
}

/// A reference with a tag: the engine pulls every tag of a repository named without one.
fn with_tag(image: &str) -> String {
    let last_component = image.rsplit('/').next().unwrap_or(image);
    if last_component.contains(':') || image.contains('@') {
        image.to_string()
    } else {
        format!("{image}:latest")
    }
}

fn engine_message(error: bollard::errors::Error) -> String {
    match error {
        bollard::errors::Error::DockerResponseServerError { message, .. } => message,
        bollard::errors::Error::DockerStreamError { error } => error,
        other => other.to_string(),
    }
}

async fn build_image(
    docker: &Docker,
    image: &str,
    build: &ImageBuild,
    progress: Progress<'_>,
) -> Result<(), BackendError> {
    let context = context_archive(build)
        .map_err(|e| BackendError::Setup(format!("cannot pack the build context: {e}")))?;
    let labels = HashMap::from([
        (LABEL_RECIPE, build.recipe.as_str()),
        (LABEL_RECIPE_HASH, build.hash.as_str()),
    ]);
    let options = BuildImageOptionsBuilder::default()
        .dockerfile("Dockerfile")
        .t(image)
        .labels(&labels)
        .rm(true)
        .forcerm(true)
        .build();
    progress(ImageProgress {
        step: None,
        line: format!("building {image} from recipe \"{}\"", build.recipe),
    });
    let stream = docker.build_image(options, None, Some(bollard::body_full(context.into())));
    let mut output = BuildOutput::default();
    let failure = match tokio::time::timeout(
        build.timeout,
        follow_build(stream, &mut output, progress),
    )
    .await
    {
        Ok(Ok(())) if has_image(docker, image).await? => return Ok(()),
        Ok(Ok(())) => "the build ended without an image".to_string(),
        Ok(Err(bollard::errors::Error::DockerStreamError { error })) => error,
        Ok(Err(e)) => return Err(engine_error(e)),
        Err(_) => format!(
            "it did not finish within {}s (build.timeout_secs)",
            build.timeout.as_secs()
        ),
    };
    Err(BackendError::ImageMissing {
        image: image.to_string(),
        hint: output.explain_failure(&build.recipe, &failure),
    })
}

async fn follow_build(
    stream: impl Stream<Item = Result<bollard::models::BuildInfo, bollard::errors::Error>>,
    output: &mut BuildOutput,
    progress: Progress<'_>,
) -> Result<(), bollard::errors::Error> {
    let mut stream = std::pin::pin!(stream);
    while let Some(info) = stream.next().await {
        if let Some(text) = info?.stream {
            for line in text
                .lines()
                .map(str::trim_end)
                .filter(|l| !l.trim().is_empty())
            {
                progress(output.record(line));
            }
        }
    }
    Ok(())
}

/// The build's output as it goes: the step under way and the last lines.
#[derive(Default)]
struct BuildOutput {
    step: Option<(u32, u32)>,
    instruction: String,
    tail: VecDeque<String>,
}

impl BuildOutput {
    /// Takes in one line of the build's output, as relayed: without terminal escapes (the
    /// builder colours a step's stderr) and at most [`MAX_LINE_CHARS`] long.
    fn record(&mut self, line: &str) -> ImageProgress {
        let mut line = strip_ansi(line);
        if let Some((cut, _)) = line.char_indices().nth(MAX_LINE_CHARS) {
            line.truncate(cut);
            line.push('…');
        }
        let line = line.as_str();
        // The classic builder announces each instruction as "Step 3/7 : RUN ...".
        if let Some((position, instruction)) = line
            .strip_prefix("Step ")
            .and_then(|rest| rest.split_once(" : "))
        {
            if let Some((n, of)) = position.split_once('/') {
                if let (Ok(n), Ok(of)) = (n.parse(), of.parse()) {
                    self.step = Some((n, of));
                    self.instruction = instruction.to_string();
                    self.tail.clear();
                }
            }
        }
        // The builder's own bookkeeping (" ---> 1234", "Removing intermediate container")
        // explains nothing.
        let trimmed = line.trim();
        if !trimmed.starts_with("---> ") && !trimmed.starts_with("Removing intermediate") {
            if self.tail.len() == FAILURE_TAIL_LINES {
                self.tail.pop_front();
            }
            self.tail.push_back(trimmed.to_string());
        }
        ImageProgress {
            step: self.step,
            line: line.to_string(),
        }
    }

    /// What failed, the output that led to it, and what the operator can do.
    fn explain_failure(&self, recipe: &str, failure: &str) -> String {
        let at = match self.step {
            Some((n, of)) => format!(" at step {n}/{of} ({})", self.instruction),
            None => String::new(),
        };
        let tail: Vec<&str> = self.tail.iter().map(String::as_str).collect();
        let mut text = format!(
            "building it from recipe \"{recipe}\" failed{at}: {failure}; last output: {}",
            tail.join(" | ")
        );
        let refused_certificate = tail
            .iter()
            .chain([&failure])
            .any(|l| l.to_ascii_lowercase().contains("certificate"));
        if refused_certificate {
            text.push_str("; a TLS certificate was refused: behind a TLS-intercepting proxy, name its CA in the config's build.extra_ca_certificates");
        }
        text.push_str("; fix the recipe, then open a session again or run `sandboxd runtimes build` to follow the build (the service log has all of its output)");
        text
    }
}

/// The build context as a tar archive: the Dockerfile and the files beside it, owned by root,
/// mode 0644, with a fixed time so the same content packs the same.
fn context_archive(build: &ImageBuild) -> std::io::Result<Vec<u8>> {
    let mut archive = tar::Builder::new(Vec::new());
    let files = std::iter::once(("Dockerfile", build.dockerfile.as_bytes())).chain(
        build
            .context
            .iter()
            .map(|(name, contents)| (name.as_str(), &contents[..])),
    );
    for (name, contents) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(contents.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        archive.append_data(&mut header, name, contents)?;
    }
    archive.into_inner()
}

/// What an operator can do about a missing image.
pub(crate) fn image_hint(image: &str) -> String {
    if image.starts_with("sandboxd/") {
        format!("it is built locally; run scripts/build-images.sh (or `docker images {image}` to check)")
    } else {
        format!("make it available to the engine (`docker pull {image}`, after `docker login` if its registry needs one, or `docker load`), or name an image the engine has in the runtime's `image`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pulls_name_a_tag() {
        assert_eq!(with_tag("debian"), "debian:latest");
        assert_eq!(with_tag("debian:bookworm"), "debian:bookworm");
        assert_eq!(
            with_tag("registry.local:5000/team/img"),
            "registry.local:5000/team/img:latest"
        );
        assert_eq!(with_tag("img@sha256:abc"), "img@sha256:abc");
    }

    #[test]
    fn build_output_follows_the_steps() {
        let mut output = BuildOutput::default();
        output.record("Step 1/2 : FROM base");
        output.record(" ---> 1234");
        let progress = output.record("Step 2/2 : RUN pip install x");
        assert_eq!(progress.step, Some((2, 2)));
        output.record("ERROR: certificate verify failed");
        let explained = output.explain_failure("r", "returned a non-zero code: 1");
        assert!(
            explained.starts_with("building it from recipe \"r\" failed at step 2/2 (RUN pip install x): returned a non-zero code: 1; last output: Step 2/2 : RUN pip install x | ERROR: certificate verify failed"),
            "{explained}"
        );
        assert!(explained.contains("build.extra_ca_certificates"));
    }

    #[test]
    fn build_output_is_relayed_without_escapes_and_bounded() {
        let mut output = BuildOutput::default();
        let coloured = output.record("\u{1b}[91mdebconf: delaying package configuration\u{1b}[0m");
        assert_eq!(coloured.line, "debconf: delaying package configuration");
        let long = output.record(&"#".repeat(5 * MAX_LINE_CHARS));
        assert_eq!(long.line.chars().count(), MAX_LINE_CHARS + 1);
        assert!(long.line.ends_with('…'));
        let explained = output.explain_failure("r", "failed");
        assert!(!explained.contains('\u{1b}'), "{explained}");
    }
}
