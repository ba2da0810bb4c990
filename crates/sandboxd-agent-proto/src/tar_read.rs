//! Reading a tar entry by entry, bounded, for whoever extracts one it cannot trust (the agent
//! an upload, the command line a download): the tar crate parses each header's fields, this
//! reader keeps the stream's framing itself so nothing in the archive can make it buffer more
//! than a long name or a pax record, and it refuses every kind of entry that extraction does
//! not make (hard links, devices, FIFOs, sparse files and unknown kinds) by its header alone.

use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

const BLOCK: usize = 512;
/// Linux's PATH_MAX: a longer name or link target could not be made anyway.
pub const MAX_NAME_LEN: usize = 4096;
/// A pax header holds a few records of a line each.
const MAX_PAX_LEN: u64 = 64 * 1024;
/// Blocks of padding accepted after the end marker (tar pads to records of 10 KiB).
const MAX_TRAILING_BLOCKS: u32 = 64;
/// Extension headers (long names, pax records) before one entry: a long name, a long link
/// and a pax header each, and a global pax header.
const MAX_EXTENSIONS: u32 = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
}

/// An entry's header; a file's contents follow, to be read with [`TarReader::contents`].
#[derive(Debug)]
pub struct Entry {
    pub kind: Kind,
    pub name: Vec<u8>,
    pub link: Vec<u8>,
    pub mode: u32,
    pub mtime: u64,
    pub size: u64,
}

/// Why the archive cannot be read: it is malformed or holds something refused (`Invalid`),
/// or reading the stream failed (`Io`).
#[derive(Debug)]
pub enum ReadError {
    Invalid(String),
    Io(io::Error),
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::UnexpectedEof => {
                ReadError::Invalid("the archive ends in the middle of an entry".into())
            }
            _ => ReadError::Io(e),
        }
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Invalid(message) => f.write_str(message),
            ReadError::Io(e) => write!(f, "reading the archive failed: {e}"),
        }
    }
}

impl std::error::Error for ReadError {}

impl Entry {
    /// The name as a relative path of plain components, `None` for the top itself (`.`);
    /// a name with `..` or an absolute one is refused.
    pub fn relative_path(&self) -> Result<Option<PathBuf>, ReadError> {
        let shown = String::from_utf8_lossy(&self.name);
        let mut relative = PathBuf::new();
        for component in Path::new(OsStr::from_bytes(&self.name)).components() {
            match component {
                Component::Normal(part) => relative.push(part),
                Component::CurDir => {}
                Component::ParentDir => {
                    return invalid(format!("{shown:?} in the archive climbs out with `..`"))
                }
                Component::RootDir | Component::Prefix(_) => {
                    return invalid(format!("{shown:?} in the archive is an absolute name"))
                }
            }
        }
        Ok((!relative.as_os_str().is_empty()).then_some(relative))
    }
}

fn invalid<T>(message: impl Into<String>) -> Result<T, ReadError> {
    Err(ReadError::Invalid(message.into()))
}

pub struct TarReader<R> {
    stream: R,
    /// Content bytes of the current entry not yet read, and its padding after them.
    unread: u64,
    padding: u64,
}

impl<R: Read> TarReader<R> {
    pub fn new(stream: R) -> Self {
        Self {
            stream,
            unread: 0,
            padding: 0,
        }
    }

