//! The input as the lean loader reads it: JSON Lines in chunks that end at a line end, a
//! document by position in the file (or in the bytes of stdin).

use super::*;

/// Lets go of what a one-shot command built, without freeing it: the process ends once
/// its report is written, and freeing a large store's and report's many small
/// allocations (made on the loader's threads) would cost milliseconds for nothing. Only
/// for values built once per process.
pub(super) fn exiting_with<T>(built: T) {
    std::mem::forget(built);
}

/// A load by the lean loader for precheck or pin (`purpose` given the `--tools` flag's
/// tools, if any), when it can decide. `None` sends the caller to the exact path.
pub(super) fn lean_load(
    path: &str,
    stdin: Option<&[u8]>,
    kept: Option<&FlagText>,
    tools_flag: Option<&Result<FlagText, InputError>>,
    purpose: fn(Option<Vec<Tool>>) -> Purpose,
) -> Option<input::LeanFor> {
    lean_load_then(path, stdin, kept, tools_flag, purpose, Ok)
}

/// [`lean_load`], handing the load to `then` while the loader's last checks run (see
/// [`input::load_lean_with`]).
pub(super) fn lean_load_then<R>(
    path: &str,
    stdin: Option<&[u8]>,
    kept: Option<&FlagText>,
    tools_flag: Option<&Result<FlagText, InputError>>,
    purpose: fn(Option<Vec<Tool>>) -> Purpose,
    then: impl FnOnce(input::LeanFor) -> Result<R, Fallback>,
) -> Option<R> {
    let tools = match tools_flag {
        Some(Ok((o, text, _))) => Some(input::tools_from_flag(o, text).ok()?),
        Some(Err(_)) => return None,
        None => None,
    };
    let (first, chunks, mut whole) = lean_chunks(path, stdin)?;
    input::load_lean_with(
        origin_name(path),
        first,
        chunks,
        Some(&mut *whole),
        kept.map(|(_, text, from_file)| (text.as_str(), *from_file)),
        purpose(tools),
        limits(),
        then,
    )
    .ok()
}

/// Bytes read per chunk by the lean path.
pub(super) const CHUNK: usize = 1 << 18;

/// Inputs smaller than this take the exact path: start-up dominates there, and threads
/// would only add to it.
pub(super) const LEAN_FROM: usize = 1 << 20;

/// The input in chunks that end at a line end (the last may not), for the lean loader.
pub(super) struct Chunks<'a> {
    pub(super) source: ChunkSource<'a>,
    pub(super) carry: Vec<u8>,
    /// Bytes a file may still yield under `--max-input-bytes`; past it (a file that grew
    /// after its size was checked) the lean path falls back, and the exact path refuses.
    pub(super) left: u64,
}

pub(super) enum ChunkSource<'a> {
    File(std::fs::File),
    Bytes(&'a [u8]),
}

impl Iterator for Chunks<'_> {
    type Item = Result<Vec<u8>, Fallback>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut buf = crate::stream::spare_buffer();
        buf.append(&mut self.carry);
        let eof = match &mut self.source {
            ChunkSource::Bytes(rest) => {
                let n = CHUNK.min(rest.len());
                let (now, later) = rest.split_at(n);
                buf.extend_from_slice(now);
                *rest = later;
                later.is_empty()
            }
            ChunkSource::File(file) => {
                // read_to_end fills spare capacity without zeroing it first.
                buf.reserve(CHUNK);
                match Read::by_ref(file).take(CHUNK as u64).read_to_end(&mut buf) {
                    Ok(n) => match self.left.checked_sub(n as u64) {
                        Some(left) => {
                            self.left = left;
                            n < CHUNK
                        }
                        None => return Some(Err(Fallback)),
                    },
                    Err(_) => return Some(Err(Fallback)),
                }
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
        Some(Ok(buf))
    }
}

/// The input (`stdin`'s bytes, else the file at `path`) as its first chunk and the rest,
/// for the lean loader, and the same input read by position (for a document); `None`
/// when it is too small or cannot be opened.
pub(super) fn lean_chunks<'a>(
    path: &str,
    stdin: Option<&'a [u8]>,
) -> Option<(Vec<u8>, Chunks<'a>, Whole<'a>)> {
    let (source, whole): (ChunkSource<'a>, Whole<'a>) = match stdin {
        Some(bytes) if bytes.len() >= LEAN_FROM => (ChunkSource::Bytes(bytes), Box::new(bytes)),
        Some(_) => return None,
        None => {
            let file = std::fs::File::open(path).ok()?;
            let size = file.metadata().ok()?.len();
            // Over the size limit: the exact path refuses it.
            if size < LEAN_FROM as u64 || size > limits().max_input_bytes {
                return None;
            }
            // INVARIANT: the two handles share one file offset. The lean loader reads
            // either the chunks (JSON Lines) or, by position, the whole (a document),
            // never both after the first chunk.
            let at = FileAt {
                file: file.try_clone().ok()?,
                size,
            };
            (ChunkSource::File(file), Box::new(at))
        }
    };
    let mut chunks = Chunks {
        source,
        carry: Vec::new(),
        left: limits().max_input_bytes,
    };
    let first = chunks.next()?.ok()?;
    Some((first, chunks, whole))
}

/// An input read by position, for the lean loader's document path.
pub(super) type Whole<'a> = Box<dyn Positional<'a> + 'a>;

/// A file read by position (seek, then read), as long as its size stays what it was.
pub(super) struct FileAt {
    pub(super) file: std::fs::File,
    pub(super) size: u64,
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
        let mut buf = crate::stream::spare_buffer();
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
}
