//! A large input as the lean loader reads it: JSON Lines in chunks that end at a line
//! end, a document by position in the file (or in the bytes of stdin). The only reads
//! of a file outside the CLI: the lean loader decides how much of its input to read, and
//! when.

use std::borrow::Cow;
use std::io::Read;

use crate::error::{InputError, IoReason, ReadProblem};
use crate::memory::Pages;
use crate::record::Limits;
use crate::stream::{Fallback, Positional};

/// Reads a path, or stdin for `-`, refusing more than the `--max-input-bytes` limit: a
/// regular file by its size before reading, anything else (a pipe, a device) after
/// reading one byte past the limit, so that memory stays bounded either way. `role`
/// (`input`, `kept file`...) names the file in messages, so that a missing `--kept @FILE`
/// is not taken for a missing input.
pub fn read(path: &str, role: &str, limits: Limits) -> Result<Vec<u8>, InputError> {
    let origin = if path == "-" { "<stdin>" } else { path };
    let cannot = |e: std::io::Error| {
        InputError::invalid(origin, role, ReadProblem::Io(IoReason::reading(path, &e)))
    };
    let cap = limits.max_input_bytes.saturating_add(1);
    let mut bytes = Vec::new();
    if path == "-" {
        let mut stdin = std::io::stdin().lock();
        (&mut stdin)
            .take(cap)
            .read_to_end(&mut bytes)
            .map_err(cannot)?;
    } else {
        let file = std::fs::File::open(path).map_err(cannot)?;
        let meta = file.metadata().map_err(cannot)?;
        if meta.is_file() {
            super::check_size_of(origin, role, meta.len(), limits)?;
            // Sized once, rather than grown by doubling (a failure only means growing).
            let len = usize::try_from(meta.len()).unwrap_or(usize::MAX);
            let _ = bytes.try_reserve_exact(len.saturating_add(1));
        }
        file.take(cap).read_to_end(&mut bytes).map_err(cannot)?;
    }
    super::check_size_of(origin, role, bytes.len() as u64, limits)?;
    Ok(bytes)
}

/// The first and the last `len` bytes of the file at `path` (all of it in both, when it
/// is shorter); `None` when it cannot be read, or when it is not a regular file the lean
/// loader would read (one of [`LEAN_FROM`] bytes or more). A pipe is never read here: what
/// this read took would be gone for the loader that reads it next.
pub(crate) fn ends(path: &str, len: usize) -> Option<(Vec<u8>, Vec<u8>)> {
    use std::io::{Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    let size = meta.len();
    if !meta.is_file() || size < LEAN_FROM as u64 {
        return None;
    }
    let mut start = Vec::new();
    Read::by_ref(&mut file)
        .take(len as u64)
        .read_to_end(&mut start)
        .ok()?;
    file.seek(SeekFrom::Start(size.saturating_sub(len as u64)))
        .ok()?;
    let mut end = Vec::new();
    file.take(len as u64).read_to_end(&mut end).ok()?;
    Some((start, end))
}

/// Stores of up to this many bytes are read once and held in transcript mode, for both
/// of its passes; a larger one is read twice rather than held (memory stays bounded).
pub(crate) const HOLD_UP_TO: u64 = 32 << 20;

/// The whole regular file at `path`, when the lean loader would read it (from
/// [`LEAN_FROM`] bytes, within `--max-input-bytes`) and it is no larger than `most`
/// bytes; `None` otherwise, or when it cannot be read. What it gives is what was read,
/// even if the file changed meanwhile: a caller judges these bytes, never the file again.
pub(crate) fn hold(path: &str, limits: Limits, most: u64) -> Option<Pages> {
    let mut file = std::fs::File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    let size = meta.len();
    let most = most.min(limits.max_input_bytes);
    if !meta.is_file() || size < LEAN_FROM as u64 || size > most {
        return None;
    }
    // One byte more than the file had: a file that fills it grew while it was read.
    let mut held = Pages::new(usize::try_from(size).ok()?.checked_add(1)?)?;
    loop {
        match file.read(held.spare()) {
            Ok(0) => break,
            Ok(n) => held.filled(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
        if held.spare().is_empty() {
            return None;
        }
    }
    (held.len() as u64 <= most && held.len() >= LEAN_FROM).then_some(held)
}

/// What tells a file read twice (two passes of the lean loader) from another: it must
/// have the same stamp after the second read as before the first, or the passes may have
/// read two different files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    len: u64,
    modified: std::time::SystemTime,
    /// Where the system has them, the file's device and inode (another file put in its
    /// place has others) and the time of its last change of any kind, which no one can
    /// set back (a copy that keeps the length and modification time still changes it).
    #[cfg(unix)]
    node: (u64, u64, i64, i64),
}

/// The [`Stamp`] of the file at `path`; `None` when it cannot be read.
pub(crate) fn stamp(path: &str) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let node = {
        use std::os::unix::fs::MetadataExt;
        (m.dev(), m.ino(), m.ctime(), m.ctime_nsec())
    };
    Some(Stamp {
        len: m.len(),
        modified: m.modified().ok()?,
        #[cfg(unix)]
        node,
    })
}

/// Why a read or a write failed, as messages say it.
pub fn io_reason(e: &std::io::Error) -> String {
    IoReason::from(e).to_string()
}

/// Bytes read per chunk by the lean path.
pub(crate) const CHUNK: usize = 1 << 18;

/// Inputs smaller than this take the exact path: start-up dominates there, and threads
/// would only add to it.
pub(crate) const LEAN_FROM: usize = 1 << 20;

/// The input in chunks that end at a line end (the last may not), for the lean loader.
pub(crate) struct Chunks<'a> {
    pub(crate) source: ChunkSource<'a>,
    pub(crate) carry: Vec<u8>,
    /// Bytes a file may still yield under `--max-input-bytes`; past it (a file that grew
    /// after its size was checked) the lean path falls back, and the exact path refuses.
    pub(crate) left: u64,
}

