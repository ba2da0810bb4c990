//! `sandboxd code ID [FILE|-]`: runs code in a code context of a session (state kept between
//! runs), printing its output as it comes, the text of its results and its error, and saving
//! each image it shows to a file it names. Terminal escapes (a kernel's coloured traceback)
//! reach a terminal only: a file or a pipe gets plain text. Exits 0 when the code ran, 1 when it raised an
//! exception, 124 when its timeout interrupted it, 137 when its kernel died.

use super::connection::{block_on, ServiceArgs, SessionArg};
use anyhow::{Context, Result};
use base64::Engine;
use clap::Args;
use sandboxd_api::{strip_ansi, CodeEnd, CodeEvent, CodeResult, RunCode};
use sandboxd_client::Interface;
use std::borrow::Cow;
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

/// Image types saved to files, and the extension each gets.
const IMAGE_FILES: &[(&str, &str)] = &[
    ("image/png", "png"),
    ("image/jpeg", "jpg"),
    ("image/gif", "gif"),
    ("image/svg+xml", "svg"),
];

#[derive(Args)]
pub struct CodeArgs {
    /// The session's id, or a unique prefix of it.
    id: SessionArg,
    /// The file holding the code; `-` or none reads it from stdin.
    file: Option<PathBuf>,
    /// The context to run in (default: the language's default context).
    #[arg(long)]
    context: Option<String>,
    /// The language, for the default context (default: the runtime's first kernel).
    #[arg(long)]
    language: Option<String>,
    /// Seconds before the run is interrupted (default: the service's).
    #[arg(long)]
    timeout: Option<u64>,
    /// The directory images are saved in.
    #[arg(long, default_value = ".")]
    images_dir: PathBuf,
    #[command(flatten)]
    service: ServiceArgs,
}

pub fn run(args: CodeArgs) -> Result<u8> {
    let code = match args.file.as_deref() {
        None => read_stdin()?,
        Some(path) if path.as_os_str() == "-" => read_stdin()?,
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?,
    };
    let client = args.service.client(Interface::Cli)?;
    let request = RunCode {
        cwd: None,
        code,
        context: args.context,
        language: args.language,
        timeout_secs: args.timeout,
    };
    let plain = Plain {
        stdout: !std::io::stdout().is_terminal(),
        stderr: !std::io::stderr().is_terminal(),
    };
    block_on(async {
        let id = args.id.resolve(&client).await?;
        let mut stream = client.run_code(&id, &request).await?;
        let mut saved = 0;
        let mut end = None;
        while let Some(event) = stream.next().await? {
            match event {
                CodeEvent::Stdout { text } => {
                    print!("{}", plain.stdout(&text));
                    std::io::stdout().flush()?;
                }
                CodeEvent::Stderr { text } => eprint!("{}", plain.stderr(&text)),
                CodeEvent::Result(result) => show(&result, &args.images_dir, &mut saved, &plain)?,
                CodeEvent::Error(error) => {
                    for line in &error.traceback {
                        eprintln!("{}", plain.stderr(line));
                    }
                    if error.traceback.is_empty() {
                        eprintln!("{}: {}", error.name, error.value);
                    }
                }
                CodeEvent::End(done) => end = Some(done),
            }
        }
        Ok(exit_code(end.as_ref()))
    })?
}

/// Which of the output streams go to a file or a pipe: kernels colour their tracebacks with
/// terminal escapes, which only a terminal should get.
struct Plain {
    stdout: bool,
    stderr: bool,
}

impl Plain {
    fn stdout<'a>(&self, text: &'a str) -> Cow<'a, str> {
        Self::shown(self.stdout, text)
    }

    fn stderr<'a>(&self, text: &'a str) -> Cow<'a, str> {
        Self::shown(self.stderr, text)
    }

    fn shown(plain: bool, text: &str) -> Cow<'_, str> {
        if plain && text.contains('\u{1b}') {
            Cow::Owned(strip_ansi(text))
        } else {
            Cow::Borrowed(text)
        }
    }
}

/// Prints a result's text and saves its images, each to a new numbered file.
fn show(result: &CodeResult, dir: &std::path::Path, saved: &mut u32, plain: &Plain) -> Result<()> {
    for (mime, extension) in IMAGE_FILES {
        let Some(data) = result.data.get(*mime).and_then(|v| v.as_str()) else {
            continue;
        };
        let bytes = if *mime == "image/svg+xml" {
            data.as_bytes().to_vec()
        } else {
            base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .context("the service sent an image that is not base64")?
        };
        *saved += 1;
        let path = dir.join(format!("image-{saved}.{extension}"));
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        println!("[{mime} saved to {}]", path.display());
    }
    if let Some(text) = result.data.get("text/plain").and_then(|v| v.as_str()) {
        println!("{}", plain.stdout(text));
    }
    Ok(())
}

fn exit_code(end: Option<&CodeEnd>) -> u8 {
    let Some(end) = end else { return 1 };
    if end.truncated {
        eprintln!(
            "[output over the service's limit was left out: {} bytes]",
            end.dropped_bytes
        );
    }
    if end.restarted {
        eprintln!(
            "[the kernel was restarted: what context {} defined is gone]",
            end.context
        );
    }
    match end.outcome.as_str() {
        "ok" => 0,
        "timed_out" => 124,
        "kernel_died" => 137,
        _ => 1,
    }
}

fn read_stdin() -> Result<String> {
    let mut code = String::new();
    std::io::stdin()
        .read_to_string(&mut code)
        .context("cannot read the code from stdin")?;
    Ok(code)
}
