//! The newest output of a command that is still running, for a face that reports progress
//! (MCP's progress notifications): a bounded tail of both streams, shared between the one
//! running the command and the one reporting.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Bytes of the newest output kept; a progress report shows a few lines of it.
const KEPT_BYTES: usize = 4096;

#[derive(Debug, Clone, Default)]
pub struct OutputWatch(Arc<Mutex<VecDeque<u8>>>);

impl OutputWatch {
    /// Adds output the command wrote (either stream), keeping the newest bytes.
    pub fn push(&self, data: &[u8]) {
        let newest = &data[data.len().saturating_sub(KEPT_BYTES)..];
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.extend(newest);
        let over = kept.len().saturating_sub(KEPT_BYTES);
        kept.drain(..over);
    }

    /// The last `lines` complete or partial lines of the output so far, at most `max_chars`
    /// characters (the newest kept), as text.
    pub fn last_lines(&self, lines: usize, max_chars: usize) -> String {
        let kept: Vec<u8> = {
            let kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
            kept.iter().copied().collect()
        };
        let text = String::from_utf8_lossy(&kept);
        let text = text.trim_end_matches('\n');
        let start = text
            .rmatch_indices('\n')
            .nth(lines.saturating_sub(1))
            .map_or(0, |(at, _)| at + 1);
        let shown = &text[start..];
        let skip = shown.chars().count().saturating_sub(max_chars);
        shown.chars().skip(skip).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_lines_within_the_bounds() {
        let watch = OutputWatch::default();
        assert_eq!(watch.last_lines(2, 100), "");
        watch.push(b"one\ntwo\nthr");
        watch.push(b"ee\n");
        assert_eq!(watch.last_lines(2, 100), "two\nthree");
        assert_eq!(watch.last_lines(1, 3), "ree");
        watch.push(&vec![b'x'; 10_000]);
        assert_eq!(watch.last_lines(3, 10_000).len(), KEPT_BYTES);
    }
}
