//! A command's result sized for a model, by one budget (`policy.mcp_output_bytes`, both
//! streams together): the text content carries the output, each stream whole or its head and
//! tail around a marker line saying how much was left out and what the saved file holds; the
//! structured content carries the facts (exit code, byte counts, flags, files) without a
//! second copy of the output.

use sandboxd_api::{strip_ansi, ExecResult, Sandboxes};
use schemars::JsonSchema;
use serde::Serialize;

/// Where the output the service kept of a command whose output was cut is written in its
/// session, per stream; the next cut command's output replaces it.
pub const OUTPUT_DIR: &str = "/tmp/sandboxd-output";

/// The budget below which no stream is cut: a marker must fit beside a head and a tail.
const MIN_BUDGET: usize = 1024;

/// What run_command and run_code return as structured content: how the command ended and
/// what became of its output. The output itself is in the text content.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CommandResult {
    /// The exit code; null when a signal ended the command (`signal` says which).
    pub exit_code: Option<i32>,
    /// The signal that ended the command, when one did (9 after a timeout).
    pub signal: Option<i32>,
    /// Bytes the command wrote to standard output, all of them (for code run in a context:
    /// the bytes that reached the service).
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    /// Bytes of standard output the service kept: all of it, or its first and last parts
    /// when `stdout_truncated`.
    pub stdout_kept_bytes: u64,
    pub stderr_kept_bytes: u64,
    /// The command wrote more than the service keeps per stream (policy.max_output_bytes):
    /// only its first and last parts were kept, around a line saying how much of the middle
    /// is lost. Redirect such output to a file to keep all of it.
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// The text shows only the head and the tail of what was kept, around a marker line.
    pub stdout_cut: bool,
    pub stderr_cut: bool,
    /// When `stdout_cut`: the file in the session holding what the service kept of standard
    /// output; read parts of it with run_command (`sed -n`, `tail`, `grep`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_file: Option<String>,
    /// It ran past its timeout and was killed.
    pub timed_out: bool,
    /// The kernel killed a process of the command for lack of memory.
    pub oom_killed: bool,
    pub duration_ms: u64,
    /// For code run in a context (a runtime with a kernel): how the kernel ran it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelRunResult>,
    /// The streams as the text shows them.
    #[serde(skip)]
    #[schemars(skip)]
    shown: [String; 2],
}

/// How a code context ran the code.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct KernelRunResult {
    /// The context it ran in: its state (variables, imports) persists for the next call.
    pub context: String,
    pub language: String,
    /// `ok`, `error` (an exception, in `error`), `timed_out` (interrupted by the timeout) or
    /// `kernel_died` (the kernel exited or was killed while it ran).
    pub outcome: String,
    pub execution_count: Option<u32>,
    /// The kernel was restarted after the run: the context's state is gone.
    pub restarted: bool,
    /// Bytes of output or results the service left out of this run (past
    /// policy.max_output_bytes).
    pub dropped_bytes: u64,
    /// Displays and the value of the last expression, in order.
    pub results: Vec<ShownResult>,
    pub error: Option<sandboxd_api::CodeError>,
}

impl KernelRunResult {
    /// Each result as text (its plain text, or the kinds it has) and the error's traceback.
    fn describe(&self, text: &mut String) {
        for result in &self.results {
            let heading = if result.is_main_result {
                "result"
            } else {
                "display"
            };
            let plain = result.data.get("text/plain").and_then(|v| v.as_str());
            let shown = match plain {
                Some(plain) => plain.to_string(),
                None => result.data.keys().cloned().collect::<Vec<_>>().join(", "),
            };
            text.push_str(&format!("--- {heading} ---\n{shown}\n"));
            for image in &result.images {
                text.push_str(&format!("[{image} image, sent as an image block]\n"));
            }
        }
        if let Some(error) = &self.error {
            text.push_str(&format!("--- error: {}: {} ---\n", error.name, error.value));
            for line in &error.traceback {
                text.push_str(&strip_ansi(line));
                text.push('\n');
            }
        }
    }
}

/// A result as run_code shows it: its MIME bundle without the images, which come as image
/// content blocks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct ShownResult {
    /// MIME type -> content (`text/plain`, `text/html`, `application/json`, ...).
    pub data: std::collections::BTreeMap<String, serde_json::Value>,
    /// The image types it had, each sent as an image content block.
    pub images: Vec<String>,
    pub is_main_result: bool,
}

/// One stream as the service returned it.
#[derive(Debug, Clone, PartialEq)]
pub struct Captured {
    pub name: &'static str,
    /// What the service kept of it.
    pub kept: String,
    /// Bytes the command wrote (for code run in a context: that reached the service).
    pub written: u64,
    pub loss: Loss,
}

