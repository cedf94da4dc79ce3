//! The one error type for input the gate cannot accept.
//!
//! Every message is one line, names where the problem is (file and line:col for JSON
//! syntax, the record id for a bad record, the flag or key otherwise) and what to fix.
//! What the lower modules refuse (a record, the action, the tools, a value) is carried
//! typed ([`Reason`]); the loaders, the hook adapters and the CLI word their own
//! refusals ([`InputError::At`]).

use serde_json::Value;
use thiserror::Error;

use crate::action::{ActionError, ToolError};
use crate::predicate::ValueError;
use crate::record::{RecordError, RecordProblem};

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
    /// Well-formed JSON that a lower module refuses, with its reason.
    #[error("{origin}: {}{}", place_part(.origin, .place), elide(.reason.to_string()))]
    Invalid {
        /// The file, `<stdin>` or flag the value came from.
        origin: String,
        /// Where in it: a record, a key, a flag.
        place: String,
        /// What is wrong (boxed: a `Result` carrying an error stays small).
        reason: Box<Reason>,
    },
}

/// Why a lower module refused a value: its own error, with its data.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Reason {
    /// A record, alone or among the others.
    #[error(transparent)]
    Record(#[from] RecordProblem),
    /// The proposed call.
    #[error(transparent)]
    Action(#[from] ActionError),
    /// The tools.
    #[error(transparent)]
    Tools(#[from] ToolError),
    /// A list of kept ids.
    #[error(transparent)]
    Kept(#[from] KeptError),
    /// A value the gate compares or carries (a hook's call params).
    #[error(transparent)]
    Value(#[from] ValueError),
}

/// Why a JSON list of kept ids is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KeptError {
    /// Not an array.
    #[error("must be an array of record ids")]
    NotArray,
    /// An element that is not a string: the element.
    #[error("expected a record id string, found {}", crate::json::json_text(.0))]
    NotId(Value),
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

    /// A value refused by a lower module, at a named place in a named origin.
    pub fn invalid(
        origin: &str,
        place: impl Into<String>,
        reason: impl Into<Reason>,
    ) -> InputError {
        InputError::Invalid {
            origin: elide(crate::text::clean(origin).into_owned()),
            place: elide(place.into()),
            reason: Box::new(reason.into()),
        }
    }

    /// A record refused, from the input `origin`.
    pub fn record(origin: &str, err: RecordError) -> InputError {
        InputError::invalid(origin, err.at.to_string(), err.problem)
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
    fn a_typed_reason_reads_as_its_worded_form_and_is_cut_the_same() {
        use crate::record::{Place, RecordAt};
        let err = RecordError {
            at: RecordAt::Id("a".into()),
            problem: RecordProblem::Missing("seq"),
        };
        let typed = InputError::record("in.json", err);
        assert_eq!(typed.to_string(), "in.json: record `a`: missing key `seq`");
        let at_line = RecordError {
            at: RecordAt::Place(Place::Line(3)),
            problem: RecordProblem::NotObject,
        };
        assert_eq!(
            InputError::record("in.json", at_line).to_string(),
            "in.json: line 3: a record must be a JSON object"
        );
        // A reason as long as a huge id is cut as a worded message is.
        let id = "y".repeat(100_000);
        let long = InputError::invalid(
            "in.json",
            "record `a`",
            RecordProblem::NoSuchRecord(id.clone()),
        );
        let worded = InputError::at(
            "in.json",
            "record `a`",
            format!("`depends_on` names `{id}`, which is no other record"),
        );
        assert_eq!(long.to_string(), worded.to_string());
        assert!(long.to_string().len() < 600);
        // The place is said once when it repeats the origin.
        let kept = InputError::invalid("--kept", "--kept", KeptError::NotArray);
        assert_eq!(kept.to_string(), "--kept: must be an array of record ids");
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
