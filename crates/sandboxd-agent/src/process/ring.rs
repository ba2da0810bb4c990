//! The output ring: a process's newest output, stdout and stderr in order, within its limit.

use sandboxd_agent_proto::{FrameKind, OUTPUT_CHUNK_LEN};
use std::collections::VecDeque;

/// Bookkeeping charged per ring chunk, so a flood of tiny writes cannot outgrow the budget.
const CHUNK_OVERHEAD: u64 = 64;

/// The newest output of a process, stdout and stderr together in the order they came.
/// Offsets count every byte the process wrote to either since it started.
pub(super) struct Ring {
    chunks: VecDeque<Chunk>,
    /// The offset of the oldest byte kept.
    pub(super) start: u64,
    /// The offset of the next byte.
    pub(super) end: u64,
    /// Bytes kept plus [`CHUNK_OVERHEAD`] per chunk; at most `capacity`.
    cost: u64,
    capacity: u64,
    pub(super) stdout_bytes: u64,
    pub(super) stderr_bytes: u64,
}

struct Chunk {
    kind: FrameKind,
    start: u64,
    data: Vec<u8>,
}

impl Chunk {
    fn end(&self) -> u64 {
        self.start + self.data.len() as u64
    }
}

impl Ring {
    pub(super) fn new(capacity: u64) -> Self {
        Self {
            chunks: VecDeque::new(),
            start: 0,
            end: 0,
            cost: 0,
            capacity,
            stdout_bytes: 0,
            stderr_bytes: 0,
        }
    }

    pub(super) fn push(&mut self, kind: FrameKind, data: &[u8]) {
        let len = data.len() as u64;
        match self.chunks.back_mut() {
            Some(last) if last.kind == kind && last.data.len() + data.len() <= OUTPUT_CHUNK_LEN => {
                last.data.extend_from_slice(data);
                self.cost += len;
            }
            _ => {
                self.chunks.push_back(Chunk {
                    kind,
                    start: self.end,
                    data: data.to_vec(),
                });
                self.cost += len + CHUNK_OVERHEAD;
            }
        }
        self.end += len;
        match kind {
            FrameKind::Stderr => self.stderr_bytes += len,
            _ => self.stdout_bytes += len,
        }
        // Drops the oldest bytes, never the newest: a chunk that is only partly in excess is
        // trimmed at its front (a chunk can grow larger than a small ring's capacity).
        while self.cost > self.capacity {
            let excess = self.cost - self.capacity;
            let Some(oldest) = self.chunks.front_mut() else {
                break;
            };
            let len = oldest.data.len() as u64;
            if len <= excess {
                self.chunks.pop_front();
                self.cost -= len + CHUNK_OVERHEAD;
            } else {
                oldest.data.drain(..excess as usize);
                oldest.start += excess;
                self.cost -= excess;
            }
            self.start = self.chunks.front().map_or(self.end, |c| c.start);
        }
    }

    pub(super) fn capacity(&self) -> u64 {
        self.capacity
    }

    /// What the bytes from `offset` on cost against the capacity.
    pub(super) fn cost_from(&self, offset: u64) -> u64 {
        let first = self.chunks.partition_point(|c| c.end() <= offset);
        self.chunks
            .range(first..)
            .map(|c| c.end() - offset.max(c.start) + CHUNK_OVERHEAD)
            .sum()
    }

    /// Whether what is kept from `offset` on leaves `reserve` of the capacity free, so that
    /// as much more output loses nothing from `offset` on.
    pub(super) fn has_room_after(&self, offset: u64, reserve: u64) -> bool {
        self.cost_from(offset) + reserve <= self.capacity
    }