pub(crate) enum ChunkSource<'a> {
    File(std::fs::File),
    Bytes(&'a [u8]),
}

impl<'a> Iterator for Chunks<'a> {
    type Item = Result<Cow<'a, [u8]>, Fallback>;

    fn next(&mut self) -> Option<Self::Item> {
        let file = match &mut self.source {
            // Bytes already held are lent, not copied: a chunk of them runs to the last
            // line end within `CHUNK` bytes (or, for a longer line, to its end).
            ChunkSource::Bytes(rest) => {
                if rest.is_empty() {
                    return None;
                }
                let window = rest.get(..CHUNK).unwrap_or(rest);
                let end = match memchr::memrchr(b'\n', window) {
                    Some(end) if window.len() < rest.len() => end + 1,
                    Some(_) => rest.len(),
                    None => memchr::memchr(b'\n', rest.get(CHUNK..).unwrap_or_default())
                        .map_or(rest.len(), |n| CHUNK + n + 1),
                };
                let (now, later) = rest.split_at(end.min(rest.len()));
                *rest = later;
                return Some(Ok(Cow::Borrowed(now)));
            }
            ChunkSource::File(file) => file,
        };
        let mut buf = Vec::new();
        buf.append(&mut self.carry);
        // A chunk ends at a line end: while what was read holds none (a line longer than a
        // chunk), read on. (The carry holds none: it is what followed the last one.) A
        // line cut in two would be read as two lines, which the exact loader never does.
        let eof = loop {
            let from = buf.len();
            // read_to_end fills spare capacity without zeroing it first.
            buf.reserve(CHUNK);
            let n = match Read::by_ref(&mut *file)
                .take(CHUNK as u64)
                .read_to_end(&mut buf)
            {
                Ok(n) => n,
                Err(_) => return Some(Err(Fallback)),
            };
            match self.left.checked_sub(n as u64) {
                Some(left) => self.left = left,
                None => return Some(Err(Fallback)),
            }
            if n < CHUNK {
                break true;
            }
            if memchr::memchr(b'\n', buf.get(from..).unwrap_or_default()).is_some() {
                break false;
            }
        };
        if buf.is_empty() {
            return None;
        }
        if !eof && let Some(end) = buf.iter().rposition(|&b| b == b'\n') {
            self.carry
                .extend_from_slice(buf.get(end + 1..).unwrap_or_default());
            buf.truncate(end + 1);
        }
        Some(Ok(Cow::Owned(buf)))
    }
}

