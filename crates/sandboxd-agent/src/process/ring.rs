//! The output ring: a process's first output and its newest, stdout and stderr in order,
//! within its limit. A reader that falls behind loses the middle, never the start or the end.

use sandboxd_agent_proto::{FrameKind, OUTPUT_CHUNK_LEN};
use std::collections::VecDeque;

/// Bookkeeping charged per ring chunk, so a flood of tiny writes cannot outgrow the budget.
const CHUNK_OVERHEAD: u64 = 64;

/// The share of the limit that keeps the start of the output for good.
const HEAD_SHARE: u64 = 4;

/// The first and the newest output of a process, stdout and stderr together in the order
/// they came. Offsets count every byte the process wrote to either since it started.
pub(super) struct Ring {
    /// The output's start, kept to the end: a quarter of the limit.
    head: Vec<Chunk>,
    head_cost: u64,
    /// Closed at the first write that does not fit, so the head stays one stretch.
    head_open: bool,
    chunks: VecDeque<Chunk>,
    /// The offset of the oldest byte kept after the head.
    tail_start: u64,
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
    /// A ring of `capacity`, a quarter of it for the start when `keep_start`. A paced
    /// process loses nothing anyway, so it keeps its whole budget for the pacing's room.
    pub(super) fn new(capacity: u64, keep_start: bool) -> Self {
        Self {
            head: Vec::new(),
            head_cost: 0,
            head_open: keep_start,
            chunks: VecDeque::new(),
            tail_start: 0,
            end: 0,
            cost: 0,
            capacity: match keep_start {
                true => capacity - capacity / HEAD_SHARE,
                false => capacity,
            },
            stdout_bytes: 0,
            stderr_bytes: 0,
        }
    }

    /// The offset of the oldest byte kept.
    pub(super) fn start(&self) -> u64 {
        if self.head.is_empty() {
            self.tail_start
        } else {
            0
        }
    }

    pub(super) fn push(&mut self, kind: FrameKind, data: &[u8]) {
        match kind {
            FrameKind::Stderr => self.stderr_bytes += data.len() as u64,
            _ => self.stdout_bytes += data.len() as u64,
        }
        let data = match self.head_open {
            true => self.push_head(kind, data),
            false => data,
        };
        if data.is_empty() {
            return;
        }
        self.head_open = false;
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
                // Below the chunk's length here, so it fits.
                oldest
                    .data
                    .drain(..usize::try_from(excess).unwrap_or(oldest.data.len()));
                oldest.start += excess;
                self.cost -= excess;
            }
            self.tail_start = self.chunks.front().map_or(self.end, |c| c.start);
        }
    }

    /// Adds to the head what fits of a write; returns the rest.
    fn push_head<'a>(&mut self, kind: FrameKind, mut data: &'a [u8]) -> &'a [u8] {
        let head_capacity = self.capacity / (HEAD_SHARE - 1);
        while !data.is_empty() {
            let room = |overhead: u64| {
                let left = head_capacity.saturating_sub(self.head_cost + overhead);
                data.len().min(usize::try_from(left).unwrap_or(usize::MAX))
            };
            let taken = match self.head.last_mut() {
                Some(last) if last.kind == kind && last.data.len() < OUTPUT_CHUNK_LEN => {
                    let taken = room(0).min(OUTPUT_CHUNK_LEN - last.data.len());
                    last.data.extend_from_slice(&data[..taken]);
                    self.head_cost += taken as u64;
                    taken
                }
                _ => {
                    let taken = room(CHUNK_OVERHEAD).min(OUTPUT_CHUNK_LEN);
                    if taken > 0 {
                        self.head.push(Chunk {
                            kind,
                            start: self.end,
                            data: data[..taken].to_vec(),
                        });
                        self.head_cost += taken as u64 + CHUNK_OVERHEAD;
                    }
                    taken
                }
            };
            if taken == 0 {
                break;
            }
            self.end += taken as u64;
            data = &data[taken..];
        }
        self.tail_start = self.end;
        data
    }

    /// The offset just past the head.
    fn head_end(&self) -> u64 {
        self.head.last().map_or(0, Chunk::end)
    }

    pub(super) fn capacity(&self) -> u64 {
        self.capacity
    }

    /// What the bytes from `offset` on cost against the capacity (the head costs nothing:
    /// it is never dropped).
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

    /// Copies up to about `budget` bytes from `offset` on (or from the next byte kept, if
    /// that is later); returns where the copy starts and the pieces.
    pub(super) fn read_from(&self, offset: u64, budget: usize) -> (u64, Vec<(FrameKind, Vec<u8>)>) {
        if offset < self.head_end() {
            return (offset, copy_from(self.head.iter(), offset, budget));
        }
        let from = offset.max(self.tail_start);
        (from, copy_from(self.chunks.iter(), from, budget))
    }
}