    /// The next entry, or `None` after the end marker and its padding. The previous entry's
    /// contents must have been read.
    pub fn next_entry(&mut self) -> Result<Option<Entry>, ReadError> {
        debug_assert_eq!(
            self.unread, 0,
            "the previous entry's contents were not read"
        );
        self.skip_padding()?;
        let mut long_name = None;
        let mut long_link = None;
        let mut pax_size = None;
        let mut extensions = 0;
        loop {
            if extensions > MAX_EXTENSIONS {
                return invalid("an entry has too many extension headers");
            }
            extensions += 1;
            let mut block = [0u8; BLOCK];
            if !self.read_block(&mut block)? {
                return invalid("the archive ends without its end marker (it was cut short?)");
            }
            if block.iter().all(|&b| b == 0) {
                self.finish_trailer()?;
                return Ok(None);
            }
            if !checksum_matches(&block) {
                return invalid("an entry's header is corrupt (its checksum does not match)");
            }
            let header = tar::Header::from_byte_slice(&block);
            let size = header
                .entry_size()
                .or_else(|_| invalid("an entry's size is malformed"))?;
            let entry_type = header.entry_type();
            let kind = match entry_type {
                tar::EntryType::Regular | tar::EntryType::Continuous => Kind::File,
                tar::EntryType::Directory => Kind::Dir,
                tar::EntryType::Symlink => Kind::Symlink,
                tar::EntryType::GNULongName | tar::EntryType::GNULongLink => {
                    if size > MAX_NAME_LEN as u64 + 1 {
                        return invalid(format!(
                            "a name in the archive is longer than {MAX_NAME_LEN} bytes"
                        ));
                    }
                    let mut name = self.read_meta(size)?;
                    while name.last() == Some(&0) {
                        name.pop();
                    }
                    let slot = if entry_type == tar::EntryType::GNULongName {
                        &mut long_name
                    } else {
                        &mut long_link
                    };
                    if slot.replace(name).is_some() {
                        return invalid("two long names describe the same entry");
                    }
                    continue;
                }
                tar::EntryType::XHeader | tar::EntryType::XGlobalHeader => {
                    if size > MAX_PAX_LEN {
                        return invalid(format!(
                            "a pax header in the archive is over {MAX_PAX_LEN} bytes"
                        ));
                    }
                    let records = self.read_meta(size)?;
                    // Global records would apply to every entry after; none of them is used.
                    if entry_type == tar::EntryType::XHeader {
                        for record in tar::PaxExtensions::new(&records) {
                            let record =
                                record.or_else(|_| invalid("a pax record is malformed"))?;
                            match record.key_bytes() {
                                b"path" => long_name = Some(record.value_bytes().to_vec()),
                                b"linkpath" => long_link = Some(record.value_bytes().to_vec()),
                                b"size" => {
                                    let size = record
                                        .value()
                                        .ok()
                                        .and_then(|v| v.parse::<u64>().ok())
                                        .map_or_else(|| invalid("a pax size is malformed"), Ok)?;
                                    pax_size = Some(size);
                                }
                                _ => {}
                            }
                        }
                    }
                    continue;
                }
                tar::EntryType::Link => {
                    return invalid("the archive holds a hard link, which is not extracted")
                }
                tar::EntryType::Char | tar::EntryType::Block | tar::EntryType::Fifo => {
                    return invalid("the archive holds a device or a FIFO, which is not extracted")
                }
                tar::EntryType::GNUSparse => {
                    return invalid("the archive holds a sparse file, which is not extracted")
                }
                other => {
                    return invalid(format!(
                        "the archive holds an entry of type {:?}, which is not extracted",
                        other.as_byte() as char
                    ))
                }
            };
            let size = pax_size.unwrap_or(size);
            if kind != Kind::File && size != 0 {
                return invalid("a directory or symlink entry carries contents");
            }
            let name = long_name.unwrap_or_else(|| header.path_bytes().into_owned());
            let link = long_link
                .or_else(|| header.link_name_bytes().map(|l| l.into_owned()))
                .unwrap_or_default();
            if name.len() > MAX_NAME_LEN || link.len() > MAX_NAME_LEN {
                return invalid(format!(
                    "a name in the archive is longer than {MAX_NAME_LEN} bytes"
                ));
            }
            self.unread = size;
            self.padding = padding(size);
            return Ok(Some(Entry {
                kind,
                name,
                link,
                mode: header.mode().unwrap_or(0o644),
                mtime: header.mtime().unwrap_or(0),
                size,
            }));
        }
    }

    /// The current entry's contents, up to its size.
    pub fn contents(&mut self) -> impl Read + '_ {
        Contents { reader: self }
    }

    /// A metadata entry's data (a long name or pax records), already bounded by the caller.
    fn read_meta(&mut self, size: u64) -> Result<Vec<u8>, ReadError> {
        let size = usize::try_from(size)
            .map_err(|_| ReadError::Invalid("a metadata entry is too large".into()))?;
        let mut data = vec![0; size];
        self.stream.read_exact(&mut data)?;
        self.padding = padding(data.len() as u64);
        self.skip_padding()?;
        Ok(data)
    }

    fn skip_padding(&mut self) -> Result<(), ReadError> {
        let mut pad = [0u8; BLOCK];
        // Below BLOCK, as padding() makes it.
        let len = usize::try_from(self.padding).map_or(BLOCK, |len| len.min(BLOCK));
        self.stream.read_exact(&mut pad[..len])?;
        self.padding = 0;
        Ok(())
    }

    /// Reads a block; `false` when the stream ended before its first byte.
    fn read_block(&mut self, block: &mut [u8; BLOCK]) -> Result<bool, ReadError> {
        let mut filled = 0;
        while filled < BLOCK {
            match self.stream.read(&mut block[filled..]) {
                Ok(0) if filled == 0 => return Ok(false),
                Ok(0) => return invalid("the archive ends in the middle of a header"),
                Ok(read) => filled += read,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(true)
    }

    /// After the first zero block: the rest of the stream must be zero blocks, a few.
    fn finish_trailer(&mut self) -> Result<(), ReadError> {
        let mut block = [0u8; BLOCK];
        for _ in 0..MAX_TRAILING_BLOCKS {
            if !self.read_block(&mut block)? {
                return Ok(());
            }
            if block.iter().any(|&b| b != 0) {
                return invalid("the archive has data after its end marker");
            }
        }
        invalid("the archive has too much padding after its end marker")
    }
}

struct Contents<'a, R> {
    reader: &'a mut TarReader<R>,
}

