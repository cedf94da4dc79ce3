//! In view (SPEC 10): which records the agent can have read in its live context.
//!
//! A record is in view when its `text`, whitespace-normalised, occurs in one
//! whitespace-normalised string of the live context, as a whole: not as the start or
//! end of a longer word or number there. Normalising turns every run of
//! whitespace into one space and trims the ends; control characters and the characters
//! a report escapes (bidirectional overrides, line separators, the BOM) count as
//! whitespace too, so that a record's text carried back to the model in a hook's reason
//! (where such characters cannot go as they are) comes back into view. A record without
//! `text`, or whose text is only whitespace, is never in view.
//!
//! Every text is looked for in every string at once: an Aho-Corasick automaton over the
//! first bytes of the distinct texts runs over the strings joined by a line break (which
//! no normalised string holds), and a text is compared whole where its first bytes
//! occur. The cost is the texts plus the live context, not their product.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, MatchKind};

use crate::compaction::{Compaction, Retention};
use crate::record::Store;
use crate::report::TranscriptSummary;
use crate::transcript::Live;

/// What the agent sees: a transcript's live context and the instruction files named
/// with `--context-file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// The transcript file, as named.
    pub file: String,
    /// True when its format was recognised rather than named.
    pub detected: bool,
    /// Its live context.
    pub live: Live,
    /// Each context file's name and text.
    pub files: Vec<(String, String)>,
}

impl Context {
    /// Every string of the context: the transcript's, then the files'.
    pub fn strings(&self) -> impl Iterator<Item = &str> {
        self.live
            .pieces
            .iter()
            .map(|p| p.text.as_str())
            .chain(self.files.iter().map(|(_, text)| text.as_str()))
    }

    /// The compaction whose kept set is the records in view (retention `transcript:H`).
    pub fn compaction(&self, store: &Store) -> Compaction {
        Compaction::from_mask(
            store,
            Retention::Transcript(self.live.harness),
            in_view(store, self.strings()),
        )
    }

    /// The transcript as a report names it.
    pub fn summary(&self) -> TranscriptSummary {
        TranscriptSummary {
            file: self.file.clone(),
            harness: self.live.harness.name().to_string(),
            harness_detected: self.detected,
            last_compaction_byte: self.live.compaction,
            live_strings: self.live.pieces.len() + self.files.len(),
        }
    }
}

/// True for a character that normalising turns into a space.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || crate::text::is_unsafe(c)
}

/// `s` with every run of whitespace (and unsafe characters) made one space, trimmed.
pub fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    // Runs of characters kept as they are are copied whole; ASCII is told apart byte by
    // byte (a space, a control or DEL), anything else by its character.
    let mut run = 0;
    let mut i = 0;
    let bytes = s.as_bytes();
    while let Some(&b) = bytes.get(i) {
        let (width, space) = if b < 0x80 {
            (1, b <= b' ' || b == 0x7f)
        } else {
            let c = s.get(i..).and_then(|r| r.chars().next()).unwrap_or(' ');
            (c.len_utf8(), is_space(c))
        };
        if space {
            push_word(&mut out, s.get(run..i).unwrap_or_default());
            run = i + width;
        }
        i += width;
    }
    push_word(&mut out, s.get(run..).unwrap_or_default());
    out
}

fn push_word(out: &mut String, word: &str) {
    if word.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(word);
}

/// The kept mask (aligned with store positions) of the records in view of a live
/// context given as its strings.
pub fn in_view<'s>(store: &Store, strings: impl IntoIterator<Item = &'s str>) -> Vec<bool> {
    let mut haystack = String::new();
    for s in strings {
        haystack.push_str(&normalize(s));
        haystack.push('\n');
    }
    // Distinct texts, each with the positions of the records that carry it.
    let mut texts: Vec<String> = Vec::new();
    let mut holders: Vec<Vec<usize>> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (pos, record) in store.records().iter().enumerate() {
        let Some(text) = record.text.as_deref() else {
            continue;
        };
        let text = normalize(text);
        if text.is_empty() {
            continue;
        }
        let slot = *index.entry(text.clone()).or_insert_with(|| {
            texts.push(text);
            holders.push(Vec::new());
            holders.len() - 1
        });
        if let Some(h) = holders.get_mut(slot) {
            h.push(pos);
        }
    }
    let mut kept = vec![false; store.len()];
    for (i, found) in occurring(&texts, &haystack).into_iter().enumerate() {
        if found && let Some(positions) = holders.get(i) {
            mark(&mut kept, positions);
        }
    }
    kept
}

/// Bytes of a text the automaton is built from: a text is looked for where its first
/// bytes occur, and compared whole there. The automaton stays small however long the
/// texts are.
const PREFIX: usize = 16;

/// Which texts occur in `haystack`.
fn occurring(texts: &[String], haystack: &str) -> Vec<bool> {
    let mut found = vec![false; texts.len()];
    // Distinct prefixes (cut at a character boundary), each with the texts that start so.
    let mut prefixes: Vec<&str> = Vec::new();
    let mut starting: Vec<Vec<usize>> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, text) in texts.iter().enumerate() {
        let mut end = PREFIX.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let prefix = text.get(..end).unwrap_or(text);
        let slot = *index.entry(prefix).or_insert_with(|| {
            prefixes.push(prefix);
            starting.push(Vec::new());
            starting.len() - 1
        });
        if let Some(s) = starting.get_mut(slot) {
            s.push(i);
        }
    }
    if prefixes.is_empty() {
        return found;
    }
    let Ok(automaton) = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .build(&prefixes)
    else {
        // Too large for an automaton: look for each text on its own.
        for (f, text) in found.iter_mut().zip(texts) {
            *f = occurs_at_all(haystack, text);
        }
        return found;
    };
    let bytes = haystack.as_bytes();
    for m in automaton.find_overlapping_iter(haystack) {
        let Some(group) = starting.get_mut(m.pattern().as_usize()) else {
            continue;
        };
        let rest = bytes.get(m.start()..).unwrap_or_default();
        // A text found once is done: the group shrinks as its texts are found.
        group.retain(|&i| {
            let hit = texts.get(i).is_some_and(|t| {
                rest.starts_with(t.as_bytes())
                    && bounded(haystack, t, m.start(), m.start() + t.len())
            });
            if hit && let Some(f) = found.get_mut(i) {
                *f = true;
            }
            !hit
        });
    }
    found
}

