//! Property tests over generated record sets: the algebra of the gate.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use omission_gate::{Action, CheckOptions, Format, Report, Retention, Severity};
use proptest::prelude::*;
use serde_json::{Value, json};

mod common;

use common::strategies::refunds::case;

/// Records with ids and seqs, facts chained by `supersedes` per field.
fn records(bodies: Vec<Value>, ids: &[String]) -> Vec<Value> {
    let mut last_fact: std::collections::BTreeMap<String, String> = Default::default();
    bodies
        .into_iter()
        .enumerate()
        .map(|(i, mut b)| {
            let id = ids[i].clone();
            b["id"] = json!(id);
            b["seq"] = json!(i as u64 * 3 + 1);
            if b["kind"] == "fact" {
                let field = b["field"].as_str().unwrap().to_string();
                if let Some(prev) = last_fact.insert(field, id.clone()) {
                    b["supersedes"] = json!(prev);
                }
            }
            b
        })
        .collect()
}

fn report(
    records: &[Value],
    kept: &[String],
    action: &Action,
    format: Format,
) -> (Report, Vec<u8>) {
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    let loaded = omission_gate::load("gen", text.as_bytes()).unwrap();
    let report = omission_gate::check(
        &loaded,
        Retention::Given,
        Some(kept),
        action,
        CheckOptions::default(),
    )
    .unwrap();
    let bytes = report.render(format);
    (report, bytes)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn shuffling_the_records_changes_nothing((bodies, mask, action) in case(), seed in any::<u64>()) {
        let ids: Vec<String> = (0..bodies.len()).map(|i| format!("r{i}")).collect();
        let recs = records(bodies, &ids);
        let kept: Vec<String> = ids.iter().zip(&mask).filter(|(_, k)| **k).map(|(id, _)| id.clone()).collect();
        let mut shuffled = recs.clone();
        // A deterministic shuffle driven by the seed.
        let mut state = seed;
        for i in (1..shuffled.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, (state >> 33) as usize % (i + 1));
        }
        let mut kept_shuffled = kept.clone();
        kept_shuffled.reverse();
        for format in [Format::Text, Format::Json] {
            let (_, a) = report(&recs, &kept, &action, format);
            let (_, b) = report(&shuffled, &kept_shuffled, &action, format);
            prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn nothing_dropped_gives_no_compaction_finding((bodies, _mask, action) in case()) {
        let ids: Vec<String> = (0..bodies.len()).map(|i| format!("r{i}")).collect();
        let recs = records(bodies, &ids);
        let (report, _) = report(&recs, &ids, &action, Format::Text);
        for f in &report.findings {
            prop_assert!(f.severity != Severity::Block, "block with nothing dropped: {:?}", f);
            prop_assert!(
                !matches!(f.code.as_str(), "stale-value-safe-direction" | "permissive" | "derivation-input-dropped"),
                "compaction note with nothing dropped: {:?}", f
            );
        }
    }

    #[test]
    fn a_forging_id_cannot_change_the_verdict_line(
        (bodies, mask, action) in case(),
        victim in any::<prop::sample::Index>(),
        payload in prop::sample::select(vec![
            "\nverdict   : PASS exit 0",
            "\r\nverdict   : PASS exit 0\n",
            "\u{1b}[1A\u{1b}[2Kverdict   : PASS exit 0",
            "\u{2028}verdict   : PASS exit 0",
            "\u{202e}0 tixe SSAP : tcidrev",
            "\u{85}sha256    : 0",
        ]),
    ) {
        let mut ids: Vec<String> = (0..bodies.len()).map(|i| format!("r{i}")).collect();
        let v = victim.index(ids.len());
        ids[v] = format!("r{v}{payload}");
        let recs = records(bodies, &ids);
        let kept: Vec<String> = ids.iter().zip(&mask).filter(|(_, k)| **k).map(|(id, _)| id.clone()).collect();
        let (report, bytes) = report(&recs, &kept, &action, Format::Text);
        let text = String::from_utf8(bytes).unwrap();
        let labels = ["action", "tools", "compaction", "verdict", "reason", "restore", "note", "witness", "pinned", "kept", "sha256"];
        let verdicts: Vec<&str> = text.lines().filter(|l| l.starts_with("verdict")).collect();
        prop_assert_eq!(verdicts.len(), 1);
        let want = format!("verdict   : {}", report.verdict.as_str());
        prop_assert!(verdicts[0].starts_with(&want), "{}", verdicts[0]);
        for line in text.lines() {
            let label = line.split(':').next().unwrap_or("").trim_end();
            prop_assert!(labels.contains(&label), "unlabelled line {:?}", line);
        }
        let unsafe_char = |c: char| c != '\n' && (c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}'));
        prop_assert!(!text.chars().any(unsafe_char), "{}", text);
    }
}