impl<R: Read> Read for Contents<'_, R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let reader = &mut *self.reader;
        let room = usize::try_from(reader.unread)
            .unwrap_or(usize::MAX)
            .min(buffer.len());
        if room == 0 {
            return Ok(0);
        }
        let read = reader.stream.read(&mut buffer[..room])?;
        if read == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        reader.unread -= read as u64;
        Ok(read)
    }
}

fn padding(size: u64) -> u64 {
    (BLOCK as u64 - size % BLOCK as u64) % BLOCK as u64
}

/// The header checksum: the sum of its bytes with the checksum field counted as spaces.
fn checksum_matches(block: &[u8; BLOCK]) -> bool {
    let header = tar::Header::from_byte_slice(block);
    let Ok(recorded) = header.cksum() else {
        return false;
    };
    let computed: u32 = block
        .iter()
        .enumerate()
        .map(|(i, &b)| if (148..156).contains(&i) { b' ' } else { b } as u32)
        .sum();
    recorded == computed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(tar: &[u8]) -> Result<Vec<(Kind, String, Vec<u8>)>, ReadError> {
        let mut reader = TarReader::new(tar);
        let mut found = Vec::new();
        while let Some(entry) = reader.next_entry()? {
            let mut contents = Vec::new();
            reader.contents().read_to_end(&mut contents)?;
            found.push((entry.kind, String::from_utf8(entry.name).unwrap(), contents));
        }
        Ok(found)
    }

    fn header(kind: tar::EntryType, size: u64) -> tar::Header {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_size(size);
        header.set_mode(0o644);
        header
    }

    #[test]
    fn long_names_and_pax_records_are_read() {
        let mut builder = tar::Builder::new(Vec::new());
        let long = format!("{}/file", "d".repeat(300));
        builder
            .append_data(&mut header(tar::EntryType::Regular, 3), &long, &b"abc"[..])
            .unwrap();
        let mut pax = tar::Builder::new(Vec::new());
        pax.append_pax_extensions([("path", &b"pax-name"[..])])
            .unwrap();
        pax.append_data(&mut header(tar::EntryType::Regular, 1), "short", &b"x"[..])
            .unwrap();
        let mut tar = builder.into_inner().unwrap();
        // Two archives back to back: the first's end marker ends the reading.
        let found = entries(&tar).unwrap();
        assert_eq!(found, [(Kind::File, long.clone(), b"abc".to_vec())]);
        tar = pax.into_inner().unwrap();
        assert_eq!(
            entries(&tar).unwrap(),
            [(Kind::File, "pax-name".to_string(), b"x".to_vec())]
        );
    }

    #[test]
    fn refused_kinds_cut_archives_and_corrupt_headers_are_errors() {
        let refused = |kind| {
            let mut builder = tar::Builder::new(Vec::new());
            let mut h = header(kind, 0);
            builder.append_data(&mut h, "x", io::empty()).unwrap();
            match entries(&builder.into_inner().unwrap()) {
                Err(ReadError::Invalid(message)) => message,
                other => panic!("{other:?}"),
            }
        };
        assert!(refused(tar::EntryType::Link).contains("hard link"));
        assert!(refused(tar::EntryType::Char).contains("device"));
        assert!(refused(tar::EntryType::Fifo).contains("FIFO"));

        let mut builder = tar::Builder::new(Vec::new());
        builder
            .append_data(
                &mut header(tar::EntryType::Regular, 600),
                "f",
                &[7u8; 600][..],
            )
            .unwrap();
        let tar = builder.into_inner().unwrap();
        for cut in [700, 1536] {
            assert!(
                matches!(entries(&tar[..cut]), Err(ReadError::Invalid(_))),
                "{cut}"
            );
        }
        let mut corrupt = tar.clone();
        corrupt[10] ^= 1;
        assert!(matches!(entries(&corrupt), Err(ReadError::Invalid(_))));
        assert_eq!(entries(&tar).unwrap().len(), 1);
    }

    #[test]
    fn oversized_metadata_is_refused_before_it_is_read() {
        let mut h = header(tar::EntryType::GNULongName, 1 << 40);
        h.set_cksum();
        let mut tar = h.as_bytes().to_vec();
        tar.extend([0u8; 1024]);
        assert!(matches!(entries(&tar), Err(ReadError::Invalid(m)) if m.contains("longer")));
    }
}