/// True when the text found at `start..end` of the haystack is not part of a longer
/// word or number there: a text that starts (ends) with a letter or digit needs no
/// letter or digit just before (after) it. `Refunds over 500` does not occur in
/// `Refunds over 5000 need approval`: the agent read another rule.
fn bounded(haystack: &str, text: &str, start: usize, end: usize) -> bool {
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let before = haystack.get(..start).and_then(|h| h.chars().next_back());
    let after = haystack.get(end..).and_then(|h| h.chars().next());
    !(word(text.chars().next()) && word(before) || word(text.chars().next_back()) && word(after))
}

/// Whether `text` occurs in `haystack` as a whole, trying every position (occurrences
/// may overlap: the first may be part of a longer word and a later one not).
fn occurs_at_all(haystack: &str, text: &str) -> bool {
    haystack.char_indices().any(|(start, _)| {
        haystack
            .get(start..)
            .is_some_and(|rest| rest.starts_with(text))
            && bounded(haystack, text, start, start + text.len())
    })
}

fn mark(kept: &mut [bool], positions: &[usize]) {
    for &p in positions {
        if let Some(k) = kept.get_mut(p) {
            *k = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(texts: &[Option<&str>]) -> Store {
        let lines: Vec<String> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let text = t
                    .map(|t| format!(",\"text\":{}", serde_json::Value::String(t.to_string())))
                    .unwrap_or_default();
                format!("{{\"id\":\"r{i}\",\"seq\":{i},\"kind\":\"chatter\"{text}}}")
            })
            .collect();
        crate::input::load("t", lines.join("\n").as_bytes(), Default::default())
            .unwrap()
            .store
    }

    #[test]
    fn normalising_makes_runs_one_space_and_trims() {
        assert_eq!(normalize("  a \t\n b\u{a0}c  "), "a b c");
        assert_eq!(normalize("a\u{1b}b\u{202e}c"), "a b c");
        assert_eq!(normalize("\n\t "), "");
        assert_eq!(normalize("é\u{2028}\u{7f}x\u{85}ü "), "é x ü");
        assert_eq!(
            normalize("Refunds over €5,000 need a \"human\" approver."),
            "Refunds over €5,000 need a \"human\" approver."
        );
    }

    #[test]
    fn a_text_is_in_view_when_it_occurs_in_one_string() {
        let s = store(&[
            Some("Refunds over 5,000\nneed a human approver."),
            Some("split across"),
            None,
            Some("  "),
            Some("need a human"),
            Some("Refunds over 5,000 need a human approver."),
        ]);
        let live = [
            "The user said: refunds   over...",
            "Refunds over 5,000 need\ta human approver. Noted.",
            "split",
            "across",
        ];
        assert_eq!(
            in_view(&s, live.iter().copied()),
            [true, false, false, false, true, true]
        );
        assert_eq!(in_view(&s, []), [false; 6]);
    }

    proptest::proptest! {
        #[test]
        fn normalising_agrees_with_splitting_on_spaces(s in "[a b\t\n\u{1b}é\u{a0}\u{202e}]{0,40}") {
            let words: Vec<&str> = s.split(is_space).filter(|w| !w.is_empty()).collect();
            proptest::prop_assert_eq!(normalize(&s), words.join(" "));
        }

        #[test]
        fn a_text_is_found_exactly_when_it_occurs(
            texts in proptest::collection::vec("[ab ]{1,30}", 1..12),
            live in proptest::collection::vec("[ab ]{0,60}", 0..4),
        ) {
            let found = occurring(&texts, &live.join("\n"));
            for (text, f) in texts.iter().zip(found) {
                let occurs = live.iter().any(|l| occurs_at_all(l, text));
                proptest::prop_assert_eq!(f, occurs);
            }
        }
    }

    #[test]
    fn overlapping_texts_are_all_found() {
        let s = store(&[Some("abc"), Some("b"), Some("bcd"), Some("abcde")]);
        assert_eq!(in_view(&s, ["x abc d x"]), [true, false, false, false]);
        assert_eq!(in_view(&s, ["(abcde) b"]), [false, true, false, true]);
        // Found as part of a longer word first, then on its own.
        assert_eq!(in_view(&s, ["xabc abc"]), [true, false, false, false]);
        // Occurrences that overlap: the first inside a word, the second whole.
        let t = store(&[Some("a a")]);
        assert_eq!(in_view(&t, ["ba a a"]), [true]);
        assert!(occurs_at_all("ba a a", "a a"));
    }

    #[test]
    fn a_text_inside_a_longer_word_or_number_is_not_in_view() {
        let s = store(&[
            Some("Refunds over 500"),
            Some("Refunds over 5000"),
            Some("Never deploy."),
            Some("sign-off"),
        ]);
        assert_eq!(
            in_view(
                &s,
                [
                    "Refunds over 5000 need approval",
                    "Never deploy.Ever",
                    "sign-offs"
                ]
            ),
            [false, true, true, false]
        );
        assert_eq!(
            in_view(&s, ["\"Refunds over 500\" (sign-off)"]),
            [true, false, false, true]
        );
    }
}