/// What the service did not keep of a stream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Loss {
    None,
    /// A command's output past the cap: its first and last parts are kept, around a line
    /// saying how many bytes of the middle were left out.
    Middle,
    /// A code run's output or results past the cap: these many bytes after it were dropped.
    Dropped(u64),
}

impl Captured {
    pub fn stdout(kept: String, written: u64, loss: Loss) -> Captured {
        Captured {
            name: "stdout",
            kept,
            written,
            loss,
        }
    }

    pub fn stderr(kept: String, written: u64, loss: Loss) -> Captured {
        Captured {
            name: "stderr",
            ..Captured::stdout(kept, written, loss)
        }
    }

    fn truncated(&self) -> bool {
        self.loss != Loss::None
    }
}

/// One stream as the answer shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub captured: Captured,
    /// What the text shows: all it kept, or its head and tail around a marker.
    pub text: String,
    pub cut: bool,
    /// The file in the session holding all the service kept, when the text was cut.
    pub file: Option<String>,
}

/// Both streams within `budget` bytes: a stream that does not fit its share is first written
/// whole (as the service kept it) to a file in the session, so the marker can say where.
pub async fn size(
    client: &dyn Sandboxes,
    session_id: &str,
    budget: u64,
    stdout: Captured,
    stderr: Captured,
) -> [Shown; 2] {
    let budget = usize::try_from(budget).unwrap_or(usize::MAX);
    let shares = split(budget, stdout.kept.len(), stderr.kept.len());
    let mut shown = Vec::with_capacity(2);
    for (captured, share) in [(stdout, shares.0), (stderr, shares.1)] {
        let mut file = None;
        if captured.kept.len() > share {
            let path = format!("{OUTPUT_DIR}/last.{}", captured.name);
            let bytes = captured.kept.clone().into_bytes();
            file = client
                .write_file(session_id, &path, bytes)
                .await
                .ok()
                .map(|_| path);
        }
        shown.push(cut(captured, share, file));
    }
    let stderr = shown.pop().expect("two streams");
    let stdout = shown.pop().expect("two streams");
    [stdout, stderr]
}

/// How many bytes of each stream (stdout, stderr) to show within `budget`: all of both when
/// they fit; otherwise a stream that fits in half keeps all and the other gets the rest.
pub fn split(budget: usize, stdout: usize, stderr: usize) -> (usize, usize) {
    if stdout + stderr <= budget {
        return (stdout, stderr);
    }
    let half = budget / 2;
    if stdout <= half {
        (stdout, budget - stdout)
    } else if stderr <= half {
        (budget - stderr, stderr)
    } else {
        (half, budget - half)
    }
}

/// The stream within `allowance` bytes: all it kept when that fits, else its head (a third)
/// and its tail (the rest, where errors usually are), cut at line ends where one is near,
/// around a marker naming what was left out and what `file` holds.
pub fn cut(captured: Captured, allowance: usize, file: Option<String>) -> Shown {
    let text = captured.kept.as_str();
    if text.len() <= allowance {
        return Shown {
            text: text.to_string(),
            cut: false,
            file: None,
            captured,
        };
    }
    let allowance = allowance.max(MIN_BUDGET / 2);
    let head_len = floor_boundary(text, allowance / 3);
    let head = match text[..head_len].rfind('\n') {
        Some(end) if end >= head_len / 2 => &text[..=end],
        _ => &text[..head_len],
    };
    let tail_start = ceil_boundary(text, text.len() - (allowance - head_len));
    let tail = match text[tail_start..].find('\n') {
        Some(start) if start < (text.len() - tail_start) / 2 => &text[tail_start + start + 1..],
        _ => &text[tail_start..],
    };
    let left_out = &text[head.len()..text.len() - tail.len()];
    let lines = left_out.matches('\n').count();
    let newline = if head.ends_with('\n') { "" } else { "\n" };
    let shown = format!(
        "{head}{newline}[... {} bytes ({lines} lines) of {} left out here; {} ...]\n{tail}",
        left_out.len(),
        captured.name,
        whereabouts(&captured, file.as_deref()),
    );
    Shown {
        text: shown,
        cut: true,
        file,
        captured,
    }
}

/// What the marker says about where the rest of a cut stream is: the file, and whether it
/// holds all the command wrote or only what the service kept of it.
fn whereabouts(captured: &Captured, file: Option<&str>) -> String {
    let (stream, written) = (captured.name, captured.written);
    let Some(file) = file else {
        return format!(
            "the {stream} could not be saved in a file: redirect it to one (`> out.txt`) to read it all"
        );
    };
    let read = format!(
        "read parts of it with run_command, e.g. `sed -n '100,200p' {file}`, `grep -n error {file}`"
    );
    let kept = captured.kept.len();
    match captured.loss {
        Loss::None => format!("all {written} bytes of {stream} are in {file}: {read}"),
        Loss::Middle => format!(
            "the command wrote {written} bytes of {stream}, more than the service keeps: {file} holds only their first and last parts ({kept} bytes), the middle is lost at its line `[... bytes left out here ...]` (redirect the output to a file to keep it all); {read}"
        ),
        Loss::Dropped(dropped) => format!(
            "{file} holds the {kept} bytes of {stream} the service kept; {dropped} bytes of this run's output or results went past the service's limit and are lost; {read}"
        ),
    }
}

