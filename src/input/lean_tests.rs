//! The lean loader reads a document (one JSON object with `records`) without holding it
//! whole: the keys before `records` as met, the keys after it from a speculated tail, the
//! records in chunks cut at speculated record starts. Whatever it decides must be what the
//! exact loader decides, byte for byte; whatever the exact loader refuses, it must hand
//! back (`Fallback`). Chunks are made tiny here, so that small documents are cut
//! everywhere. (That the CLI reads a large document leanly, from a file and from stdin,
//! is in `tests/lean_document.rs`.)

use std::borrow::Cow;
use std::collections::BTreeSet;

use proptest::prelude::*;

use super::lean::{KeptIds, Purpose, load_lean_with};
use super::{action_from_flag, kept_from_flag, load};
use crate::action::Action;
use crate::compaction::{Compaction, Retention};
use crate::input::Input;
use crate::record::Limits;
use crate::stream::{Fallback, Positional};
use crate::{Format, PrecheckOptions, Report};

/// A document in memory, read by position in chunks of `chunk` bytes.
struct Mem<'a> {
    bytes: &'a [u8],
    chunk: usize,
}

impl<'a> Positional<'a> for Mem<'a> {
    fn size(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&mut self, at: u64, len: usize) -> Result<Cow<'a, [u8]>, Fallback> {
        let mut bytes = self.bytes;
        bytes.read_at(at, len)
    }

    fn chunk_size(&self) -> usize {
        self.chunk
    }
}

/// The input cut as the CLI's reader cuts it: `size` bytes at a time, each chunk ending
/// at its last line end (the rest goes to the next one); a chunk that holds no line end
/// runs on to the next one (a line is never cut in two).
fn cli_chunks(bytes: &[u8], size: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let window = &bytes[at..bytes.len().min(at + size)];
        let len = if at + window.len() == bytes.len() {
            window.len()
        } else {
            match window.iter().rposition(|&b| b == b'\n') {
                Some(end) => end + 1,
                None => bytes[at + window.len()..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len() - at, |n| window.len() + n + 1),
            }
        };
        out.push(bytes[at..at + len].to_vec());
        at += len;
    }
    out
}

/// What a load is for, with the flags a user gave.
#[derive(Debug, Clone, Copy)]
enum Ask<'f> {
    Check {
        kept: Option<&'f str>,
        action: Option<&'f str>,
    },
    Precheck {
        kept: Option<&'f str>,
    },
    Pin,
}

const MAX_CALLS: usize = 64;

/// The report the exact loader gives (JSON), or `None` when it refuses the input.
fn exact(bytes: &[u8], ask: Ask<'_>) -> Option<Vec<u8>> {
    let input = load("in.json", bytes, Limits::default()).ok()?;
    let compaction = |kept: Option<&str>| {
        let ids = match kept {
            Some(k) => Some(kept_from_flag("--kept", k, false).ok()?),
            None => input.kept.clone(),
        };
        Compaction::new(&input.store, Retention::Given, ids.as_deref()).ok()
    };
    let report = match ask {
        Ask::Check { kept, action } => {
            let c = compaction(kept)?;
            let a = match action {
                Some(a) => action_from_flag("--action", a).ok()?,
                None => input.action.clone()?,
            };
            let outcome =
                crate::gate::check(&input.store, &c, &input.totals, &a, Default::default());
            Report::check(&a, &c, &input.totals, outcome)
        }
        Ask::Precheck { kept } => {
            let c = compaction(kept)?;
            let tools = input.tools_or_named();
            let outcome = crate::precheck::precheck(
                &input.store,
                &c,
                &input.totals,
                &tools,
                PrecheckOptions::default(),
            );
            Report::precheck(&tools, &c, &input.totals, outcome)
        }
        Ask::Pin => crate::pin::report(
            &input.store,
            &input.totals.named,
            &input.tools_or_named(),
            None,
            crate::PinOptions {
                max_calls: MAX_CALLS,
                harness: None,
            },
        ),
    };
    Some(report.render(Format::Json))
}

/// The report the lean loader gives (JSON). A document is read by position, and JSON
/// Lines in chunks that end at line ends, of `chunk` bytes (as the CLI reads a file or
/// stdin), else of 1 MiB.
fn lean(bytes: &[u8], ask: Ask<'_>, chunk: Option<usize>) -> Result<Vec<u8>, Fallback> {
    let (kept, purpose) = match ask {
        Ask::Check { kept, action } => {
            let a = action.map(|a| action_from_flag("--action", a).unwrap());
            (kept, Purpose::Check(a))
        }
        Ask::Precheck { kept } => (kept, Purpose::Precheck(None)),
        Ask::Pin => (None, Purpose::Pin(None)),
    };
    // JSON Lines are cut as the CLI cuts them, in chunks of `chunk` bytes each ending at
    // a line end (a longer line is one chunk); a document is told from its first chunk,
    // which the CLI reads whole.
    let lines = match crate::stream::is_document(bytes) {
        Some(true) => 1 << 20,
        _ => chunk.unwrap_or(1 << 20),
    };
    let mut chunks = cli_chunks(bytes, lines).into_iter();
    let first = chunks.next().unwrap_or_default();
    let mut whole = Mem {
        bytes,
        chunk: chunk.unwrap_or(1 << 20),
    };
    let lean = load_lean_with(
        first.into(),
        chunks.map(|c| Ok(c.into())),
        &mut whole,
        KeptIds::flag(kept.map(|k| (k, false)))?,
        purpose,
        Limits::default(),
        Ok,
    )?;
    let report = match ask {
        Ask::Check { .. } => {
            let a = lean.action.ok_or(Fallback)?;
            let outcome = crate::gate::check(
                &lean.input.store,
                &lean.compaction,
                &lean.input.totals,
                &a,
                Default::default(),
            );
            Report::check(&a, &lean.compaction, &lean.input.totals, outcome)
        }
        Ask::Precheck { .. } => {
            let outcome = crate::precheck::precheck(
                &lean.input.store,
                &lean.compaction,
                &lean.input.totals,
                &lean.tools,
                PrecheckOptions::default(),
            );
            Report::precheck(&lean.tools, &lean.compaction, &lean.input.totals, outcome)
        }
        Ask::Pin => crate::pin::report(
            &lean.input.store,
            &lean.input.totals.named,
            &lean.tools,
            None,
            crate::PinOptions {
                max_calls: MAX_CALLS,
                harness: None,
            },
        ),
    };
    Ok(report.render(Format::Json))
}

/// The chunk sizes the lean reads use: `None` for the CLI's chunks put together, else
/// by position in chunks of that size. A chunk is cut where a record seems to start, and
/// the bytes read past it (as many as the chunk, at most 16 KiB) must bear that out;
/// with tiny chunks a lookalike inside a record can pass, and the load then falls back.
const CHUNKS: [Option<usize>; 7] = [
    None,
    Some(1),
    Some(2),
    Some(5),
    Some(23),
    Some(64),
    Some(1 << 20),
];

