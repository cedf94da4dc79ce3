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
//! Every text is looked for in every string at once (an Aho-Corasick automaton over the
//! distinct texts, run over the strings joined by a line break, which no normalised
//! string holds), so the cost is the texts plus the live context, not their product.

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
    let mut space = false;
    for c in s.chars() {
        if is_space(c) {
            space = !out.is_empty();
        } else {
            if space {
                out.push(' ');
                space = false;
            }
            out.push(c);
        }
    }
    out
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
    if texts.is_empty() {
        return kept;
    }
    let Ok(automaton) = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .build(&texts)
    else {
        // Too many or too large texts for an automaton: look for each on its own.
        for (text, positions) in texts.iter().zip(&holders) {
            if haystack
                .match_indices(text.as_str())
                .any(|(start, _)| bounded(&haystack, text, start, start + text.len()))
            {
                mark(&mut kept, positions);
            }
        }
        return kept;
    };
    let mut found = vec![false; texts.len()];
    for m in automaton.find_overlapping_iter(&haystack) {
        let i = m.pattern().as_usize();
        if let Some(f) = found.get_mut(i)
            && !*f
            && texts
                .get(i)
                .is_some_and(|t| bounded(&haystack, t, m.start(), m.end()))
        {
            *f = true;
            if let Some(positions) = holders.get(i) {
                mark(&mut kept, positions);
            }
        }
    }
    kept
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

    #[test]
    fn overlapping_texts_are_all_found() {
        let s = store(&[Some("abc"), Some("b"), Some("bcd"), Some("abcde")]);
        assert_eq!(in_view(&s, ["x abc d x"]), [true, false, false, false]);
        assert_eq!(in_view(&s, ["(abcde) b"]), [false, true, false, true]);
        // Found as part of a longer word first, then on its own.
        assert_eq!(in_view(&s, ["xabc abc"]), [true, false, false, false]);
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