/// Copies up to about `budget` bytes of `chunks` from `from` on; at least one piece when
/// there is one, so a batch always makes progress.
fn copy_from<'a>(
    chunks: impl Iterator<Item = &'a Chunk>,
    from: u64,
    budget: usize,
) -> Vec<(FrameKind, Vec<u8>)> {
    let mut pieces = Vec::new();
    let mut taken = 0;
    for chunk in chunks.skip_while(|c| c.end() <= from) {
        let skip = usize::try_from(from.saturating_sub(chunk.start)).unwrap_or(usize::MAX);
        let data = &chunk.data[skip.min(chunk.data.len())..];
        if taken > 0 && taken + data.len() > budget {
            break;
        }
        taken += data.len();
        pieces.push((chunk.kind, data.to_vec()));
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring_contents(ring: &Ring, offset: u64) -> (u64, Vec<(FrameKind, Vec<u8>)>) {
        ring.read_from(offset, usize::MAX)
    }

    #[test]
    fn ring_keeps_order_merges_small_writes_and_counts_per_stream() {
        let mut ring = Ring::new(1 << 20, true);
        ring.push(FrameKind::Stdout, b"ab");
        ring.push(FrameKind::Stdout, b"c");
        ring.push(FrameKind::Stderr, b"E");
        ring.push(FrameKind::Stdout, b"d");
        assert_eq!(ring.head.len(), 3);
        assert_eq!((ring.start(), ring.end), (0, 5));
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
    fn ring_keeps_the_start_and_drops_the_oldest_after_it_beyond_its_capacity() {
        // A head of one chunk, a tail of three.
        let mut ring = Ring::new(4 * (10 + CHUNK_OVERHEAD), true);
        for (kind, byte) in [
            (FrameKind::Stdout, b'a'),
            (FrameKind::Stderr, b'b'),
            (FrameKind::Stdout, b'c'),
            (FrameKind::Stderr, b'd'),
            (FrameKind::Stdout, b'e'),
        ] {
            ring.push(kind, &[byte; 10]);
        }
        assert_eq!(
            (ring.start(), ring.head_end(), ring.tail_start, ring.end),
            (0, 10, 20, 50)
        );
        assert!(ring.cost <= ring.capacity);
        assert_eq!((ring.stdout_bytes, ring.stderr_bytes), (30, 20));
        // The start is read as it came; asking for what is gone starts at the next byte kept.
        assert_eq!(
            ring_contents(&ring, 3),
            (3, vec![(FrameKind::Stdout, vec![b'a'; 7])])
        );
        let (from, pieces) = ring_contents(&ring, 10);
        assert_eq!(from, 20);
        assert_eq!(pieces[0], (FrameKind::Stdout, vec![b'c'; 10]));
        assert_eq!(pieces.len(), 3);

        // A ring too small for one chunk keeps nothing, and says so.
        let mut tiny = Ring::new(4, true);
        tiny.push(FrameKind::Stdout, b"hello");
        assert_eq!((tiny.start(), tiny.end), (5, 5));
        assert_eq!(ring_contents(&tiny, 0), (5, vec![]));
    }

    #[test]
    fn a_ring_that_does_not_keep_the_start_has_its_whole_capacity_for_the_newest() {
        let mut ring = Ring::new(4 * (10 + CHUNK_OVERHEAD), false);
        for byte in [b'a', b'b', b'c', b'd', b'e'] {
            ring.push(FrameKind::Stdout, &[byte; 10]);
        }
        assert_eq!((ring.start(), ring.end), (0, 50));
        assert_eq!(ring.capacity(), 4 * (10 + CHUNK_OVERHEAD));
        assert!(ring.head.is_empty());
    }

    #[test]
    fn a_write_larger_than_the_head_fills_it_and_the_rest_comes_after() {
        // A head of 1,000 and a tail of 3,000.
        let mut ring = Ring::new(4_000, true);
        ring.push(FrameKind::Stdout, &[b'x'; 5_000]);
        let head = 1_000 - CHUNK_OVERHEAD;
        assert_eq!((ring.start(), ring.head_end(), ring.end), (0, head, 5_000));
        assert_eq!(
            ring_contents(&ring, 0),
            (
                0,
                vec![(
                    FrameKind::Stdout,
                    vec![b'x'; usize::try_from(head).unwrap()]
                )]
            )
        );
        let (from, pieces) = ring_contents(&ring, head);
        assert_eq!(from, ring.tail_start);
        assert!(from > head && ring.cost <= ring.capacity);
        assert_eq!(from + pieces[0].1.len() as u64, 5_000);
    }

    #[test]
    fn a_growing_chunk_loses_its_oldest_bytes_never_its_newest() {
        // A tail of one chunk of 8 bytes, a head too small for any.
        let mut ring = Ring::new(4 * (CHUNK_OVERHEAD + 8) / 3, true);
        ring.push(FrameKind::Stdout, b"aaaa");
        ring.push(FrameKind::Stdout, b"bbbbbbbb");
        assert_eq!((ring.start(), ring.end), (4, 12));
        assert_eq!(
            ring_contents(&ring, 0),
            (4, vec![(FrameKind::Stdout, b"bbbbbbbb".to_vec())])
        );
        assert_eq!(ring.cost, ring.capacity);
    }

    #[test]
    fn ring_reads_are_batched() {
        let mut ring = Ring::new(1 << 20, true);
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