fn floor_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

/// A command's streams as the service returned them: the output it kept, with the real
/// byte counts.
pub fn captured(result: &ExecResult) -> (Captured, Captured) {
    (
        Captured::stdout(
            result.stdout.clone(),
            result.stdout_bytes.max(result.stdout.len() as u64),
            if result.stdout_truncated {
                Loss::Middle
            } else {
                Loss::None
            },
        ),
        Captured::stderr(
            result.stderr.clone(),
            result.stderr_bytes.max(result.stderr.len() as u64),
            if result.stderr_truncated {
                Loss::Middle
            } else {
                Loss::None
            },
        ),
    )
}

impl CommandResult {
    /// A command's result, its streams as shown.
    pub fn new(result: &ExecResult, streams: [Shown; 2]) -> CommandResult {
        CommandResult {
            exit_code: result.exit_code,
            signal: result.signal,
            timed_out: result.timed_out,
            oom_killed: result.oom_killed,
            duration_ms: result.duration_ms,
            ..CommandResult::of_streams(streams)
        }
    }

    /// A code context's run as a command's result: no exit code, and the kernel's account.
    pub fn of_kernel_run(
        streams: [Shown; 2],
        end: &sandboxd_api::CodeEnd,
        kernel: KernelRunResult,
    ) -> CommandResult {
        CommandResult {
            signal: end.signal,
            timed_out: end.outcome == "timed_out",
            duration_ms: end.duration_ms,
            kernel: Some(kernel),
            ..CommandResult::of_streams(streams)
        }
    }

    fn of_streams([stdout, stderr]: [Shown; 2]) -> CommandResult {
        CommandResult {
            exit_code: None,
            signal: None,
            stdout_bytes: stdout.captured.written,
            stderr_bytes: stderr.captured.written,
            stdout_kept_bytes: stdout.captured.kept.len() as u64,
            stderr_kept_bytes: stderr.captured.kept.len() as u64,
            stdout_truncated: stdout.captured.truncated(),
            stderr_truncated: stderr.captured.truncated(),
            stdout_cut: stdout.cut,
            stderr_cut: stderr.cut,
            stdout_file: stdout.file,
            stderr_file: stderr.file,
            timed_out: false,
            oom_killed: false,
            duration_ms: 0,
            kernel: None,
            shown: [stdout.text, stderr.text],
        }
    }

