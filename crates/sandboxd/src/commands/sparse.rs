//! Writing a downloaded file sparse, so that its all-zero blocks take no room on this host.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};

/// The blocks a [`SparseWriter`] tests for zeros: the page and usual filesystem block size.
const SPARSE_BLOCK: usize = 4096;

/// Writes a file sparse: each aligned block of [`SPARSE_BLOCK`] zero bytes is skipped over
/// instead of written, leaving a hole, and [`finish`](Self::finish) sets the final length, so
/// a trailing hole counts too. Reads back the same bytes as a plain write.
pub struct SparseWriter {
    file: File,
    /// Bytes of the current block not yet written or skipped; never a full block.
    block: Vec<u8>,
    /// Bytes taken so far: the file's length once finished.
    len: u64,
    /// Where the file's cursor is.
    position: u64,
}

impl SparseWriter {
    pub fn new(file: File) -> SparseWriter {
        SparseWriter {
            file,
            block: Vec::with_capacity(SPARSE_BLOCK),
            len: 0,
            position: 0,
        }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn write_all(&mut self, mut data: &[u8]) -> io::Result<()> {
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
    pub fn finish(mut self) -> io::Result<File> {
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
