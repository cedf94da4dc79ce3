//! The one error type for input the gate cannot accept.
//!
//! Every message is one line, names where the problem is (file and line:col for JSON
//! syntax, the record id for a bad record, the flag or key otherwise) and what to fix.

use thiserror::Error;

/// Input the gate refuses: ERROR `invalid-input`, exit 2.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InputError {
    /// Malformed JSON at a position.
    #[error("{origin}:{line}:{column}: {message}")]
    Syntax {
        /// The file (or `<stdin>`, or a flag name) the JSON came from.
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// Well-formed JSON that breaks a rule of the input format.
    #[error("{origin}: {place}: {message}")]
    At {
        /// The file, `<stdin>` or flag the value came from.
        origin: String,
        /// Where in it: a record id, a key, a line.
        place: String,
        /// What is wrong.
        message: String,
    },
}

impl InputError {
    /// An error at a named place in a named origin.
    pub fn at(origin: &str, place: impl Into<String>, message: impl Into<String>) -> InputError {
        InputError::At {
            origin: crate::report::clean(origin).into_owned(),
            place: place.into(),
            message: message.into(),
        }
    }

    /// A JSON syntax error, with the line and column shifted by `line_offset` lines
    /// (for a JSON Lines record that starts on a later line of the file).
    pub fn syntax(origin: &str, err: crate::json::SyntaxError, line_offset: usize) -> InputError {
        InputError::Syntax {
            origin: crate::report::clean(origin).into_owned(),
            line: err.line + line_offset,
            column: err.column,
            message: err.message,
        }
    }
}