/// Chunk sizes with which a lean read of a valid document must decide.
fn must_decide(chunk: Option<usize>) -> bool {
    chunk.is_none_or(|c| c >= 64)
}

/// Every way of reading `bytes` leanly agrees with the exact loader: where the lean
/// loader decides, the exact one does too, with the same bytes. Returns the chunk sizes
/// of the lean reads that fell back.
fn agrees(bytes: &[u8], ask: Ask<'_>) -> Vec<Option<usize>> {
    let want = exact(bytes, ask);
    let mut fell_back = Vec::new();
    for chunk in CHUNKS {
        let Ok(got) = lean(bytes, ask, chunk) else {
            fell_back.push(chunk);
            continue;
        };
        let Some(want) = &want else {
            panic!(
                "the lean loader (chunk {chunk:?}) accepted what the exact one refuses: {}",
                String::from_utf8_lossy(bytes)
            );
        };
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(want.clone()).unwrap(),
            "chunk {chunk:?}, {ask:?}: {}",
            String::from_utf8_lossy(bytes)
        );
    }
    fell_back
}

/// [`agrees`], and the lean reads decided (all of them with chunks of 64 bytes and
/// more).
fn decides(bytes: &[u8], ask: Ask<'_>) {
    let fell_back = agrees(bytes, ask);
    assert!(
        !fell_back.iter().any(|&c| must_decide(c)),
        "lean reads fell back ({fell_back:?}) on: {}",
        String::from_utf8_lossy(bytes)
    );
}

/// [`agrees`], and the exact loader refuses (so no lean read may decide).
fn refused(bytes: &[u8], ask: Ask<'_>) {
    assert!(
        exact(bytes, ask).is_none(),
        "the exact loader accepts: {}",
        String::from_utf8_lossy(bytes)
    );
    assert_eq!(agrees(bytes, ask).len(), CHUNKS.len());
}

const CHECK: Ask<'static> = Ask::Check {
    kept: None,
    action: None,
};

const RECORDS: [&str; 8] = [
    r#"{"id":"c1","seq":1,"kind":"chatter","text":"hello"}"#,
    r#"{"id":"f1","seq":2,"kind":"fact","field":"limit","value":100}"#,
    r#"{"id":"p1","seq":3,"kind":"policy","scope":"pay","predicate":{"all":[{"field":"amount","op":"gt","value":"limit"},{"any":[]}]},"effect":"deny"}"#,
    r#"{"id":"f2","seq":4,"kind":"fact","field":"limit","value":50,"supersedes":"f1","depends_on":["p1"]}"#,
    r#"{"id":"s1","seq":5,"kind":"summary","text":"earlier","tokens":3}"#,
    r#"{"id":"e1","seq":6,"kind":"effect","tool":"pay","match":{"amount":5}}"#,
    r#"{"id":"c2","seq":7,"kind":"chatter","text":"x","meta":{"a":[{"b":1}]}}"#,
    r#"{"id":"c3","seq":8,"kind":"chatter"}"#,
];

const KEPT: &str = r#"["c1","f2","c3"]"#;
const ACTION: &str = r#"{"tool":"pay","params":{"amount":70}}"#;
const TOOLS: &str = r#"[{"name":"pay","input_schema":{"type":"object","properties":{"amount":{"anyOf":[{"type":"integer"},{"type":"number"}]}}}},{"name":"other"}]"#;

/// A document with these top-level members, in this order (`records` is `RECORDS`
/// joined by `sep`).
fn doc(members: &[&str], sep: &str) -> String {
    let body: Vec<String> = members
        .iter()
        .map(|m| match *m {
            "records" => format!("\"records\":[{}]", RECORDS.join(sep)),
            "kept" => format!("\"kept\":{KEPT}"),
            "action" => format!("\"action\":{ACTION}"),
            "tools" => format!("\"tools\":{TOOLS}"),
            "meta" => r#""meta":{"k":[{"x":[1]}],"records":[{"id":"m"}]}"#.to_string(),
            other => other.to_string(),
        })
        .collect();
    format!("{{{}}}", body.join(","))
}

