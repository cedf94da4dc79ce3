//! Text made safe to print: the bottom of the stack, used by every layer above it.
//!
//! Every string that came from the input passes through [`clean`] (text reports and
//! messages) or [`escape_unsafe`] (JSON text) so that no input can add, hide or change a
//! report line or send terminal control sequences. This module knows nothing of JSON
//! values, records or reports.

use std::borrow::Cow;
use std::fmt::Write as _;

/// How much of an input value a finding message shows (`json_brief`, `clean_brief`).
pub const BRIEF_CHARS: usize = 120;

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// A name that is one path component and nothing else: letters, digits, `-` and `_`
/// (a harness's session or agent id, before it names a file).
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A tool name as a store or a tool list may give one: not empty, no white space at
/// either end and no control character (no harness names a tool so; `" "`, `"Bash "` or
/// `"Bash\u{0}"` names no tool it calls).
pub fn is_tool_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(char::is_whitespace)
        && !name.ends_with(char::is_whitespace)
        && !name.contains(char::is_control)
}

/// A count as every flag and retention takes one: plain ASCII digits, at least one (Rust's
/// integer parsers would also take a leading `+`, which nothing here documents).
pub fn is_plain_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Characters that could forge or hide report content on a terminal: controls (C0,
/// DEL, C1), line and paragraph separators, bidirectional overrides, the BOM.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200E}' | '\u{200F}' | '\u{061C}' | '\u{FEFF}'
        )
        || ('\u{202A}'..='\u{202E}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// A character shown as nothing (Unicode's default ignorable code points): the soft
/// hyphen, the Arabic letter mark, zero-width spaces and joiners, bidirectional marks,
/// embeddings, overrides and isolates, the word joiner and invisible operators,
/// variation selectors, the BOM, tags. In a live context it joins what stands either
/// side of it (the view keeps it when normalising); in a kept id it is what a reader
/// cannot see.
pub fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{61c}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// Escapes a raw input string for a text report: `\` and `'` get a backslash, unsafe
/// characters become `\u{XXXX}`. Safe strings are returned as they are.
pub fn clean(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| is_unsafe(c) || c == '\\' || c == '\'') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Replaces unsafe characters in JSON text with `\uXXXX` escapes, keeping the line
/// breaks of pretty-printing. Outside strings JSON is plain ASCII and inside them
/// serde_json has already escaped C0 controls, so this only rewrites string contents and
/// the JSON value is unchanged.
pub fn escape_unsafe(json: &str) -> Cow<'_, str> {
    escape_chars(json, true, |c| c != '\n' && is_unsafe(c))
}

/// Like `escape_unsafe`, but a line break is escaped too: the result is one line.
pub fn one_line(s: &str) -> Cow<'_, str> {
    escape_chars(s, false, is_unsafe)
}