/// The input (`stdin`'s bytes, else the file at `path`) as its first chunk and the rest,
/// for the lean loader, and the same input read by position (for a document); `None`
/// when it is too small or cannot be opened.
pub(crate) fn lean_chunks<'a>(
    path: &str,
    stdin: Option<&'a [u8]>,
    limits: Limits,
) -> Option<(Cow<'a, [u8]>, Chunks<'a>, Whole<'a>)> {
    let (source, whole): (ChunkSource<'a>, Whole<'a>) = match stdin {
        Some(bytes) if bytes.len() >= LEAN_FROM => (ChunkSource::Bytes(bytes), Box::new(bytes)),
        Some(_) => return None,
        None => {
            let file = std::fs::File::open(path).ok()?;
            let size = file.metadata().ok()?.len();
            // Over the size limit: the exact path refuses it.
            if size < LEAN_FROM as u64 || size > limits.max_input_bytes {
                return None;
            }
            // INVARIANT: the two handles share one file offset. The lean loader reads
            // either the chunks (JSON Lines) or, by position, the whole (a document),
            // never both after the first chunk.
            let at = FileAt {
                file: file.try_clone().ok()?,
                size,
                spare: None,
            };
            (ChunkSource::File(file), Box::new(at))
        }
    };
    let mut chunks = Chunks {
        source,
        carry: Vec::new(),
        left: limits.max_input_bytes,
    };
    let first = chunks.next()?.ok()?;
    Some((first, chunks, whole))
}

/// An input read by position, for the lean loader's document path.
pub(crate) type Whole<'a> = Box<dyn Positional<'a> + 'a>;

/// A file read by position (seek, then read), as long as its size stays what it was.
pub(crate) struct FileAt {
    pub(crate) file: std::fs::File,
    pub(crate) size: u64,
    /// A buffer given back, for the next read.
    pub(crate) spare: Option<Vec<u8>>,
}

