//! What an exec keeps of one output stream within its limit: the head, forwarded as it comes,
//! and the tail, the newest bytes in a bounded ring sent once the process has exited, so a
//! command that writes more than the limit still shows how it ended (where errors are). The
//! bytes between the two are counted and left out.

use std::collections::VecDeque;

pub(crate) struct HeadTail {
    /// Bytes the head may still take.
    head_room: u64,
    tail: VecDeque<u8>,
    tail_capacity: usize,
    /// Bytes that left the tail ring to make room: the middle, left out.
    omitted: u64,
}

impl HeadTail {
    /// Half of `limit` for the head, the rest for the tail.
    pub(crate) fn new(limit: u64) -> HeadTail {
        let tail_capacity = usize::try_from(limit / 2).unwrap_or(usize::MAX);
        HeadTail {
            head_room: limit - limit / 2,
            tail: VecDeque::new(),
            tail_capacity,
            omitted: 0,
        }
    }

    /// Takes `data`: answers the part to forward now (what still fits the head); the rest
    /// goes to the tail, whose oldest bytes are left out once it is full.
    pub(crate) fn take<'a>(&mut self, data: &'a [u8]) -> &'a [u8] {
        let fits = data
            .len()
            .min(usize::try_from(self.head_room).unwrap_or(usize::MAX));
        self.head_room -= fits as u64;
        let (head, rest) = data.split_at(fits);
        // Only the newest `tail_capacity` bytes of `rest` can stay.
        let dropped_now = rest.len().saturating_sub(self.tail_capacity);
        self.omitted += dropped_now as u64;
        self.tail.extend(&rest[dropped_now..]);
        let over = self.tail.len().saturating_sub(self.tail_capacity);
        self.tail.drain(..over);
        self.omitted += over as u64;
        head
    }

    /// The bytes left out between the head and the tail, and the tail (to send after the
    /// head: right after it when nothing was left out).
    pub(crate) fn finish(&mut self) -> (u64, Vec<u8>) {
        (
            std::mem::take(&mut self.omitted),
            std::mem::take(&mut self.tail).into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(limit: u64, writes: &[&[u8]]) -> (Vec<u8>, u64, Vec<u8>) {
        let mut kept = HeadTail::new(limit);
        let mut head = Vec::new();
        for write in writes {
            head.extend_from_slice(kept.take(write));
        }
        let (omitted, tail) = kept.finish();
        (head, omitted, tail)
    }

    #[test]
    fn what_fits_is_whole_in_order() {
        let (head, omitted, tail) = run(10, &[b"abc", b"defg", b"hij"]);
        assert_eq!(
            (head.as_slice(), omitted, tail.as_slice()),
            (&b"abcde"[..], 0, &b"fghij"[..])
        );
    }

    #[test]
    fn past_the_limit_the_head_and_the_newest_bytes_stay() {
        let (head, omitted, tail) = run(10, &[b"abc", b"defghijklmnop", b"qrstuvwxyz"]);
        assert_eq!(head, b"abcde");
        assert_eq!(tail, b"vwxyz");
        assert_eq!(omitted, 26 - 10);
        // One write far larger than the tail.
        let big = vec![7u8; 100_000];
        let (head, omitted, tail) = run(8, &[&big, b"end!"]);
        assert_eq!(head, [7; 4]);
        assert_eq!((tail.as_slice(), omitted), (&b"end!"[..], 100_004 - 8));
    }

    #[test]
    fn a_zero_limit_keeps_nothing() {
        let (head, omitted, tail) = run(0, &[b"abc"]);
        assert_eq!((head.len(), omitted, tail.len()), (0, 3, 0));
    }
}