    /// Copies up to about `budget` bytes from `offset` on (or from the oldest byte kept, if
    /// that is later); returns where the copy starts and the pieces.
    pub(super) fn read_from(&self, offset: u64, budget: usize) -> (u64, Vec<(FrameKind, Vec<u8>)>) {
        let from = offset.max(self.start);
        let first = self.chunks.partition_point(|c| c.end() <= from);
        let mut pieces = Vec::new();
        let mut taken = 0;
        for chunk in self.chunks.range(first..) {
            let skip = usize::try_from(from.saturating_sub(chunk.start)).unwrap_or(usize::MAX);
            let data = &chunk.data[skip.min(chunk.data.len())..];
            if taken > 0 && taken + data.len() > budget {
                break;
            }
            taken += data.len();
            pieces.push((chunk.kind, data.to_vec()));
        }
        (from, pieces)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring_contents(ring: &Ring, offset: u64) -> (u64, Vec<(FrameKind, Vec<u8>)>) {
        ring.read_from(offset, usize::MAX)
    }

    #[test]
    fn ring_keeps_order_merges_small_writes_and_counts_per_stream() {
        let mut ring = Ring::new(1 << 20);
        ring.push(FrameKind::Stdout, b"ab");
        ring.push(FrameKind::Stdout, b"c");
        ring.push(FrameKind::Stderr, b"E");
        ring.push(FrameKind::Stdout, b"d");
        assert_eq!(ring.chunks.len(), 3);
        assert_eq!((ring.start, ring.end), (0, 5));
        assert_eq!((ring.stdout_bytes, ring.stderr_bytes), (4, 1));
        assert_eq!(
            ring_contents(&ring, 1),
            (
                1,
                vec![
                    (FrameKind::Stdout, b"bc".to_vec()),
                    (FrameKind::Stderr, b"E".to_vec()),
                    (FrameKind::Stdout, b"d".to_vec()),
                ]
            )
        );
        assert_eq!(ring_contents(&ring, 5), (5, vec![]));
    }

    #[test]
    fn ring_drops_the_oldest_beyond_its_capacity() {
        let mut ring = Ring::new(2 * (10 + CHUNK_OVERHEAD));
        for (kind, data) in [
            (FrameKind::Stdout, [b'a'; 10]),
            (FrameKind::Stderr, [b'b'; 10]),
            (FrameKind::Stdout, [b'c'; 10]),
        ] {
            ring.push(kind, &data);
        }
        assert_eq!((ring.start, ring.end), (10, 30));
        assert!(ring.cost <= ring.capacity);
        // Asking for what is gone starts at the oldest byte kept.
        let (from, pieces) = ring_contents(&ring, 3);
        assert_eq!(from, 10);
        assert_eq!(pieces[0], (FrameKind::Stderr, vec![b'b'; 10]));
        assert_eq!((ring.stdout_bytes, ring.stderr_bytes), (20, 10));

        // A ring too small for one chunk keeps nothing, and says so.
        let mut tiny = Ring::new(4);
        tiny.push(FrameKind::Stdout, b"hello");
        assert_eq!((tiny.start, tiny.end), (5, 5));
        assert_eq!(ring_contents(&tiny, 0), (5, vec![]));
    }

    #[test]
    fn a_growing_chunk_loses_its_oldest_bytes_never_its_newest() {
        let mut ring = Ring::new(CHUNK_OVERHEAD + 8);
        ring.push(FrameKind::Stdout, b"aaaa");
        ring.push(FrameKind::Stdout, b"bbbbbbbb");
        assert_eq!((ring.start, ring.end), (4, 12));
        assert_eq!(
            ring_contents(&ring, 0),
            (4, vec![(FrameKind::Stdout, b"bbbbbbbb".to_vec())])
        );
        assert_eq!(ring.cost, ring.capacity);
    }

    #[test]
    fn ring_reads_are_batched() {
        let mut ring = Ring::new(1 << 20);
        for kind in [FrameKind::Stdout, FrameKind::Stderr, FrameKind::Stdout] {
            ring.push(kind, &[0; 100]);
        }
        let (_, first) = ring.read_from(0, 150);
        assert_eq!(first.len(), 1);
        // A batch always makes progress, even past its budget.
        let (_, one) = ring.read_from(50, 10);
        assert_eq!(one, vec![(FrameKind::Stdout, vec![0; 50])]);
    }
}