fn escape_chars(s: &str, newline_ok: bool, unsafe_char: impl Fn(char) -> bool) -> Cow<'_, str> {
    // Printable ASCII (and a line break, when it is kept) is never unsafe: a text of
    // nothing else is passed over byte by byte, without decoding a char.
    let plain = |b: u8| (0x20..0x7f).contains(&b) || (newline_ok && b == b'\n');
    // In blocks, without a branch per byte (a report can be megabytes).
    let all_plain = |block: &[u8]| block.iter().fold(true, |ok, &b| ok & plain(b));
    if s.as_bytes().chunks(64).all(all_plain) || !s.chars().any(&unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if unsafe_char(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Like `clean`, but cut after [`BRIEF_CHARS`] characters, marked `...`.
pub fn clean_brief(s: &str) -> Cow<'_, str> {
    match s.char_indices().nth(BRIEF_CHARS) {
        Some((i, _)) => Cow::Owned(format!("{}...", clean(s.get(..i).unwrap_or(s)))),
        None => clean(s),
    }
}

/// Levenshtein distance between `a` and `b` over characters, if it is at most `most`.
pub fn edit_distance(a: &[char], b: &str, most: usize) -> Option<usize> {
    // A length difference alone costs that many edits: far longer ids are passed over
    // without walking them.
    if b.len() > (a.len() + most) * 4 {
        return None;
    }
    if b.chars().count().abs_diff(a.len()) > most {
        return None;
    }
    // One row of the table; on the stack when `a` is short (a record's kind, an id).
    let (mut small, mut large) = ([0; 32], Vec::new());
    let row: &mut [usize] = match small.get_mut(..=a.len()) {
        Some(row) => row,
        None => {
            large.resize(a.len() + 1, 0);
            &mut large
        }
    };
    for (i, slot) in row.iter_mut().enumerate() {
        *slot = i;
    }
    for (j, cb) in b.chars().enumerate() {
        let mut diagonal = j;
        let mut left = j + 1;
        let mut lowest = left;
        for (slot, &ca) in row.iter_mut().skip(1).zip(a) {
            let up = *slot;
            let cost = if ca == cb { diagonal } else { diagonal + 1 };
            left = cost.min(up + 1).min(left + 1);
            diagonal = up;
            *slot = left;
            lowest = lowest.min(left);
        }
        if let Some(first) = row.first_mut() {
            *first = j + 1;
        }
        if lowest > most {
            return None;
        }
    }
    row.last().copied().filter(|&d| d <= most)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_brief_is_bounded() {
        let id = "'".repeat(1000);
        assert_eq!(
            clean_brief(&id),
            format!("{}...", "\\'".repeat(BRIEF_CHARS))
        );
        assert_eq!(clean_brief("f_011"), "f_011");
    }

    #[test]
    fn clean_escapes_what_could_forge_a_line() {
        assert_eq!(clean("f_011"), "f_011");
        assert_eq!(clean("a\nb"), "a\\u{000a}b");
        assert_eq!(clean("it's"), "it\\'s");
        assert_eq!(clean("\u{202e}x"), "\\u{202e}x");
        assert_eq!(escape_unsafe("\"\u{85}\""), "\"\\u0085\"");
    }

    #[test]
    fn escaping_passes_plain_ascii_over_and_catches_what_follows_it() {
        let plain = "{\n  \"a\": \"b\"\n}";
        assert!(matches!(escape_unsafe(plain), Cow::Borrowed(_)));
        assert_eq!(one_line(plain), "{\\u000a  \"a\": \"b\"\\u000a}");
        assert!(matches!(escape_unsafe("caf\u{e9}\n"), Cow::Borrowed(_)));
        assert_eq!(escape_unsafe("ok\nx\u{2028}"), "ok\nx\\u2028");
        assert_eq!(escape_unsafe("ok\u{7f}"), "ok\\u007f");
        assert_eq!(one_line("ok\t"), "ok\\u0009");
        // The plain-text test goes by blocks of 64 bytes: an unsafe character in any
        // block, at either end of one, is found.
        let long = "x".repeat(200);
        assert!(matches!(escape_unsafe(&long), Cow::Borrowed(_)));
        for at in [0, 63, 64, 127, 128, 199] {
            let mut s = long.clone();
            s.replace_range(at..=at, "\u{7}");
            let want = format!("{}\\u0007{}", &long[..at], &long[at + 1..]);
            assert_eq!(escape_unsafe(&s), want, "at {at}");
        }
    }

    #[test]
    fn edit_distance_is_levenshtein_within_a_bound() {
        let d = |a: &str, b: &str, most| edit_distance(&a.chars().collect::<Vec<_>>(), b, most);
        assert_eq!(d("kitten", "sitting", 3), Some(3));
        assert_eq!(d("kitten", "sitting", 2), None);
        assert_eq!(d("", "abc", 3), Some(3));
        assert_eq!(d("abc", "", 3), Some(3));
        assert_eq!(d("f_002", "f_02", 1), Some(1));
        assert_eq!(d("é1", "e1", 1), Some(1));
        assert_eq!(d("a", &"a".repeat(100), 2), None);
        // Past 31 characters the row is on the heap: the same distances.
        let long = "field_".repeat(8);
        assert_eq!(d(&long, &format!("{long}x"), 2), Some(1));
        assert_eq!(d(&format!("{long}ab"), &long, 2), Some(2));
        assert_eq!(d(&format!("{long}abc"), &long, 2), None);
    }
}
