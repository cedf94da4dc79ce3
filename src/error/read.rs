//! Why a file or a stream could not be read (the loaders' reads and the CLI's).

use thiserror::Error;

/// Why a file or a stream could not be read in full.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReadProblem {
    /// The read failed.
    #[error("cannot read: {0}")]
    Io(IoReason),
    /// More bytes than `--max-input-bytes`: the limit.
    #[error("larger than the input limit of {0} bytes (raise it with --max-input-bytes)")]
    TooLarge(u64),
    /// A flag's `@FILE` that is not UTF-8.
    #[error("not valid UTF-8")]
    NotUtf8,
    /// A `--context-file` that is not UTF-8.
    #[error("the file is not valid UTF-8 text")]
    NotUtf8Text,
}

/// Why a read failed, as messages word it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IoReason {
    /// No such file.
    #[error("no such file")]
    NotFound,
    /// No such file at a relative path, read from the working directory (a hook's is the
    /// harness's, which may not be the one the path was written for). The directory is
    /// not named: a report holds no path its command line did not give.
    #[error(
        "no such file in the working directory, which a relative path is read from (give the full path)"
    )]
    NotFoundRelative,
    /// Permission denied.
    #[error("permission denied")]
    PermissionDenied,
    /// A folder on the way to it is a file.
    #[error("a part of its path is a file, not a folder")]
    NotADirectory,
    /// Any other failure: the system's own words, lowercased.
    #[error("{0}")]
    Other(String),
}

impl IoReason {
    /// Why reading the file at `path` failed: as [`IoReason::from`] words `e`, and for a
    /// relative path that names no file, that it was read from the working directory.
    pub fn reading(path: &str, e: &std::io::Error) -> IoReason {
        match IoReason::from(e) {
            IoReason::NotFound if std::path::Path::new(path).is_relative() => {
                IoReason::NotFoundRelative
            }
            reason => reason,
        }
    }
}

impl From<&std::io::Error> for IoReason {
    fn from(e: &std::io::Error) -> IoReason {
        match e.kind() {
            std::io::ErrorKind::NotFound => IoReason::NotFound,
            std::io::ErrorKind::PermissionDenied => IoReason::PermissionDenied,
            std::io::ErrorKind::NotADirectory => IoReason::NotADirectory,
            // The system's words, or the kind of failure where it gives none.
            _ => match e.to_string().to_lowercase() {
                words if words.is_empty() => {
                    IoReason::Other(format!("{:?}", e.kind()).to_lowercase())
                }
                words => IoReason::Other(words),
            },
        }
    }
}
