//! A command's result sized for a model: each stream's head and tail within the policy's
//! budget (`policy.mcp_output_bytes`, both streams together), with a marker where output was
//! left out saying how much and where the whole of it can be read; as readable text for hosts
//! that show only text, and as structured content for those that read it.

use sandboxd_api::{strip_ansi, ExecResult};
use schemars::JsonSchema;
use serde::Serialize;

/// Where the whole output of a command whose output was cut is written in its session, per
/// stream; the next cut command's output replaces it.
pub const OUTPUT_DIR: &str = "/tmp/sandboxd-output";

/// The budget below which no stream is cut: a marker must fit beside a head and a tail.
const MIN_BUDGET: usize = 1024;

/// What run_command and run_code return.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CommandResult {
    /// The exit code; null when a signal ended the command (`signal` says which).
    pub exit_code: Option<i32>,
    /// The signal that ended the command, when one did (9 after a timeout).
    pub signal: Option<i32>,
    /// The standard output: all of it, or its head and tail around a marker line saying what
    /// was left out and where the whole of it is.
    pub stdout: String,
    /// The standard error, cut the same way.
    pub stderr: String,
    /// Bytes of standard output the service kept (all of it unless `stdout_truncated`).
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    /// The middle of `stdout` was left out here to keep the answer small.
    pub stdout_cut: bool,
    pub stderr_cut: bool,
    /// The file in the session holding the whole standard output the service kept, when
    /// `stdout` was cut: read parts of it with run_command (`sed -n`, `tail`, `grep`).
    pub stdout_file: Option<String>,
    pub stderr_file: Option<String>,
    /// The command wrote more than the service keeps per stream (policy.max_output_bytes):
    /// only its first and last parts were kept, around a line saying how much of the middle
    /// is lost. Redirect such output to a file to keep all of it.
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// It ran past its timeout and was killed.
    pub timed_out: bool,
    /// The kernel killed a process of the command for lack of memory.
    pub oom_killed: bool,
    pub duration_ms: u64,
    /// For code run in a context (a runtime with a kernel): how the kernel ran it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelRunResult>,
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

/// One stream as the result shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub text: String,
    pub cut: bool,
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

/// `text` within `allowance` bytes: itself when it fits, else its head (a third) and its tail
/// (the rest, where errors usually are), cut at line ends where one is near, around a marker
/// naming what was left out and `file`, where the whole of it is.
pub fn cut(text: &str, allowance: usize, stream: &str, file: Option<&str>) -> Shown {
    if text.len() <= allowance {
        return Shown {
            text: text.to_string(),
            cut: false,
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
    let whole = match file {
        Some(file) => format!(
            "the whole {stream} is in {file}: read parts of it with run_command, e.g. `sed -n '100,200p' {file}`, `grep -n error {file}`"
        ),
        None => format!("the whole {stream} could not be kept in a file"),
    };
    let newline = if head.ends_with('\n') { "" } else { "\n" };
    Shown {
        text: format!(
            "{head}{newline}[... {} bytes ({lines} lines) of {stream} left out here; {whole} ...]\n{tail}",
            left_out.len()
        ),
        cut: true,
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

impl CommandResult {
    /// The result with its streams as shown, the files they were written to when cut.
    pub fn new(
        result: &ExecResult,
        stdout: Shown,
        stderr: Shown,
        files: (Option<String>, Option<String>),
    ) -> CommandResult {
        CommandResult {
            exit_code: result.exit_code,
            signal: result.signal,
            stdout_bytes: result.stdout.len() as u64,
            stderr_bytes: result.stderr.len() as u64,
            stdout: stdout.text,
            stderr: stderr.text,
            stdout_cut: stdout.cut,
            stderr_cut: stderr.cut,
            stdout_file: files.0,
            stderr_file: files.1,
            stdout_truncated: result.stdout_truncated,
            stderr_truncated: result.stderr_truncated,
            timed_out: result.timed_out,
            oom_killed: result.oom_killed,
            duration_ms: result.duration_ms,
            kernel: None,
        }
    }

    /// A code context's run as a command's result: no exit code, its streams as they came
    /// (the service capped them), and the kernel's account.
    pub fn of_kernel_run(
        stdout: String,
        stderr: String,
        end: &sandboxd_api::CodeEnd,
        kernel: KernelRunResult,
    ) -> CommandResult {
        CommandResult {
            exit_code: None,
            signal: end.signal,
            stdout_bytes: stdout.len() as u64,
            stderr_bytes: stderr.len() as u64,
            stdout,
            stderr,
            stdout_cut: false,
            stderr_cut: false,
            stdout_file: None,
            stderr_file: None,
            stdout_truncated: end.truncated,
            stderr_truncated: end.truncated,
            timed_out: end.outcome == "timed_out",
            oom_killed: false,
            duration_ms: end.duration_ms,
            kernel: Some(kernel),
        }
    }

    /// The result as text a person or a model reads: how it ended, then each stream.
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
        text.push('\n');
        for (name, output, truncated) in [
            ("stdout", &self.stdout, self.stdout_truncated),
            ("stderr", &self.stderr, self.stderr_truncated),
        ] {
            if output.is_empty() {
                continue;
            }
            text.push_str(&format!("--- {name} ---\n{output}"));
            if !output.ends_with('\n') {
                text.push('\n');
            }
            if truncated {
                text.push_str(&format!(
                    "[{name} went past the service's per-stream limit: only its first and last parts were kept]\n"
                ));
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

    #[test]
    fn what_fits_is_kept_whole() {
        let text = lines(10);
        assert_eq!(cut(&text, 1000, "stdout", None).text, text);
        assert_eq!(split(100, 30, 40), (30, 40));
    }

    #[test]
    fn a_long_stream_keeps_its_head_and_tail_at_line_ends() {
        let text = lines(100_000);
        let shown = cut(&text, 8192, "stdout", Some("/tmp/x"));
        assert!(shown.cut);
        assert!(shown.text.len() <= 8192 + 400, "{}", shown.text.len());
        assert!(shown.text.starts_with("line 1\nline 2\n"));
        assert!(shown.text.ends_with("line 100000\n"));
        let marker = shown.text.lines().find(|l| l.starts_with("[...")).unwrap();
        assert!(marker.contains("lines) of stdout left out") && marker.contains("/tmp/x"));
        // Every line shown is whole.
        for line in shown.text.lines().filter(|l| !l.starts_with("[...")) {
            assert!(line.starts_with("line "), "{line:?}");
        }
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
        let shown = cut(&text, 1001, "stderr", None);
        assert!(shown.cut && shown.text.contains("could not be kept"));
    }
}
