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
    #[error("{origin}: {}{message}", place_part(.origin, .place))]
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
            origin: elide(crate::text::clean(origin).into_owned()),
            place: elide(place.into()),
            message: elide(message.into()),
        }
    }

    /// A JSON syntax error, with the line and column shifted by `line_offset` lines
    /// (for a JSON Lines record that starts on a later line of the file).
    pub fn syntax(origin: &str, err: crate::json::SyntaxError, line_offset: usize) -> InputError {
        InputError::Syntax {
            origin: elide(crate::text::clean(origin).into_owned()),
            line: err.line.saturating_add(line_offset),
            column: err.column,
            message: elide(err.message),
        }
    }
}

/// `PLACE: `, or nothing where the place only repeats the origin (`--kept` and `kept`),
/// so that no message reads `--kept: kept: ...`.
fn place_part(origin: &str, place: &str) -> String {
    if place.is_empty() || origin.trim_start_matches('-') == place.trim_start_matches('-') {
        String::new()
    } else {
        format!("{place}: ")
    }
}

/// Characters of a message part kept before and after the cut when it is too long.
const KEEP_HEAD: usize = 200;
const KEEP_TAIL: usize = 200;

/// Cuts the middle out of an overlong message part (a 100 MB id, a deep predicate's
/// path), keeping its start (where) and its end (what is wrong), so that every error
/// stays one readable line whatever the input holds.
fn elide(s: String) -> String {
    let count = s.chars().count();
    if count <= KEEP_HEAD + KEEP_TAIL + 40 {
        return s;
    }
    let head: String = s.chars().take(KEEP_HEAD).collect();
    let tail: String = s.chars().skip(count - KEEP_TAIL).collect();
    format!(
        "{head}...[{} characters cut]...{tail}",
        count - KEEP_HEAD - KEEP_TAIL
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_id_gives_a_short_message_that_keeps_both_ends() {
        let id = "x".repeat(1_000_000);
        let err = InputError::at("in.json", format!("record `{id}`"), "missing key `seq`");
        let text = err.to_string();
        assert!(text.len() < 600, "{}", text.len());
        assert!(text.starts_with("in.json: record `xxx"), "{text}");
        assert!(text.contains("...[999609 characters cut]..."), "{text}");
        assert!(text.ends_with("xxx`: missing key `seq`"), "{text}");
        let short = InputError::at("in.json", "record `a`", "missing key `seq`");
        assert_eq!(short.to_string(), "in.json: record `a`: missing key `seq`");
    }

    #[test]
    fn a_place_that_repeats_the_origin_is_said_once() {
        let kept = InputError::at("--kept", "kept", "kept id `x` names no record");
        assert_eq!(kept.to_string(), "--kept: kept id `x` names no record");
        let action = InputError::at("--action", "--action", "the action's `tool` must be");
        assert_eq!(action.to_string(), "--action: the action's `tool` must be");
        let file = InputError::at("a.json", "kept file", "cannot read: no such file");
        assert_eq!(
            file.to_string(),
            "a.json: kept file: cannot read: no such file"
        );
    }
}