#[test]
fn records_first_last_or_in_the_middle_give_the_exact_report() {
    for members in [
        &["records", "kept", "action"][..],
        &["kept", "action", "records"],
        &["kept", "records", "action"],
        &["action", "records", "kept"],
        &["records", "kept", "action", "tools"],
        &["tools", "records", "action", "kept"],
        &["meta", "kept", "records", "tools", "action", "meta2"],
        &["records", "meta", "kept", "action"],
        &["kept", "records", "tools", "meta", "action"],
    ] {
        let members: Vec<&str> = members
            .iter()
            .map(|m| if *m == "meta2" { "\"x\":1" } else { m })
            .collect();
        let text = doc(&members, ",");
        if members.contains(&"\"x\":1") {
            // An unknown key: the exact loader refuses the document.
            refused(text.as_bytes(), CHECK);
            continue;
        }
        decides(text.as_bytes(), CHECK);
        decides(text.as_bytes(), Ask::Precheck { kept: None });
        // `pin`, or `--kept` beside the document's own `kept`: the exact loader checks
        // that each of the document's ids names a record, which the lean plan does not
        // read, so the lean load falls back; with an empty `kept` it decides.
        let flag = Ask::Check {
            kept: Some("p1,e1"),
            action: Some(r#"{"tool":"pay","params":{"amount":5}}"#),
        };
        for ask in [Ask::Pin, flag] {
            assert_eq!(agrees(text.as_bytes(), ask).len(), CHUNKS.len());
            let empty = text.replace(r#""kept":["c1","f2","c3"]"#, r#""kept":[]"#);
            decides(empty.as_bytes(), ask);
        }
    }
}

#[test]
fn whitespace_and_newlines_between_items_give_the_exact_report() {
    for sep in [",", " , ", ",\n", "\n,\n", "\r\n,\t", ",\n\n  "] {
        for members in [
            &["records", "kept", "action"][..],
            &["kept", "action", "records"],
        ] {
            let text = doc(members, sep);
            decides(text.as_bytes(), CHECK);
            // Around the array and the document, and records pretty-printed.
            let spaced = text
                .replace("\"records\":[", "\"records\" :\n[ \n")
                .replace("}]", "}\n\t]\r\n");
            let spaced = format!(" \n{spaced}\n\n ");
            decides(spaced.as_bytes(), CHECK);
        }
    }
    let pretty: Vec<String> = RECORDS
        .iter()
        .map(|r| {
            serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(r).unwrap())
                .unwrap()
        })
        .collect();
    let text = format!(
        "{{\n  \"records\": [\n{}\n  ],\n  \"kept\": {KEPT},\n  \"action\": {ACTION}\n}}\n",
        pretty.join(",\n")
    );
    decides(text.as_bytes(), CHECK);
}

#[test]
fn chatter_that_looks_like_a_record_boundary_or_the_tail_is_decided_right() {
    let texts = [
        r#"},{\"id\":\"c1\",\"seq\":1,\"kind\":\"chatter\"}"#,
        r#"}],\"kept\":[\"c1\"],\"action\":{\"tool\":\"x\"}}"#,
        r#"}]}"#,
        r#"}],"#,
        r#"}] , \"kept\": []}"#,
        r#"{\"id\":"#,
        "},{",
        "}\\n,\\n{",
        "\\u007d],\\u0022kept\\u0022:[]}",
    ];
    for text in texts {
        let lookalike = format!(r#"{{"id":"cx","seq":99,"kind":"chatter","text":"{text}"}}"#);
        for at in [0, 3, RECORDS.len()] {
            let mut records: Vec<&str> = RECORDS.to_vec();
            records.insert(at, &lookalike);
            for tail in [
                format!(",\"kept\":{KEPT},\"action\":{ACTION}"),
                format!(",\"kept\":[\"cx\"],\"action\":{ACTION},\"tools\":{TOOLS}"),
                String::new(),
            ] {
                let head = if tail.is_empty() {
                    format!("\"kept\":{KEPT},\"action\":{ACTION},")
                } else {
                    String::new()
                };
                let text = format!("{{{head}\"records\":[{}]{tail}}}", records.join(","));
                decides(text.as_bytes(), CHECK);
            }
        }
    }
    // A lookalike whose closing quote would start a key if the tail were taken from
    // inside it: never mis-decided.
    let sly = r#"{"id":"cy","seq":98,"kind":"chatter","text":"}],","meta":{"kept":[]}}"#;
    let text = format!(
        "{{\"kept\":{KEPT},\"action\":{ACTION},\"records\":[{},{sly}]}}",
        RECORDS.join(",")
    );
    agrees(text.as_bytes(), CHECK);
}

#[test]
fn duplicate_or_unknown_top_level_keys_are_left_to_the_exact_loader() {
    for members in [
        &["kept", "records", "kept", "action"][..],
        &["records", "kept", "action", "kept"],
        &["kept", "kept", "records", "action"],
        &["records", "kept", "action", "records"],
        &["records", "kept", "action", "meta", "meta"],
        &["meta", "records", "kept", "action", "meta"],
        &["action", "records", "kept", "\"Records\":[]"],
        &["action", "records", "kept", "\"rec\\u006frds\":[]"],
    ] {
        let text = doc(members, ",");
        refused(text.as_bytes(), CHECK);
    }
    // An escaped key that reads as a known one is that key.
    let text = doc(&["records", "\"k\\u0065pt\":[\"c1\"]", "action"], ",");
    decides(text.as_bytes(), CHECK);
    let text = doc(&["kept", "action", "\"rec\\u006frds\":[]"], ",").replace(
        "\"rec\\u006frds\":[]",
        &format!("\"rec\\u006frds\":[{}]", RECORDS.join(",")),
    );
    decides(text.as_bytes(), CHECK);
}

#[test]
fn trailing_garbage_truncation_and_broken_structure_are_refused() {
    let text = doc(&["records", "kept", "action"], ",");
    for bad in [
        format!("{text}x"),
        format!("{text}{{}}"),
        format!("{text}\n,"),
        format!("{text}}}"),
        format!("{text}]"),
        text.replace("}],\"kept\"", "},],\"kept\""),
        text.replace("}],\"kept\"", "}]],\"kept\""),
        text.replace("}],\"kept\"", "}],,\"kept\""),
        text.replace("},{\"id\":\"f1\"", "}{\"id\":\"f1\""),
        text.replace("},{\"id\":\"f1\"", "},,{\"id\":\"f1\""),
        text.replace("},{\"id\":\"f1\"", "},1,{\"id\":\"f1\""),
        text.replace("\"records\":[", "\"records\":[1,"),
        text.replace("\"records\":[", "\"records\":{"),
        text.replace(RECORDS[7], ""),
    ] {
        refused(bad.as_bytes(), CHECK);
    }
    // Cut anywhere: refused.
    for end in (0..text.len()).rev().step_by(7) {
        refused(&text.as_bytes()[..end], CHECK);
    }
    for end in text.len() - 60..text.len() {
        refused(&text.as_bytes()[..end], CHECK);
    }
    // Trailing whitespace is fine.
    decides(format!("{text} \n\t\r\n").as_bytes(), CHECK);
}

#[test]
fn a_byte_order_mark_is_skipped_once() {
    let text = doc(&["records", "kept", "action"], ",");
    decides(format!("\u{feff}{text}").as_bytes(), CHECK);
    refused(format!("\u{feff}\u{feff}{text}").as_bytes(), CHECK);
    refused(format!(" \u{feff}{text}").as_bytes(), CHECK);
}

#[test]
fn records_nest_as_deep_as_they_may_in_a_document() {
    // A document is two levels around its records: a record itself may nest 125
    // levels, not 126. A top-level value may nest 126.
    let record = |levels: usize| {
        format!(
            r#"{{"id":"d","seq":50,"kind":"chatter","meta":{}{}}}"#,
            "[".repeat(levels - 1),
            "]".repeat(levels - 1)
        )
    };
    for (levels, ok) in [(124, true), (125, true), (126, false), (127, false)] {
        let deep = record(levels);
        let mut records = RECORDS.to_vec();
        records.insert(4, &deep);
        let text = format!(
            "{{\"records\":[{}],\"kept\":{KEPT},\"action\":{ACTION}}}",
            records.join(",")
        );
        if ok {
            decides(text.as_bytes(), CHECK);
        } else {
            refused(text.as_bytes(), CHECK);
        }
    }
    for (levels, ok) in [(125, true), (126, true), (127, false)] {
        let meta = format!("\"meta\":{}{}", "[".repeat(levels), "]".repeat(levels));
        for members in [
            &["records", "kept", "action", meta.as_str()][..],
            &[meta.as_str(), "records", "kept", "action"],
        ] {
            let text = doc(members, ",");
            if ok {
                decides(text.as_bytes(), CHECK);
            } else {
                refused(text.as_bytes(), CHECK);
            }
        }
    }
}

#[test]
fn bad_records_and_bad_keys_are_left_to_the_exact_loader() {
    let text = doc(&["records", "kept", "action"], ",");
    for (from, to) in [
        (r#""text":"hello""#, r#""text":"hello","text":"again""#),
        (r#""value":100"#, r#""value":{"a":1,"a":1}"#),
        (r#""seq":8"#, r#""seq":7"#),
        (r#""id":"c3""#, r#""id":"c2""#),
        (r#"["c1","f2","c3"]"#, r#"["c1","nobody"]"#),
        (r#"["c1","f2","c3"]"#, r#"["c1",7]"#),
        (
            r#""params":{"amount":70}"#,
            r#""params":{"amount":70,"amount":7}"#,
        ),
        (r#""tool":"pay","params""#, r#""tool":7,"params""#),
        ("\"hello\"", "\"hel\u{1}lo\""),
    ] {
        assert!(text.contains(from), "{from}");
        refused(text.replacen(from, to, 1).as_bytes(), CHECK);
    }
    // Not UTF-8 inside a record, and inside the tail.
    let mut bytes = text.clone().into_bytes();
    let at = text.find("hello").unwrap();
    bytes[at] = 0xff;
    refused(&bytes, CHECK);
    let mut bytes = doc(&["records", "meta", "kept", "action"], ",").into_bytes();
    let at = bytes.len() - 5;
    bytes.insert(at, 0xc3);
    refused(&bytes, CHECK);
}

/// Fact lines the scan in a chunk reads itself (a scalar `value`, no `depends_on` or
/// `meta`) beside ones it leaves to the fact scan or the strict path: odd values
/// (leading zeros, `-0`, past u64, escapes, lone surrogates), a key twice, `supersedes`
/// of odd values, escaped keys, stray whitespace, keys in another order. Each stream
/// gives the exact loader's report, or falls back where the exact loader refuses it.
#[test]
fn odd_fact_lines_in_json_lines_give_the_exact_report() {
    let policy = r#"{"id":"p1","seq":1,"kind":"policy","scope":"pay","predicate":{"field":"amount","op":"gt","value":"limit"},"effect":"deny"}"#;
    let first = r#"{"id":"f0","seq":2,"kind":"fact","field":"limit","value":60}"#;
    let chatter = r#"{"id":"c1","seq":9,"kind":"chatter","text":"hi"}"#;
    let odd = [
        r#""value":100"#,
        r#""value":0100"#,
        r#""value":-0"#,
        r#""value":18446744073709551615"#,
        r#""value":18446744073709551616"#,
        r#""value":1.0"#,
        r#""value":"100""#,
        r#""value":"\u0031\u0030\u0030""#,
        r#""value":"\ud800""#,
        r#""value":"a\/b\"c""#,
        r#""value":true"#,
        r#""value":nul"#,
        r#""value":100,"value":10"#,
        r#""value":100,"supersedes":"f0""#,
        r#""value":100,"supersedes":"""#,
        r#""value":100,"supersedes":7"#,
        r#""value":100,"supersedes":null"#,
        r#""value":100,"supersedes":"f\u0030""#,
        r#""value":100,"supersedes":"f0","supersedes":"f0""#,
        r#""value":100,"field":"limit""#,
        r#""value":100,"f\u0069eld":"other""#,
        r#""v\u0061lue":100"#,
        "\"value\" : 100 ,\t\"supersedes\"\t:\"f0\"\r",
        r#""value":100,"text":"\ud83d\ude00","tokens":007"#,
        r#""value":100,"tokens":7,"tokens":8"#,
        r#""value":100,"depends_on":[]"#,
        r#""value":100,"meta":{"a":1}"#,
    ];
    for body in odd {
        let fact = format!(r#"{{"id":"f1","seq":3,"kind":"fact","field":"limit",{body}}}"#);
        let moved = format!(r#"{{{body},"field":"limit","kind":"fact","seq":3,"id":"f1"}}"#);
        for line in [&fact, &moved] {
            let text = format!("{policy}\n{first}\r\n{line}\n{chatter}\n");
            let bytes = text.as_bytes();
            for kept in [
                r#"["p1","c1"]"#,
                r#"["p1","f1","c1"]"#,
                r#"["p1","f0","f1"]"#,
            ] {
                let ask = Ask::Check {
                    kept: Some(kept),
                    action: Some(ACTION),
                };
                agrees(bytes, ask);
                agrees(bytes, Ask::Precheck { kept: Some(kept) });
            }
            agrees(bytes, Ask::Pin);
        }
    }
    // The plain shape is decided leanly (by the scan in the chunk).
    let line = r#"{"id":"f1","seq":3,"kind":"fact","field":"limit","value":100,"supersedes":"f0"}"#;
    let text = format!("{policy}\n{first}\n{line}\n{chatter}\n");
    let ask = Ask::Check {
        kept: Some(r#"["p1","f1"]"#),
        action: Some(ACTION),
    };
    decides(text.as_bytes(), ask);
}

/// The lean loader parsed a fact's line only when its field was one a held policy reads:
/// a fact of `customer`, the newest statement of `customer.tier`, was left unparsed, and
/// the lean report read the older `customer.tier` where the exact one reads the newer.
#[test]
fn facts_of_a_field_spelt_another_way_give_the_exact_report() {
    let policy = r#"{"id":"p1","seq":1,"kind":"policy","scope":"pay","predicate":{"field":"customer.tier","op":"eq","value":"gold"},"effect":"deny"}"#;
    let chatter = r#"{"id":"c1","seq":9,"kind":"chatter","text":"hi"}"#;
    for (old, new) in [
        (
            r#"{"id":"f1","seq":2,"kind":"fact","field":"customer.tier","value":"standard"}"#,
            r#"{"id":"f2","seq":3,"kind":"fact","field":"customer","value":{"tier":"gold"}}"#,
        ),
        (
            r#"{"id":"f1","seq":2,"kind":"fact","field":"customer","value":{"tier":"standard"}}"#,
            r#"{"id":"f2","seq":3,"kind":"fact","field":"customer.tier","value":"gold"}"#,
        ),
        (
            r#"{"id":"f1","seq":2,"kind":"fact","field":"customer.tier","value":"gold"}"#,
            r#"{"id":"f2","seq":3,"kind":"fact","field":"customer.tier.level","value":3}"#,
        ),
    ] {
        let text = format!("{policy}\n{old}\n{new}\n{chatter}\n");
        let bytes = text.as_bytes();
        for kept in [r#"["p1","f1","c1"]"#, r#"["p1","f2"]"#, r#"["c1"]"#] {
            let ask = Ask::Check {
                kept: Some(kept),
                action: Some(r#"{"tool":"pay","params":{}}"#),
            };
            decides(bytes, ask);
            agrees(bytes, Ask::Precheck { kept: Some(kept) });
        }
        agrees(bytes, Ask::Pin);
    }
}

/// An effect whose `match` gives one field twice (a dotted key and nested objects), or
/// gives a field as a dotted key beside an array or a string on its path, is invalid
/// input. The light scan, which only hashes an effect of a tool the command
/// does not judge, took its `match` for any object, and the lean report passed what the
/// exact loader refuses.
#[test]
fn an_effect_match_giving_one_field_twice_is_left_to_the_exact_loader() {
    let policy = r#"{"id":"p1","seq":1,"kind":"policy","scope":"pay","predicate":{"field":"amount","op":"gt","value":5},"effect":"deny"}"#;
    let chatter = r#"{"id":"c1","seq":9,"kind":"chatter","text":"hi"}"#;
    for tool in ["other", "pay"] {
        for matches in [
            r#"{"invoice.id":"A","invoice":{"id":"B"}}"#,
            r#"{"invoice":{"id":"A"},"invoice.id":"A"}"#,
            r#"{"a":{"b.c":1},"a.b":{"c":2}}"#,
            r#"{"invoice\u002eid":"A","invoice":{"id":"B"}}"#,
            // An object one way and a scalar the other.
            r#"{"invoice.id":{"n":1},"invoice":{"id":5}}"#,
            r#"{"a.b":{"c":1},"a":{"b":{"d":2}}}"#,
            // A key with dots beside an array or a string on its path.
            r#"{"items.0.amount":1,"items":[{"amount":9000}]}"#,
            r#"{"s.length":1,"s":"abc"}"#,
            r#"{"a":{"items.0":1},"a.items":[2]}"#,
        ] {
            let effect = format!(
                r#"{{"id":"e1","seq":2,"kind":"effect","tool":"{tool}","match":{matches}}}"#
            );
            let text = format!("{policy}\n{effect}\n{chatter}\n");
            let bytes = text.as_bytes();
            for kept in [r#"["p1","c1"]"#, r#"["p1","e1","c1"]"#] {
                let ask = Ask::Check {
                    kept: Some(kept),
                    action: Some(ACTION),
                };
                refused(bytes, ask);
                refused(bytes, Ask::Precheck { kept: Some(kept) });
            }
            refused(bytes, Ask::Pin);
        }
        // A dot in a key that spells no field twice is decided leanly.
        let effect = format!(
            r#"{{"id":"e1","seq":2,"kind":"effect","tool":"{tool}","match":{{"invoice.id":"A","invoice":{{"no":"1.5"}}}}}}"#
        );
        let text = format!("{policy}\n{effect}\n{chatter}\n");
        let ask = Ask::Check {
            kept: Some(r#"["p1","c1"]"#),
            action: Some(ACTION),
        };
        decides(text.as_bytes(), ask);
    }
}

/// A fact whose object `value` gives one field twice (a dotted key and nested objects),
/// or gives a field as a dotted key beside an array or a string on its path, is invalid
/// input. The fact scan, which reads a fact the command does not consult (an
/// older statement of its field, or a field no rule reads) without parsing its value,
/// took any object, and the lean report passed what the exact loader refuses.
#[test]
fn a_fact_value_giving_one_field_twice_is_left_to_the_exact_loader() {
    let policy = r#"{"id":"p1","seq":1,"kind":"policy","scope":"pay","predicate":{"field":"a.b.c","op":"eq","value":1},"effect":"deny"}"#;
    let newer = r#"{"id":"f2","seq":5,"kind":"fact","field":"a","value":{"b":{"c":3}}}"#;
    let chatter = r#"{"id":"c1","seq":9,"kind":"chatter","text":"hi"}"#;
    for field in ["a", "other"] {
        for value in [
            r#"{"b":{"c":1},"b.c":2}"#,
            r#"{"b.c":1,"b":{"c":1}}"#,
            r#"{"x":[{"y.z":1}],"b":{"c.d":1},"b.c":{"d":2}}"#,
            // The dot written as an escape.
            r#"{"b\u002ec":2,"b":{"c":1}}"#,
            // An object one way and a scalar the other.
            r#"{"b.c":{"d":1},"b":{"c":5}}"#,
            r#"{"b\u002ec":{"d":1},"b":{"c":{"e":2}}}"#,
            // A key with dots beside an array or a string on its path.
            r#"{"b.c.0":1,"b":{"c":[9000]}}"#,
            r#"{"s.length":1,"s":"abc"}"#,
            r#"{"x":{"items.0":1},"x.items":"abc"}"#,
        ] {
            let fact =
                format!(r#"{{"id":"f1","seq":2,"kind":"fact","field":"{field}","value":{value}}}"#);
            let text = format!("{policy}\n{fact}\n{newer}\n{chatter}\n");
            let bytes = text.as_bytes();
            for kept in [r#"["p1","c1"]"#, r#"["p1","f1","f2"]"#] {
                let ask = Ask::Check {
                    kept: Some(kept),
                    action: Some(r#"{"tool":"pay","params":{}}"#),
                };
                refused(bytes, ask);
                refused(bytes, Ask::Precheck { kept: Some(kept) });
            }
            refused(bytes, Ask::Pin);
        }
        // A dot in a key that spells no field twice is decided leanly.
        let fact = format!(
            r#"{{"id":"f1","seq":2,"kind":"fact","field":"{field}","value":{{"b.c":1,"b":{{"d":"1.5"}}}}}}"#
        );
        let text = format!("{policy}\n{fact}\n{newer}\n{chatter}\n");
        let ask = Ask::Check {
            kept: Some(r#"["p1","c1"]"#),
            action: Some(r#"{"tool":"pay","params":{}}"#),
        };
        decides(text.as_bytes(), ask);
    }
}

#[test]
fn large_heads_tails_and_records_are_read_whole() {
    // A head past the first read (64 KiB), a tail past the first read (4 MiB), a record
    // past the chunk size: each is read again larger.
    let big = "w".repeat(5 << 20);
    for members in [
        vec![
            format!("\"meta\":\"{}\"", &big[..200_000]),
            "records".into(),
            "kept".into(),
            "action".into(),
        ],
        vec![
            "records".into(),
            "kept".into(),
            format!("\"meta\":[\"{big}\"]"),
            "action".into(),
        ],
    ] {
        let members: Vec<&str> = members.iter().map(String::as_str).collect();
        let text = doc(&members, ",");
        decides(text.as_bytes(), CHECK);
    }
    let huge = format!(
        r#"{{"id":"h","seq":77,"kind":"chatter","text":"{}"}}"#,
        &big[..3 << 20]
    );
    let text = format!(
        "{{\"records\":[{},{huge},{}],\"kept\":{KEPT},\"action\":{ACTION}}}",
        RECORDS[..4].join(","),
        RECORDS[4..].join(",")
    );
    decides(text.as_bytes(), CHECK);
}

// -------------------------------------------------------------------------------------
// Random documents

fn record_text() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "hi",
        "},{\\\"id\\\":\\\"r1\\\",\\\"seq\\\":1}",
        "}],\\\"kept\\\":[\\\"r1\\\"]}",
        "}]",
        "}],",
        "a\\nb",
        "\\u00e9",
        "",
    ])
    .prop_map(str::to_string)
}

fn body() -> impl Strategy<Value = String> {
    let value = prop::sample::select(vec!["1", "5000", "\"eu\"", "[1,2]", "{\"a\":[{}]}"]);
    prop_oneof![
        4 => record_text().prop_map(|t| format!(r#""kind":"chatter","text":"{t}""#)),
        1 => Just(r#""kind":"chatter","meta":{"x":[{"y":"}]"}]}"#.to_string()),
        2 => (prop::sample::select(vec!["amount", "region"]), value.clone())
            .prop_map(|(f, v)| format!(r#""kind":"fact","field":"{f}","value":{v}"#)),
        2 => (
            prop::sample::select(vec!["pay", "pay*", "other"]),
            prop::sample::select(vec!["allow", "deny"]),
            prop::sample::select(vec![
                r#"{"field":"amount","op":"gt","value":100}"#,
                r#"{"all":[{"field":"region","op":"eq","value":"eu"},{"any":[]}]}"#,
                r#"{"not":{"field":"amount","op":"in","value":[1,5000]}}"#,
            ]),
        )
            .prop_map(|(s, e, p)| format!(r#""kind":"policy","scope":"{s}","effect":"{e}","predicate":{p}"#)),
        1 => value.prop_map(|v| format!(r#""kind":"effect","tool":"pay","match":{{"amount":{v}}}"#)),
        1 => Just(r#""kind":"summary","text":"prose","tokens":4"#.to_string()),
        // A misspelt kind: unevaluable, and noted kept or dropped.
        1 => Just(r#""kind":"Policy","scope":"pay","text":"a rule""#.to_string()),
    ]
}

/// A random document: records in random order of seq, random whitespace between items,
/// some records spread over lines, the top-level keys in a random order, and then maybe
/// broken by one random edit.
fn document() -> impl Strategy<Value = (String, Vec<String>)> {
    (
        prop::collection::vec((body(), any::<bool>()), 1..12),
        prop::collection::vec(
            prop::sample::select(vec![",", " ,", ",\n", "\n,\r\n\t"]),
            12,
        ),
        any::<u64>(),
        prop::collection::vec(any::<bool>(), 12),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(bodies, seps, order, kept_mask, with_tools, with_meta)| {
            let mut ids = Vec::new();
            let mut items = Vec::new();
            for (i, (body, spread)) in bodies.iter().enumerate() {
                let id = format!("r{i}");
                let seq = (i * 7919 + 13) % 101;
                let text = format!(r#"{{"id":"{id}","seq":{seq},{body}}}"#);
                items.push(if *spread {
                    text.replace(",\"", ",\n  \"")
                } else {
                    text
                });
                ids.push(id);
            }
            let mut records = String::new();
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    records.push_str(seps[i % seps.len()]);
                }
                records.push_str(item);
            }
            let kept: Vec<String> = ids
                .iter()
                .zip(&kept_mask)
                .filter(|(_, k)| **k)
                .map(|(id, _)| format!("\"{id}\""))
                .collect();
            let mut members = vec![
                format!("\"records\":[{records}]"),
                format!("\"kept\":[{}]", kept.join(",")),
                format!(
                    "\"action\":{{\"tool\":\"pay\",\"params\":{{\"amount\":{}}}}}",
                    order % 7000
                ),
            ];
            if with_tools {
                members.push(format!("\"tools\":{TOOLS}"));
            }
            if with_meta {
                members.push(r#""meta":[{"a":"}]"},{"b":[]}]"#.to_string());
            }
            // A random order of the members.
            let mut order = order;
            for i in (1..members.len()).rev() {
                let j = (order % (i as u64 + 1)) as usize;
                order /= i as u64 + 1;
                members.swap(i, j);
            }
            (format!("{{{}}}", members.join(",")), ids)
        })
}

/// One random edit: cut, insert or delete.
fn edit() -> impl Strategy<Value = Option<(u8, usize, &'static str)>> {
    prop::option::of((
        0u8..3,
        any::<usize>(),
        prop::sample::select(vec![
            ",",
            "]",
            "}",
            "{",
            "\"",
            "x",
            " ",
            "],\"kept\":[]",
            "},{\"id\":\"q\"}",
            "\\",
        ]),
    ))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    /// Random documents, whole or broken by one edit: where the lean loader decides, for
    /// check, precheck and pin, it decides as the exact loader does; on a whole document
    /// it decides.
    #[test]
    fn lean_and_exact_agree_on_random_documents((text, _ids) in document(), edit in edit()) {
        let text = match edit {
            None => text,
            Some((op, at, piece)) => {
                let mut at = at % (text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                match op {
                    0 => text[..at].to_string(),
                    1 => format!("{}{piece}{}", &text[..at], &text[at..]),
                    _ => {
                        let next = text[at..].chars().next().map_or(0, char::len_utf8);
                        format!("{}{}", &text[..at], &text[at + next..])
                    }
                }
            }
        };
        let bytes = text.as_bytes();
        let fell_back = agrees(bytes, CHECK);
        agrees(bytes, Ask::Precheck { kept: None });
        agrees(bytes, Ask::Pin);
        agrees(bytes, Ask::Check { kept: Some("r0"), action: Some(r#"{"tool":"pay"}"#) });
        if edit.is_none() && exact(bytes, CHECK).is_some() {
            prop_assert!(!fell_back.iter().any(|&c| must_decide(c)), "{:?}: {}", fell_back, text);
        }
    }
}

// -------------------------------------------------------------------------------------
// Random record streams

/// One change to a record line, which the exact loader may accept or refuse (the loaders
/// must agree either way): an escaped key, a key given twice, an odd number, an escape in
/// an id or a text, whitespace (JSON's, and not).
fn line_edit() -> impl Strategy<Value = (&'static str, &'static str)> {
    prop::sample::select(vec![
        ("\"kind\"", "\"k\\u0069nd\""),
        ("\"seq\"", "\"s\\u0065q\""),
        ("\"id\"", "\"\\u0069d\""),
        ("\"field\"", "\"fi\\u0065ld\""),
        ("\"kind\":", "\"k\\u0069nd\":\"chatter\",\"kind\":"),
        ("\"kind\":", "\"kind\":\"policy\",\"kind\":"),
        ("\"value\":", "\"value\":0,\"value\":"),
        ("\"op\":", "\"op\":\"eq\",\"op\":"),
        ("\"text\":", "\"meta\":{\"a\":1,\"\\u0061\":2},\"text\":"),
        (",\"kind\"", ".0,\"kind\""),
        (",\"kind\"", "e0,\"kind\""),
        (",\"kind\"", "0,\"kind\""),
        ("\"seq\":", "\"seq\":-"),
        ("5000", "5e3"),
        ("5000", "5000.0000000000000001"),
        ("100", "1e400"),
        ("1,", "-0,"),
        ("1,", "1.0,"),
        ("\"id\":\"r", "\"id\":\"\\u0072"),
        ("\"id\":\"r", "\"id\":\"r\\\""),
        ("\"hi\"", "\"h\\u0069\""),
        ("\"hi\"", "\"\\ud800\""),
        ("\"hi\"", "\"a\\/b\\u0000\""),
        ("\"eu\"", "\"\\u0065u\""),
        (",", " ,\t"),
        (":", "\r:"),
        ("{", "{\u{c}"),
        ("}", "}\u{a0}"),
        ("}", "}\u{0}"),
    ])
}

/// A random record stream: the records of [`body`] one per line, in random order of
/// `seq`, with `\n` or `\r\n` line ends and blank lines between them; some lines changed
/// by [`line_edit`]. With the ids, and whether a line was changed.
fn record_stream() -> impl Strategy<Value = (String, Vec<String>, bool)> {
    (
        prop::collection::vec(body(), 1..12),
        prop::collection::vec(
            prop::sample::select(vec!["\n", "\r\n", "\n\n", "\n \t\n"]),
            12,
        ),
        prop::collection::vec((any::<prop::sample::Index>(), line_edit()), 0..3),
        prop::sample::select(vec!["", "\n", "\r\n", "\n\n"]),
    )
        .prop_map(|(bodies, seps, edits, end)| {
            let mut lines: Vec<String> = bodies
                .iter()
                .enumerate()
                .map(|(i, body)| {
                    format!(r#"{{"id":"r{i}","seq":{},{body}}}"#, (i * 7919 + 13) % 101)
                })
                .collect();
            let mut edited = false;
            for (at, (from, to)) in &edits {
                let line = at.get_mut(&mut lines);
                if line.contains(from) {
                    *line = line.replacen(from, to, 1);
                    edited = true;
                }
            }
            let mut text = String::new();
            for (i, line) in lines.iter().enumerate() {
                if i > 0 {
                    text.push_str(seps[i % seps.len()]);
                }
                text.push_str(line);
            }
            text.push_str(end);
            let ids = (0..lines.len()).map(|i| format!("r{i}")).collect();
            (text, ids, edited)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    /// Random record streams, whole or with odd lines, cut in chunks of every size: where
    /// the lean loader decides, for check, precheck and pin, it decides as the exact
    /// loader does; on a stream the exact loader accepts as generated, it decides.
    #[test]
    fn lean_and_exact_agree_on_random_record_streams(
        (text, ids, edited) in record_stream(),
        kept_mask in prop::collection::vec(any::<bool>(), 12),
        amount in prop::sample::select(vec!["5000", "5000.0", "5e3", "4999", "70", "\"5000\"", "null"]),
    ) {
        let kept: Vec<&str> = ids
            .iter()
            .zip(&kept_mask)
            .filter(|(_, k)| **k)
            .map(|(id, _)| id.as_str())
            .collect();
        let kept_json = serde_json::to_string(&kept).unwrap();
        let action = format!(r#"{{"tool":"pay","params":{{"amount":{amount},"region":"eu"}}}}"#);
        let bytes = text.as_bytes();
        let check = Ask::Check { kept: Some(&kept_json), action: Some(&action) };
        let fell_back = agrees(bytes, check);
        agrees(bytes, Ask::Check { kept: Some("r0"), action: Some(r#"{"tool":"other"}"#) });
        agrees(bytes, Ask::Precheck { kept: Some(&kept_json) });
        agrees(bytes, Ask::Pin);
        if !edited && exact(bytes, check).is_some() {
            prop_assert!(fell_back.is_empty(), "{:?}: {}", fell_back, text);
        }
    }
}

// -------------------------------------------------------------------------------------
// Kept ids that differ only in whitespace or case

/// Ids built from a few names with whitespace (and invisible characters) around or inside
/// them, and a change of case: near-duplicates of each other.
fn near_id() -> impl Strategy<Value = String> {
    let decoration = prop::sample::select(vec![
        "", " ", "\t", "\u{a0}", "\u{3000}", "\u{2003}", "\u{200b}", "\u{feff}", "\u{b}", "\u{c}",
        "\u{85}", "\u{2028}",
    ]);
    (
        prop::sample::select(vec!["p", "f_1", "a", "P", "f_01"]),
        decoration.clone(),
        decoration.clone(),
        decoration,
    )
        .prop_map(|(base, before, inside, after)| {
            let (head, tail) = base.split_at(1);
            format!("{before}{head}{inside}{tail}{after}")
        })
}

/// A kept flag's text: inline (commas) or a file (LF or CRLF lines, with or without a
/// final line end).
fn kept_text(ids: &[String], form: u8) -> (String, bool) {
    match form % 4 {
        0 => (ids.join(","), false),
        1 => (ids.join("\n"), true),
        2 => (format!("{}\n", ids.join("\n")), true),
        _ => (format!("{}\r\n", ids.join("\r\n")), true),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Whatever whitespace the ids carry, the kept set is exactly the records whose ids
    /// the kept list spells byte for byte, on both loaders; a kept id that spells none
    /// is refused by both.
    #[test]
    fn the_kept_set_changes_only_by_exact_match(
        store_ids in prop::collection::btree_set(near_id(), 1..8),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
        strays in prop::collection::vec(near_id(), 0..2),
        form in any::<u8>(),
    ) {
        let store_ids: Vec<String> = store_ids.into_iter().collect();
        let lines: String = store_ids
            .iter()
            .enumerate()
            .map(|(i, id)| format!("{}\n", serde_json::json!({"id": id, "seq": i, "kind": "chatter"})))
            .collect();
        let mut kept: Vec<String> = picks.iter().map(|ix| ix.get(&store_ids).clone()).collect();
        kept.extend(strays);
        let (text, from_file) = kept_text(&kept, form);
        let exact = load("s.jsonl", lines.as_bytes(), Limits::default()).unwrap();
        let ids = kept_from_flag("--kept", &text, from_file).unwrap();
        prop_assert_eq!(&ids, &kept);
        let names_all = kept.iter().all(|k| store_ids.contains(k));
        let exact = Compaction::new(&exact.store, Retention::Given, Some(&ids))
            .map(|c| kept_set(&exact, &c, &store_ids));
        let action = Action::from_json(&serde_json::json!({"tool": "t"})).unwrap();
        let purpose = Purpose::Check(Some(action));
        let flag = KeptIds::flag(Some((text.as_str(), from_file)));
        let lean = flag
            .and_then(|k| {
                let (first, rest) = (lines.as_bytes().into(), std::iter::empty());
                load_lean_with(first, rest, &mut lines.as_bytes(), k, purpose, Limits::default(), Ok)
            })
        .map(|l| kept_set(&l.input, &l.compaction, &store_ids));
        let want: BTreeSet<String> = kept.iter().cloned().collect();
        if names_all {
            prop_assert_eq!(exact.as_ref().ok(), Some(&want));
            prop_assert_eq!(lean.ok(), Some(want));
        } else {
            prop_assert!(exact.is_err());
            prop_assert!(lean.is_err());
        }
    }
}

fn kept_set(input: &Input, compaction: &Compaction, ids: &[String]) -> BTreeSet<String> {
    ids.iter()
        .filter(|id| compaction.is_kept_id(&input.store, &input.totals, id))
        .cloned()
        .collect()
}

// -------------------------------------------------------------------------------------
// The tool names the records give, as the hook reads them

/// Names a store may give: the harnesses' own, as another harness or case gives them,
/// globs, MCP names both ways.
const NAMES: [&str; 9] = [
    "Bash",
    "bash",
    "B*",
    "*",
    "Edit",
    "MultiEdit",
    "run_shell_command",
    "mcp__s__t",
    "mcp_s_t",
];

/// `matches` of effects: none, and some that replay different calls; some the same
/// `match` written otherwise (escapes, key order, whitespace), some numbers whose
/// canonical text differs (`1.0`, `1e0`, `-0`, past u64) or keys that need escaping.
const MATCHES: [&str; 11] = [
    "{}",
    r#"{"command":"ls"}"#,
    r#"{"n":1,"command":"rm"}"#,
    r#"{ "command" : "r\u006d" , "n" : 1 }"#,
    r#"{"n":1.0,"command":"rm"}"#,
    r#"{"n":1e0,"command":"rm"}"#,
    r#"{"n":-0,"command":"rm"}"#,
    r#"{"n":0,"command":"rm"}"#,
    r#"{"n":18446744073709551616,"k\"\u00e9\n":[1,{"b":null,"a":-12}]}"#,
    r#"{"n":-9223372036854775809,"\u0000":"\/"}"#,
    r#"{"n":1E+2,"m":100,"o":0.10}"#,
];

/// A record that gives names, or one that gives none.
#[derive(Debug, Clone)]
enum Giver {
    /// Indices into [`NAMES`] (repeats kept), whether the scope is written as a string
    /// (one name), whether `Bash` is written with an escape, and which earlier policy it
    /// supersedes and which earlier record it depends on (by a number taken modulo).
    Policy {
        scope: Vec<usize>,
        string: bool,
        escaped: bool,
        supersedes: Option<usize>,
        depends_on: Option<usize>,
    },
    /// An index into [`NAMES`] and one into [`MATCHES`].
    Effect {
        tool: usize,
        matches: usize,
    },
    Other(&'static str),
}

fn giver() -> impl Strategy<Value = Giver> {
    let policy = (
        prop::collection::vec(0..NAMES.len(), 1..4),
        any::<bool>(),
        any::<bool>(),
        prop::option::of(any::<usize>()),
        prop::option::of(any::<usize>()),
    )
        .prop_map(
            |(scope, string, escaped, supersedes, depends_on)| Giver::Policy {
                scope,
                string,
                escaped,
                supersedes,
                depends_on,
            },
        );
    prop_oneof![
        4 => policy,
        3 => (0..NAMES.len(), 0..MATCHES.len())
            .prop_map(|(tool, matches)| Giver::Effect { tool, matches }),
        1 => prop::sample::select(vec![
            r#""kind":"fact","field":"amount","value":1"#,
            r#""kind":"chatter","text":"hi""#,
            r#""kind":"summary","text":"earlier""#,
        ])
        .prop_map(Giver::Other),
    ]
}

/// The records' lines (ids `r0`, `r1`, ...; `seq` in order).
fn giver_lines(givers: &[Giver]) -> Vec<String> {
    let mut policies: Vec<String> = Vec::new();
    let mut lines = Vec::new();
    for (i, g) in givers.iter().enumerate() {
        let id = format!("r{i}");
        let body = match g {
            Giver::Policy {
                scope,
                string,
                escaped,
                supersedes,
                depends_on,
            } => {
                let names: Vec<&str> = scope
                    .iter()
                    .filter_map(|&n| NAMES.get(n).copied())
                    .collect();
                let mut scope = match (string, names.as_slice()) {
                    (true, [one]) => serde_json::to_string(one).unwrap(),
                    _ => serde_json::to_string(&names).unwrap(),
                };
                if *escaped {
                    scope = scope.replace("\"Bash\"", "\"B\\u0061sh\"");
                }
                let mut body = format!(
                    r#""kind":"policy","scope":{scope},"predicate":{{"all":[]}},"effect":"deny""#
                );
                if let Some(s) = supersedes
                    && !policies.is_empty()
                {
                    let target = &policies[s % policies.len()];
                    body.push_str(&format!(r#","supersedes":"{target}""#));
                }
                if let Some(d) = depends_on
                    && i > 0
                {
                    body.push_str(&format!(r#","depends_on":["r{}"]"#, d % i));
                }
                policies.push(id.clone());
                body
            }
            Giver::Effect { tool, matches } => format!(
                r#""kind":"effect","tool":"{}","match":{}"#,
                NAMES[*tool], MATCHES[*matches]
            ),
            Giver::Other(body) => body.to_string(),
        };
        lines.push(format!(r#"{{"id":"{id}","seq":{},{body}}}"#, i + 1));
    }
    lines
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The names the lean loader gathers (each with the names every policy giving it
    /// gives, and the `match` of each effect giving it), read from records spread over
    /// chunks and both workers, held or not, on the strict path or the light one, are
    /// the exact loader's: the hook's check of a name the harness never sends reads them.
    #[test]
    fn lean_and_exact_loads_give_the_same_names(
        givers in prop::collection::vec(giver(), 1..12),
        kept_mask in prop::collection::vec(any::<bool>(), 12),
        tool in 0..NAMES.len(),
    ) {
        let lines = giver_lines(&givers);
        let jsonl: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let Ok(exact) = load("in.jsonl", jsonl.as_bytes(), Limits::default()) else {
            return Ok(());
        };
        let kept: Vec<String> = (0..lines.len())
            .filter(|&i| kept_mask.get(i).copied().unwrap_or(false))
            .map(|i| format!("r{i}"))
            .collect();
        let kept_flag = kept.join(",");
        let action = serde_json::json!({"tool": NAMES[tool].replace('*', "x")});
        for which in ["check", "precheck", "pin"] {
            let purpose = match which {
                "check" => Purpose::Check(Some(Action::from_json(&action).unwrap())),
                "precheck" => Purpose::Precheck(None),
                _ => Purpose::Pin(None),
            };
            // One chunk per line: the two workers share them.
            let mut chunks = lines.iter().map(|l| format!("{l}\n").into_bytes());
            let first = chunks.next().unwrap_or_default();
            let lean = load_lean_with(
                first.into(),
                chunks.map(|c| Ok(c.into())),
                &mut jsonl.as_bytes(),
                KeptIds::flag(Some((kept_flag.as_str(), false))).unwrap(),
                purpose,
                Limits::default(),
                Ok,
            );
            if let Ok(lean) = lean {
                prop_assert_eq!(&lean.input.totals.named, &exact.totals.named, "{}", which);
            }
        }
        // The same records in a document, cut in chunks of a few sizes.
        let kept_json = serde_json::to_string(&kept).unwrap();
        let doc = format!(r#"{{"records":[{}],"kept":{kept_json}}}"#, lines.join(",\n"));
        let exact = load("in.json", doc.as_bytes(), Limits::default()).unwrap();
        for chunk in [23, 64, 1 << 20] {
            let mut whole = Mem { bytes: doc.as_bytes(), chunk };
            let lean = load_lean_with(
                doc.as_bytes().into(),
                std::iter::empty(),
                &mut whole,
                KeptIds::flag(None).unwrap(),
                Purpose::Check(Some(Action::from_json(&action).unwrap())),
                Limits::default(),
                Ok,
            );
            if let Ok(lean) = lean {
                prop_assert_eq!(&lean.input.totals.named, &exact.totals.named, "chunk {}", chunk);
            }
        }
    }
}
