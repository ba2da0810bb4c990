//! The bounds both sides hold each other to: the largest frames of each kind and the most
//! entries an archive may carry.

/// The largest payload a frame may carry; readers refuse larger frames before allocating.
pub const MAX_FRAME_LEN: usize = 1 << 20;
/// The largest stdin frame the service sends.
pub const STDIN_CHUNK_LEN: usize = 64 * 1024;
/// The largest stdout/stderr frame the agent sends.
pub const OUTPUT_CHUNK_LEN: usize = 32 * 1024;
/// The largest frame of file content either side sends.
pub const FILE_CHUNK_LEN: usize = 64 * 1024;
/// The most entries an archive may hold, either way.
pub const MAX_ARCHIVE_ENTRIES: u64 = 100_000;