    /// The result as text a person or a model reads: how it ended, then each stream under a
    /// line with its size.
    pub fn text(&self) -> String {
        let ending = match (&self.kernel, self.exit_code, self.signal) {
            (Some(kernel), _, _) => format!(
                "{} in context {} ({})",
                kernel.outcome, kernel.context, kernel.language
            ),
            (None, Some(code), _) => format!("exit code {code}"),
            (None, None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None, None) => "ended".to_string(),
        };
        let mut text = format!("{ending} after {} ms", self.duration_ms);
        if let Some(kernel) = self.kernel.as_ref().filter(|k| k.restarted) {
            text.push_str(&format!(
                "; the kernel was restarted: what context {} defined is gone",
                kernel.context
            ));
        } else if self.timed_out && self.kernel.is_some() {
            text.push_str("; its timeout interrupted it");
        } else if self.timed_out {
            text.push_str("; it ran past its timeout and was killed");
        }
        if self.oom_killed {
            text.push_str("; the kernel killed a process of it for lack of memory");
        }
        if let Some(kernel) = self.kernel.as_ref().filter(|k| k.dropped_bytes > 0) {
            text.push_str(&format!(
                "; the service left out {} bytes of its output or results (policy.max_output_bytes)",
                kernel.dropped_bytes
            ));
        }
        text.push('\n');
        let streams = [
            (
                "stdout",
                self.stdout_bytes,
                self.stdout_kept_bytes,
                self.stdout_truncated,
                self.stdout_cut,
            ),
            (
                "stderr",
                self.stderr_bytes,
                self.stderr_kept_bytes,
                self.stderr_truncated,
                self.stderr_cut,
            ),
        ];
        for ((name, written, kept, truncated, cut), output) in streams.into_iter().zip(&self.shown)
        {
            if output.is_empty() {
                continue;
            }
            let how = match (truncated && self.kernel.is_none(), cut) {
                (false, false) => String::new(),
                (false, true) => "; its head and tail below".to_string(),
                (true, false) => {
                    format!("; the service kept its first and last parts, {kept} bytes")
                }
                (true, true) => format!(
                    "; the service kept its first and last parts, {kept} bytes; their head and tail below"
                ),
            };
            text.push_str(&format!("--- {name}: {written} bytes{how} ---\n{output}"));
            if !output.ends_with('\n') {
                text.push('\n');
            }
        }
        if let Some(kernel) = &self.kernel {
            kernel.describe(&mut text);
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    fn stdout(text: &str, loss: Loss) -> Captured {
        Captured::stdout(text.to_string(), text.len() as u64, loss)
    }

    #[test]
    fn what_fits_is_kept_whole() {
        let text = lines(10);
        let shown = cut(stdout(&text, Loss::None), 1000, None);
        assert_eq!((shown.text.as_str(), shown.cut), (text.as_str(), false));
        assert_eq!(split(100, 30, 40), (30, 40));
    }

    #[test]
    fn a_long_stream_keeps_its_head_and_tail_at_line_ends() {
        let text = lines(100_000);
        let shown = cut(stdout(&text, Loss::None), 8192, Some("/tmp/x".into()));
        assert!(shown.cut);
        assert!(shown.text.len() <= 8192 + 400, "{}", shown.text.len());
        assert!(shown.text.starts_with("line 1\nline 2\n"));
        assert!(shown.text.ends_with("line 100000\n"));
        let marker = shown.text.lines().find(|l| l.starts_with("[...")).unwrap();
        assert!(marker.contains("lines) of stdout left out"), "{marker}");
        assert!(marker.contains(&format!("all {} bytes of stdout are in /tmp/x", text.len())));
        // Every line shown is whole.
        for line in shown.text.lines().filter(|l| !l.starts_with("[...")) {
            assert!(line.starts_with("line "), "{line:?}");
        }
    }

    #[test]
    fn the_marker_says_when_the_file_holds_only_what_the_service_kept() {
        let kept = lines(50_000);
        let captured = Captured::stdout(kept.clone(), 14_888_896, Loss::Middle);
        let shown = cut(captured, 8192, Some("/tmp/x".into()));
        let marker = shown.text.lines().find(|l| l.starts_with("[...")).unwrap();
        assert!(
            marker.contains("wrote 14888896 bytes of stdout"),
            "{marker}"
        );
        assert!(marker.contains(&format!(
            "only their first and last parts ({} bytes)",
            kept.len()
        )));
        assert!(!marker.contains("all "), "{marker}");

        let dropped = Captured::stdout(kept, 1 << 20, Loss::Dropped(5000));
        let marker = cut(dropped, 8192, Some("/tmp/x".into())).text;
        assert!(
            marker.contains("5000 bytes of this run's output or results"),
            "{marker}"
        );
    }

    #[test]
    fn the_result_counts_what_was_written_and_kept_and_holds_no_copy_of_the_output() {
        let result = ExecResult {
            exit_code: Some(0),
            signal: None,
            stdout: lines(50_000),
            stderr: "oops\n".into(),
            stdout_truncated: true,
            stderr_truncated: false,
            stdout_bytes: 14_888_896,
            stderr_bytes: 5,
            timed_out: false,
            oom_killed: false,
            duration_ms: 3,
        };
        let (out, err) = captured(&result);
        let shares = split(4096, out.kept.len(), err.kept.len());
        let streams = [
            cut(out, shares.0, Some("/f".into())),
            cut(err, shares.1, None),
        ];
        let ran = CommandResult::new(&result, streams);
        assert_eq!(
            (ran.stdout_bytes, ran.stdout_kept_bytes),
            (14_888_896, result.stdout.len() as u64)
        );
        assert!(ran.stdout_truncated && ran.stdout_cut && !ran.stderr_cut);
        let structured = serde_json::to_string(&ran).unwrap();
        assert!(structured.len() < 600, "{structured}");
        assert!(!structured.contains("line 1"), "{structured}");
        let text = ran.text();
        assert!(
            text.starts_with(
                "exit code 0 after 3 ms\n--- stdout: 14888896 bytes; the service kept"
            ),
            "{text}"
        );
        assert!(text.contains("--- stderr: 5 bytes ---\noops\n"), "{text}");
        assert!(text.len() < 4096 + 1024, "{}", text.len());
    }

    #[test]
    fn the_budget_goes_where_the_output_is() {
        assert_eq!(split(100, 1000, 10), (90, 10));
        assert_eq!(split(100, 10, 1000), (10, 90));
        assert_eq!(split(100, 1000, 1000), (50, 50));
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let text = "é".repeat(10_000);
        let shown = cut(Captured::stderr(text, 20_000, Loss::None), 1001, None);
        assert!(shown.cut && shown.text.contains("could not be saved"));
    }
}