impl<'a> Positional<'a> for FileAt {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_at(&mut self, at: u64, len: usize) -> Result<Cow<'a, [u8]>, Fallback> {
        use std::io::{Seek, SeekFrom};
        let end = at.checked_add(len as u64).ok_or(Fallback)?;
        if end > self.size {
            return Err(Fallback);
        }
        self.file.seek(SeekFrom::Start(at)).map_err(|_| Fallback)?;
        let mut buf = self.spare.take().unwrap_or_default();
        // read_to_end fills spare capacity without zeroing it first; one byte more than
        // asked for at the end tells a file that grew.
        buf.reserve(len.saturating_add(1));
        let more = u64::from(end == self.size);
        Read::by_ref(&mut self.file)
            .take(len as u64 + more)
            .read_to_end(&mut buf)
            .map_err(|_| Fallback)?;
        if buf.len() != len {
            return Err(Fallback);
        }
        Ok(Cow::Owned(buf))
    }

    fn give_back(&mut self, buf: Vec<u8>) {
        self.spare = Some(buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held bytes are lent, a file's are read; either way a chunk ends at a line end (a
    /// line longer than a chunk is one chunk, not cut in two).
    #[test]
    fn held_bytes_are_lent_in_chunks_that_end_at_line_ends() {
        // A line of `len` bytes, its line end included.
        let line =
            |n: usize, len: usize| format!("{n}{}\n", "x".repeat(len - 1 - n.to_string().len()));
        let mut inputs = Vec::new();
        // Short lines, a line longer than a chunk, a line end right at a chunk's end, and
        // no last line end.
        inputs.push((0..20_000).map(|n| line(n, 40)).collect::<String>());
        inputs.push(format!(
            "{}{}{}",
            line(1, 10),
            line(2, CHUNK * 2 + 7),
            line(3, 10)
        ));
        inputs.push(format!("{}{}", line(1, CHUNK), line(2, 5)));
        inputs.push(format!("{}{}", line(1, CHUNK - 1), "x".repeat(CHUNK + 3)));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        for (input, from_file) in inputs.iter().flat_map(|i| [(i, false), (i, true)]) {
            let bytes = input.as_bytes();
            std::fs::write(&path, bytes).unwrap();
            let source = if from_file {
                ChunkSource::File(std::fs::File::open(&path).unwrap())
            } else {
                ChunkSource::Bytes(bytes)
            };
            let chunks = Chunks {
                source,
                carry: Vec::new(),
                left: u64::MAX,
            };
            let mut joined = Vec::new();
            let mut count = 0;
            for chunk in chunks {
                let chunk = match chunk.unwrap() {
                    Cow::Borrowed(_) if from_file => panic!("a file's chunk is borrowed"),
                    Cow::Owned(_) if !from_file => panic!("held bytes are copied"),
                    chunk => chunk,
                };
                let chunk = &*chunk;
                joined.extend_from_slice(chunk);
                count += 1;
                // Every chunk but the last ends at a line end.
                assert!(chunk.ends_with(b"\n") || joined.len() == bytes.len());
                assert!(!chunk.is_empty());
                // Longer than a chunk only to hold one line whole (a file's: and what was
                // read past that line's end, another chunk at most).
                let one_line = memchr::memchr(b'\n', chunk).is_none_or(|n| n + 1 == chunk.len());
                let longest = chunk.split(|&b| b == b'\n').map(<[u8]>::len).max();
                let most = if from_file {
                    CHUNK + longest.unwrap_or(0)
                } else {
                    CHUNK
                };
                assert!(chunk.len() <= most || one_line);
            }
            assert_eq!(joined, bytes);
            assert!(count > 1);
        }
    }

    /// A held file is its bytes, whole (at a huge page's boundary, where huge pages can
    /// back them), or nothing: too small for the lean loader, larger than the most it
    /// may hold, or not a regular file.
    #[test]
    fn a_held_file_is_its_bytes_whole_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let path = path.to_str().unwrap();
        let limits = Limits::default();
        for size in [
            LEAN_FROM,
            LEAN_FROM + 1,
            (2 << 20) - 1,
            2 << 20,
            (2 << 20) + 1,
            (6 << 20) + 17,
        ] {
            let bytes: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            std::fs::write(path, &bytes).unwrap();
            let held = hold(path, limits, u64::MAX).unwrap();
            assert_eq!(&*held, &bytes[..], "{size} bytes");
            assert_eq!(held.as_ptr() as usize % (2 << 20), 0);
            assert!(hold(path, limits, size as u64 - 1).is_none());
            assert!(hold(path, limits, size as u64).is_some());
        }
        std::fs::write(path, vec![b'x'; LEAN_FROM - 1]).unwrap();
        assert!(hold(path, limits, u64::MAX).is_none());
        assert!(hold(dir.path().to_str().unwrap(), limits, u64::MAX).is_none());
        assert!(hold("/dev/zero", limits, u64::MAX).is_none());
    }

    #[test]
    fn a_file_read_by_position_must_keep_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let open = |size| FileAt {
            file: std::fs::File::open(&path).unwrap(),
            size,
            spare: None,
        };
        let mut f = open(10);
        assert_eq!(&*f.read_at(2, 3).unwrap(), b"234");
        assert_eq!(&*f.read_at(0, 10).unwrap(), b"0123456789");
        assert_eq!(&*f.read_at(7, 3).unwrap(), b"789");
        assert!(f.read_at(8, 3).is_err());
        // Grown past the size it had: a read up to that size sees the byte after.
        let mut grown = open(8);
        assert_eq!(&*grown.read_at(0, 7).unwrap(), b"0123456");
        assert!(grown.read_at(4, 4).is_err());
        // Shrunk: the bytes are not there.
        assert!(open(12).read_at(6, 6).is_err());
    }

    #[test]
    fn a_buffer_given_back_is_read_into_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let mut f = FileAt {
            file: std::fs::File::open(&path).unwrap(),
            size: 10,
            spare: None,
        };
        let buf = Vec::with_capacity(4096);
        let at = buf.as_ptr();
        f.give_back(buf);
        let Cow::Owned(read) = f.read_at(2, 3).unwrap() else {
            panic!("a file read is owned");
        };
        assert_eq!((read.as_slice(), read.as_ptr()), (&b"234"[..], at));
        // Taken: the next read gets a buffer of its own.
        assert_ne!(f.read_at(0, 1).unwrap().as_ptr(), at);
    }
}
