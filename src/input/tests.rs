//! Tests of loading, flag values and the lean entry points.

use super::lean::{KeptIds, LeanFor, Purpose, load_lean_with};
use super::*;
use crate::compaction::Compaction;

fn load_str(text: &str) -> Result<Input, InputError> {
    load("in.json", text.as_bytes(), Limits::default())
}

#[test]
fn forms_are_told_apart_by_the_first_value() {
    let doc =
        load_str(r#"{"records":[{"id":"a","seq":1,"kind":"chatter"}],"kept":["a"]}"#).unwrap();
    assert_eq!(doc.store.len(), 1);
    assert_eq!(doc.kept, Some(vec!["a".to_string()]));
    let stream = load_str("{\"id\":\"a\",\"seq\":2,\"kind\":\"chatter\"}\n\n{\"id\":\"b\",\"seq\":1,\"kind\":\"chatter\"}\n").unwrap();
    assert_eq!(stream.store.len(), 2);
    assert_eq!(stream.store.get(0).unwrap().id, "b");
}

#[test]
fn stream_errors_name_the_line() {
    let err =
        load_str("{\"id\":\"a\",\"seq\":1,\"kind\":\"chatter\"}\n{\"id\":\"b\",\n").unwrap_err();
    assert!(err.to_string().starts_with("in.json:2:"), "{err}");
    let err = load_str("{\"id\":\"a\",\"seq\":1,\"kind\":\"chatter\"}\n\n[1]\n").unwrap_err();
    assert!(err.to_string().contains("line 3"), "{err}");
}

#[test]
fn empty_and_bom_inputs() {
    assert!(load_str("").is_err());
    assert!(load_str(" \n ").is_err());
    assert!(load("x", b"\xEF\xBB\xBF{\"records\":[]}", Limits::default()).is_ok());
}

#[test]
fn unknown_document_keys_and_trailing_data_are_refused() {
    assert!(load_str(r#"{"records":[],"kpet":[]}"#).is_err());
    let err = load_str("{\"records\":[]}\n{}").unwrap_err();
    assert!(err.to_string().starts_with("in.json:2:"), "{err}");
}

#[test]
fn kept_flag_forms() {
    // Ids as written: nothing trimmed, empty entries passed over.
    assert_eq!(
        kept_from_flag("--kept", "a, b,,c ,", false).unwrap(),
        ["a", " b", "c "]
    );
    assert_eq!(
        kept_from_flag("k.txt", "a\nb\r\n\n \n\tc\r\r\n\u{a0}", true).unwrap(),
        ["a", "b", " ", "\tc\r", "\u{a0}"]
    );
    // A `\r` is a line terminator only before a `\n`: a file's last id ending in one
    // keeps it (read as `p1`, it kept the record `p1` for the record `p1\r`, and a
    // policy `p1` the compactor dropped was judged kept).
    assert_eq!(
        kept_from_flag("k.txt", "a\r\np1\r", true).unwrap(),
        ["a", "p1\r"]
    );
    // Inline, a `\r` or a byte-order mark is part of an id; in a file, a byte-order mark
    // is skipped only before a JSON array.
    assert_eq!(
        kept_from_flag("--kept", "a\r,\u{feff}b", false).unwrap(),
        ["a\r", "\u{feff}b"]
    );
    assert_eq!(
        kept_from_flag("k.txt", "\u{feff}a\n", true).unwrap(),
        ["\u{feff}a"]
    );
    assert_eq!(
        kept_from_flag("k.json", "\u{feff} [\"a\"]\n", true).unwrap(),
        ["a"]
    );
    // Only JSON whitespace may come before a JSON array's `[`.
    assert_eq!(
        kept_from_flag("k.txt", "\u{c}[\"a\"]", true).unwrap(),
        ["\u{c}[\"a\"]"]
    );
    assert_eq!(kept_from_flag("k.json", "[\"a\"]", true).unwrap(), ["a"]);
    assert!(kept_from_flag("k.json", "[1]", true).is_err());
    assert!(kept_from_flag("--kept", "", false).unwrap().is_empty());
}

#[test]
fn a_plain_kept_list_that_names_no_id_is_refused() {
    for (text, from_file) in [("", false), (",", false), (",,", false), ("", true)] {
        let err = kept_names_an_id("--kept", text, from_file).unwrap_err();
        assert!(
            err.to_string().contains("names no record id"),
            "{text:?}: {err}"
        );
    }
    assert!(kept_names_an_id("k.txt", "\n\r\n\n", true).is_err());
    // `[]` says that nothing was kept; any id (a space is one) is read.
    for (text, from_file) in [("[]", false), (" [ ]\n", true), ("a", false), (" ", false)] {
        assert!(
            kept_names_an_id("--kept", text, from_file).is_ok(),
            "{text:?}"
        );
    }
    // A comma in a line of a file is part of an id.
    assert!(kept_names_an_id("k.txt", ",\n", true).is_ok());
}

fn lean(text: &str, kept: Option<&str>, action: Option<&str>) -> Result<LeanFor, Fallback> {
    let action = action.map(|a| action_from_flag("--action", a).unwrap());
    lean_for(text, kept, Purpose::Check(action))
}

fn exact_report(text: &str, kept: Option<&str>, action: &str) -> Vec<u8> {
    let input = load_str(text).unwrap();
    let kept = match kept {
        Some(k) => kept_from_flag("--kept", k, false).unwrap(),
        None => input.kept.clone().unwrap(),
    };
    let c = Compaction::new(
        &input.store,
        crate::compaction::Retention::Given,
        Some(&kept),
    )
    .unwrap();
    let a = action_from_flag("--action", action).unwrap();
    let outcome = crate::gate::check(&input.store, &c, &input.totals, &a, Default::default());
    crate::report::Report::check(&a, &c, &input.totals, outcome).render(crate::report::Format::Json)
}

fn lean_report(l: &LeanFor) -> Vec<u8> {
    let action = l.action.as_ref().unwrap();
    let outcome = crate::gate::check(
        &l.input.store,
        &l.compaction,
        &l.input.totals,
        action,
        Default::default(),
    );
    crate::report::Report::check(action, &l.compaction, &l.input.totals, outcome)
        .render(crate::report::Format::Json)
}

const STORE: &str = concat!(
    "{\"id\":\"c1\",\"seq\":1,\"kind\":\"chatter\",\"text\":\"hello \\t there\"}\n",
    "{\"id\":\"f1\",\"seq\":2,\"kind\":\"fact\",\"field\":\"limit\",\"value\":100}\n",
    "{\"id\":\"p1\",\"seq\":3,\"kind\":\"policy\",\"scope\":\"pay\",\"predicate\":{\"field\":\"amount\",\"op\":\"gt\",\"value\":{\"x\":1}},\"effect\":\"deny\"}\n",
    "{\"id\":\"p2\",\"seq\":4,\"kind\":\"policy\",\"scope\":\"other\",\"predicate\":{\"all\":[]},\"effect\":\"deny\"}\n",
    "\n",
    "{\"id\":\"f2\",\"seq\":5,\"kind\":\"fact\",\"field\":\"limit\",\"value\":50,\"supersedes\":\"f1\",\"depends_on\":[\"p1\"]}\n",
    "{\"id\":\"p3\",\"seq\":6,\"kind\":\"policy\",\"scope\":\"pay\",\"predicate\":{\"field\":\"amount\",\"op\":\"gt\",\"value\":\"limit\"},\"effect\":\"require_approval\",\"depends_on\":[\"f2\"]}\n",
    "{\"id\":\"s1\",\"seq\":7,\"kind\":\"summary\",\"text\":\"earlier\"}\n",
    "{\"id\":\"e1\",\"seq\":8,\"kind\":\"effect\",\"tool\":\"pay\",\"match\":{\"amount\":5}}\n",
    "{\"id\":\"c2\",\"seq\":9,\"kind\":\"chatter\",\"meta\":{\"a\":[1,2]}}\n",
    "{\"id\":\"c\\u0033\",\"seq\":10,\"kind\":\"chatter\",\"tokens\":4}\n",
);

#[test]
fn lean_load_gives_the_exact_report() {
    let action = r#"{"tool":"pay","params":{"amount":5}}"#;
    for kept in ["c1,p3,c2,c3", "f1,p1,s1", "", "c3,e1,f2,p3,c1"] {
        let l = lean(STORE, Some(kept), Some(action)).unwrap();
        assert_eq!(
            lean_report(&l),
            exact_report(STORE, Some(kept), action),
            "kept {kept}"
        );
        assert_eq!(l.input.totals.records, 10);
    }
}

#[test]
fn facts_whose_field_names_look_alike_stay_on_the_lean_path() {
    // Regression: `field_1181` and `field_1971` shared an id hash, and the load fell
    // back to the exact path (same report, seconds slower on a large store).
    let store = concat!(
        "{\"id\":\"record_0000001\",\"seq\":1,\"kind\":\"fact\",\"field\":\"field_1181\",\"value\":1}\n",
        "{\"id\":\"record_0000002\",\"seq\":2,\"kind\":\"fact\",\"field\":\"field_1971\",\"value\":2}\n",
        "{\"id\":\"record_0000003\",\"seq\":3,\"kind\":\"chatter\"}\n",
    );
    let action = r#"{"tool":"pay","params":{"amount":5}}"#;
    let l = lean(store, Some("record_0000003"), Some(action)).unwrap();
    assert_eq!(
        lean_report(&l),
        exact_report(store, Some("record_0000003"), action)
    );
}

#[test]
fn a_fact_superseding_the_last_one_met_is_linked_only_when_that_is_earlier() {
    // f1 is met first but has the later seq: f2 cannot supersede it, whatever the
    // input order, and the lean load must not take the link on trust.
    let action = r#"{"tool":"pay","params":{"amount":5}}"#;
    let bad = concat!(
        "{\"id\":\"f1\",\"seq\":2,\"kind\":\"fact\",\"field\":\"x\",\"value\":1}\n",
        "{\"id\":\"f2\",\"seq\":1,\"kind\":\"fact\",\"field\":\"x\",\"value\":2,\"supersedes\":\"f1\"}\n",
    );
    assert!(load_str(bad).is_err());
    assert!(lean(bad, Some("f1"), Some(action)).is_err());
    // g2 names f2, the fact met just before it, but of another field: refused too.
    let mixed = concat!(
        "{\"id\":\"f1\",\"seq\":1,\"kind\":\"fact\",\"field\":\"x\",\"value\":1}\n",
        "{\"id\":\"g1\",\"seq\":2,\"kind\":\"fact\",\"field\":\"y\",\"value\":1}\n",
        "{\"id\":\"f2\",\"seq\":3,\"kind\":\"fact\",\"field\":\"x\",\"value\":2,\"supersedes\":\"f1\"}\n",
        "{\"id\":\"g2\",\"seq\":4,\"kind\":\"fact\",\"field\":\"y\",\"value\":2,\"supersedes\":\"f2\"}\n",
    );
    assert!(load_str(mixed).is_err());
    assert!(lean(mixed, Some("f1"), Some(action)).is_err());
    // Without g2's link, f2's (past a fact of another field) holds.
    let good = mixed.replace(",\"supersedes\":\"f2\"}", "}");
    let l = lean(&good, Some("f1"), Some(action)).unwrap();
    assert_eq!(lean_report(&l), exact_report(&good, Some("f1"), action));
}

fn lean_for(text: &str, kept: Option<&str>, purpose: Purpose) -> Result<LeanFor, Fallback> {
    let bytes = text.as_bytes();
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    let mut start = 0;
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'\n' && i + 1 - start >= 3 {
            chunks.push(bytes[start..=i].to_vec());
            start = i + 1;
        }
    }
    chunks.push(bytes[start..].to_vec());
    let mut chunks = chunks.into_iter().filter(|c| !c.is_empty());
    let first = chunks.next().unwrap_or_default();
    load_lean_with(
        first.into(),
        chunks.map(|c| Ok(c.into())),
        &mut text.as_bytes(),
        KeptIds::flag(kept.map(|k| (k, false)))?,
        purpose,
        Limits::default(),
        Ok,
    )
}

fn tools_of(names: Option<&str>) -> Option<Vec<Tool>> {
    names.map(|n| tools_from_flag("--tools", n).unwrap())
}

#[test]
fn lean_precheck_gives_the_exact_report() {
    let options = crate::precheck::PrecheckOptions::default();
    for tools in [Some("pay"), Some("other,pay"), Some("nothing"), None] {
        for kept in ["c1,p3,c2,c3", "f1,p1,s1", "", "c3,e1,f2,p3,c1"] {
            let l = lean_for(STORE, Some(kept), Purpose::Precheck(tools_of(tools))).unwrap();
            let lean = crate::precheck::precheck(
                &l.input.store,
                &l.compaction,
                &l.input.totals,
                &l.tools,
                options,
            );
            let lean =
                crate::report::Report::precheck(&l.tools, &l.compaction, &l.input.totals, lean)
                    .render(crate::report::Format::Json);
            let input = load_str(STORE).unwrap();
            let ids = kept_from_flag("--kept", kept, false).unwrap();
            let c = Compaction::new(
                &input.store,
                crate::compaction::Retention::Given,
                Some(&ids),
            )
            .unwrap();
            let t = tools_of(tools).unwrap_or_else(|| input.tools_or_named());
            let exact = crate::precheck::precheck(&input.store, &c, &input.totals, &t, options);
            let exact = crate::report::Report::precheck(&t, &c, &input.totals, exact)
                .render(crate::report::Format::Json);
            let lean = String::from_utf8(lean).unwrap();
            assert_eq!(
                lean,
                String::from_utf8(exact).unwrap(),
                "tools {tools:?} kept {kept}"
            );
            // The lean store holds no record of a tool not listed: the note comes from
            // the names every record gives.
            let left_out = matches!(tools, Some("pay" | "nothing"));
            assert_eq!(lean.contains("not-listed"), left_out, "{tools:?}: {lean}");
        }
    }
}

#[test]
fn lean_pin_gives_the_exact_report() {
    // A chain of derivations: the pinned rule p3 needs f2, which needs p1.
    let store = format!(
        "{STORE}{}\n{}\n",
        r#"{"id":"f3","seq":20,"kind":"fact","field":"other","value":1,"depends_on":["p2"]}"#,
        r#"{"id":"p4","seq":21,"kind":"policy","scope":"pa*","predicate":{"field":"other","op":"eq","value":1},"effect":"deny","depends_on":["f3"]}"#
    );
    for tools in [
        Some("pay"),
        Some("p*"),
        Some("other"),
        Some("nothing"),
        None,
    ] {
        let l = lean_for(&store, None, Purpose::Pin(tools_of(tools))).unwrap();
        let lean = crate::pin::report(
            &l.input.store,
            &l.input.totals.named,
            &l.tools,
            None,
            crate::PinOptions {
                max_calls: 64,
                ..Default::default()
            },
        )
        .render(crate::report::Format::Json);
        let input = load_str(&store).unwrap();
        let t = tools_of(tools).unwrap_or_else(|| input.tools_or_named());
        let exact = crate::pin::report(
            &input.store,
            &input.totals.named,
            &t,
            None,
            crate::PinOptions {
                max_calls: 64,
                ..Default::default()
            },
        )
        .render(crate::report::Format::Json);
        let lean = String::from_utf8(lean).unwrap();
        assert_eq!(lean, String::from_utf8(exact).unwrap(), "tools {tools:?}");
        // `p*` covers the scope `pa*` as text, and `pay`, not `other`.
        assert_eq!(
            lean.contains("not-listed"),
            tools.is_some(),
            "{tools:?}: {lean}"
        );
    }
}

#[test]
fn lean_store_holds_only_what_a_check_reads() {
    let l = lean(STORE, Some("c1"), Some(r#"{"tool":"pay"}"#)).unwrap();
    let held: Vec<&str> = l
        .input
        .store
        .records()
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    // p2 is out of scope; f1 and f2 are facts of `limit`, which no held policy reads
    // (f1 is not even the newest); chatter is counted.
    assert_eq!(held, ["p1", "p3", "s1", "e1"]);
    assert_eq!(l.input.totals.records, 10);
    assert_eq!(
        l.input.totals.named.iter().collect::<Vec<_>>(),
        ["other", "pay"]
    );
}

#[test]
fn lean_totals_name_the_tools_as_the_exact_load_does() {
    // Names given in several records (some held, some not; each small chunk its own
    // batch, read by either worker), and by effects.
    let store = concat!(
        r#"{"id":"a","seq":1,"kind":"policy","scope":["Bash","bash"],"predicate":{"all":[]},"effect":"deny"}"#,
        "\n",
        r#"{"id":"b","seq":2,"kind":"policy","scope":["Bash"],"predicate":{"all":[]},"effect":"allow"}"#,
        "\n",
        r#"{"id":"c","seq":3,"kind":"policy","scope":["bash","Monitor"],"predicate":{"all":[]},"effect":"deny"}"#,
        "\n",
        r#"{"id":"d","seq":4,"kind":"effect","tool":"run_shell_command","match":{}}"#,
        "\n",
        r#"{"id":"e","seq":5,"kind":"policy","scope":["Edit","MultiEdit"],"predicate":{"all":[]},"effect":"deny"}"#,
        "\n",
        r#"{"id":"f","seq":6,"kind":"effect","tool":"Bash","match":{}}"#,
        "\n",
    );
    let exact = load_str(store).unwrap().totals.named;
    for action in [
        r#"{"tool":"Bash"}"#,
        r#"{"tool":"Edit"}"#,
        r#"{"tool":"pay"}"#,
    ] {
        for kept in ["a", "b,c", "", "f"] {
            let l = lean(store, Some(kept), Some(action)).unwrap();
            assert_eq!(l.input.totals.named, exact, "{action} kept {kept}");
        }
    }
    assert!(!exact.always_with("bash", "Bash"));
    assert!(exact.always_with("run_shell_command", "Bash"));
    assert!(exact.always_with("Edit", "MultiEdit"));
}

#[test]
fn lean_store_holds_the_newest_fact_of_a_field_a_held_policy_reads() {
    let store = STORE.replace(
        r#""predicate":{"field":"amount","op":"gt","value":"limit"}"#,
        r#""predicate":{"field":"limit","op":"gt","value":1}"#,
    );
    let l = lean(&store, Some("c1"), Some(r#"{"tool":"pay"}"#)).unwrap();
    let held: Vec<&str> = l
        .input
        .store
        .records()
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(held, ["p1", "f2", "p3", "s1", "e1"]);
    let action = r#"{"tool":"pay","params":{"amount":5}}"#;
    let l = lean(&store, Some("c1"), Some(action)).unwrap();
    assert_eq!(lean_report(&l), exact_report(&store, Some("c1"), action));
}

#[test]
fn lean_load_of_a_document_gives_the_exact_report() {
    let records: Vec<&str> = STORE.lines().filter(|l| !l.is_empty()).collect();
    let doc = format!(
        "{{\"records\":[\n{}\n],\"action\":{{\"tool\":\"pay\",\"params\":{{\"amount\":7}}}},\"kept\":[\"p1\",\"c3\"]}}",
        records.join(",\n")
    );
    let l = lean(&doc, None, None).unwrap();
    let exact = exact_report(&doc, None, r#"{"tool":"pay","params":{"amount":7}}"#);
    assert_eq!(lean_report(&l), exact);
}

#[test]
fn lean_load_falls_back_where_the_exact_path_must_speak() {
    let action = Some(r#"{"tool":"pay"}"#);
    let with = |line: &str| format!("{STORE}{line}\n");
    for (what, text, kept) in [
        (
            "duplicate key in chatter",
            with(r#"{"id":"c9","seq":99,"kind":"chatter","text":"a","text":"b"}"#),
            "c1",
        ),
        (
            "nested duplicate key in chatter",
            with(r#"{"id":"c9","seq":99,"kind":"chatter","meta":{"k":1,"k":1}}"#),
            "c1",
        ),
        (
            "duplicate id",
            with(r#"{"id":"c1","seq":99,"kind":"chatter"}"#),
            "c1",
        ),
        (
            "duplicate seq",
            with(r#"{"id":"c9","seq":9,"kind":"chatter"}"#),
            "c1",
        ),
        (
            "dangling supersedes",
            with(
                r#"{"id":"f9","seq":99,"kind":"fact","field":"limit","value":1,"supersedes":"c1"}"#,
            ),
            "c1",
        ),
        (
            "depends_on a chatter record",
            with(r#"{"id":"f9","seq":99,"kind":"fact","field":"x","value":1,"depends_on":["c1"]}"#),
            "c1",
        ),
        ("syntax error", with(r#"{"id":"c9","#), "c1"),
        (
            "an older fact with an unknown key",
            with(concat!(
                r#"{"id":"f8","seq":98,"kind":"fact","field":"z","value":1,"valeu":2}"#,
                "\n",
                r#"{"id":"f9","seq":99,"kind":"fact","field":"z","value":1}"#
            )),
            "c1",
        ),
        (
            "an older fact with a duplicate key in its value",
            with(concat!(
                r#"{"id":"f8","seq":98,"kind":"fact","field":"z","value":{"a":1,"a":2}}"#,
                "\n",
                r#"{"id":"f9","seq":99,"kind":"fact","field":"z","value":1}"#
            )),
            "c1",
        ),
        ("kept id naming nothing", STORE.to_string(), "c1,ghost"),
        (
            "duplicate key in a summary",
            with(r#"{"id":"s9","seq":99,"kind":"summary","text":"a","text":"a"}"#),
            "c1",
        ),
        (
            "raw control character in a summary",
            with("{\"id\":\"s9\",\"seq\":99,\"kind\":\"summary\",\"text\":\"a\u{1}\"}"),
            "c1",
        ),
        (
            "leading zero in a summary's seq",
            with(r#"{"id":"s9","seq":099,"kind":"summary"}"#),
            "c1",
        ),
        (
            "trailing comma in a summary",
            with(r#"{"id":"s9","seq":99,"kind":"summary",}"#),
            "c1",
        ),
        (
            "summary with a duplicate id",
            with(r#"{"id":"c1","seq":99,"kind":"summary"}"#),
            "c1",
        ),
    ] {
        assert!(lean(&text, Some(kept), action).is_err(), "{what}");
    }
    assert!(lean(STORE, None, action).is_err(), "no kept ids");
    assert!(lean(STORE, Some("c1"), None).is_err(), "no action");
}

#[test]
fn summaries_read_by_the_simple_scan_give_the_exact_report() {
    // Kept and dropped, with and without tokens, escapes that are canonical as written
    // and ones that are not (`\/`, `\u`), other unevaluable kinds, odd spacing.
    let store = concat!(
        "{\"id\":\"c1\",\"seq\":1,\"kind\":\"chatter\",\"text\":\"x\"}\n",
        "{\"id\":\"s1\",\"seq\":2,\"kind\":\"summary\",\"text\":\"tab\\there \\\\ \\\"q\\\" d\u{e9}j\u{e0}\"}\n",
        "{\"id\":\"s2\",\"seq\":3,\"kind\":\"summary\",\"text\":\"a\\/b\",\"tokens\":9}\n",
        "{\"id\":\"s3\",\"seq\":4,\"kind\":\"summary\",\"text\":\"\\u00e9\\n\"}\n",
        " { \"tokens\" : 0 , \"kind\" : \"note\" , \"seq\" : 5 , \"id\" : \"n1\" }\r\n",
        "{\"id\":\"s4\",\"seq\":6,\"kind\":\"summary\"}\n",
        "{\"id\":\"s5\",\"seq\":7,\"kind\":\"summary\",\"text\":\"\",\"meta\":{\"k\":1}}\n",
        "{\"id\":\"p1\",\"seq\":8,\"kind\":\"policy\",\"scope\":\"pay\",\"predicate\":{\"field\":\"amount\",\"op\":\"gt\",\"value\":1},\"effect\":\"deny\",\"depends_on\":[\"s2\"]}\n",
    );
    let action = r#"{"tool":"pay","params":{"amount":5}}"#;
    for kept in ["c1", "s1,s2,s3,n1,s4,s5", "s2,n1", "c1,s1,s3,s5,p1"] {
        let l = lean(store, Some(kept), Some(action)).unwrap();
        assert_eq!(
            String::from_utf8(lean_report(&l)).unwrap(),
            String::from_utf8(exact_report(store, Some(kept), action)).unwrap(),
            "kept {kept}"
        );
        // The records it holds are the exact loader's (digests aside: none when not
        // kept), text and tokens included.
        let exact = load_str(store).unwrap();
        let mut held = 0;
        for r in l.input.store.records() {
            let mut e = exact
                .store
                .records()
                .iter()
                .find(|e| e.id == r.id)
                .unwrap()
                .clone();
            if r.digest.is_none() {
                e.digest = None;
            }
            assert_eq!(*r, e, "kept {kept}");
            held += usize::from(matches!(r.kind, crate::record::Kind::Unevaluable(_)));
        }
        let dropped = ["s1", "s2", "s3", "n1", "s4", "s5"];
        let dropped = dropped
            .iter()
            .filter(|id| !kept.split(',').any(|k| k == **id));
        assert_eq!(held, dropped.count(), "kept {kept}");
    }
}

#[test]
fn duplicate_keys_inside_chatter_keep_their_exact_position() {
    let text = format!(
        "{STORE}{}\n",
        r#"{"id":"c9","seq":99,"kind":"chatter","text":"a","text":"b"}"#
    );
    let err = load_str(&text).unwrap_err();
    assert_eq!(
        err.to_string(),
        "in.json:12:59: duplicate key `text` in one object"
    );
}

/// A JSON Lines store of over 1 MiB whose first record, a policy on `pay`, has `text`.
fn store_with_rule(text: &str) -> String {
    let mut store = format!(
        r#"{{"id":"p","seq":1,"kind":"policy","scope":"pay","predicate":{{"field":"amount","op":"gt","value":5}},"effect":"deny","text":"{text}"}}"#
    );
    store.push('\n');
    let mut seq = 2;
    while store.len() < source::LEAN_FROM + 100 {
        store.push_str(&format!(
            "{{\"id\":\"c{seq}\",\"seq\":{seq},\"kind\":\"chatter\",\"text\":\"note {seq}\"}}\n"
        ));
        seq += 1;
    }
    store
}

/// A transcript-mode request for the store at `path`.
fn transcript_request(path: &str) -> Request<'_> {
    Request {
        origin: path,
        source: Source::Path(path),
        kept: None,
        retention: crate::compaction::Retention::Transcript(crate::harness::Harness::ClaudeCode),
        limits: Limits::default(),
    }
}

/// The call `store_with_rule`'s rule binds.
fn pay_call() -> Action {
    Action::from_json(&serde_json::json!({"tool": "pay", "params": {"amount": 10}})).unwrap()
}

/// A JSON Lines store in a fresh folder whose rule's text is `No payments over 5.`
/// (the folder goes when the first value is dropped).
fn rule_store() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.jsonl");
    std::fs::write(&path, store_with_rule("No payments over 5.")).unwrap();
    (dir, path)
}

/// Sets the file's time a moment on, as a later write would.
fn a_moment_later(path: &std::path::Path) {
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_modified(later).unwrap();
}

#[test]
fn a_store_put_in_place_of_another_with_its_length_and_time_is_not_judged_leanly() {
    // `cp -p`, `rsync -t` or an archive's extraction over the store between the light
    // pass and the lean load: the same length and modification time, another text for
    // the rule (were it judged leanly, the rule would count as in view for a text that is
    // no longer its own).
    let (dir, path) = rule_store();
    let p = path.to_str().unwrap();
    let request = transcript_request(p);
    let haystack = crate::view::Haystack::new(["No payments over 5."]);
    let texts = entry::store_texts_holding(&request, 0, &Default::default()).unwrap();
    let before = std::fs::metadata(&path).unwrap();
    let other = dir.path().join("other.jsonl");
    std::fs::write(&other, store_with_rule("No payments over 6.")).unwrap();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&other)
        .unwrap();
    file.set_modified(before.modified().unwrap()).unwrap();
    drop(file);
    std::fs::rename(&other, &path).unwrap();
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!(
        (before.len(), before.modified().unwrap()),
        (after.len(), after.modified().unwrap())
    );
    assert!(
        texts
            .load_in_view(&request, pay_call(), &haystack)
            .is_none()
    );
}

#[test]
fn a_light_pass_told_to_stop_gives_no_texts() {
    let (_dir, path) = rule_store();
    let request = transcript_request(path.to_str().unwrap());
    let stop = std::sync::atomic::AtomicBool::new(true);
    assert!(entry::store_texts_holding(&request, 0, &stop).is_none());
    assert!(entry::store_texts_holding(&request, 0, &Default::default()).is_some());
}

#[test]
fn a_store_rewritten_between_the_light_pass_and_the_lean_load_is_not_judged_leanly() {
    // The records in view come from the texts the light pass read; were the file
    // rewritten before the lean loader reads it, a record could keep its id and lose its
    // text, and still count as kept. A store too large to hold is read twice, and the
    // two reads must be of one file.
    let (_dir, path) = rule_store();
    let p = path.to_str().unwrap();
    let request = transcript_request(p);
    let call = pay_call();
    let haystack = crate::view::Haystack::new(["No payments over 5."]);
    // Unchanged: the lean load keeps the rule in view.
    let texts = entry::store_texts_holding(&request, 0, &Default::default()).unwrap();
    let stored = texts
        .load_in_view(&request, call.clone(), &haystack)
        .unwrap();
    let compaction = stored.compaction.unwrap();
    assert!(compaction.is_kept_id(&stored.input.store, &stored.input.totals, "p"));
    // Written again after the light pass (same length, a later time): no lean answer.
    let texts = entry::store_texts_holding(&request, 0, &Default::default()).unwrap();
    a_moment_later(&path);
    assert!(texts.load_in_view(&request, call, &haystack).is_none());
}

#[test]
fn a_held_store_is_judged_as_read_whatever_the_file_becomes() {
    // A store small enough to hold is read once: both passes read the same bytes, so
    // a rewrite after the light pass cannot make a record kept by a text it lost.
    let (_dir, path) = rule_store();
    let p = path.to_str().unwrap();
    let request = transcript_request(p);
    let call = pay_call();
    let haystack = crate::view::Haystack::new(["No payments over 5."]);
    let texts = store_texts(&request).unwrap();
    // The rule's text changes (same length) and the file's time moves on.
    std::fs::write(&path, store_with_rule("No payments over 6.")).unwrap();
    a_moment_later(&path);
    let stored = texts.load_in_view(&request, call, &haystack).unwrap();
    let compaction = stored.compaction.unwrap();
    let store = &stored.input.store;
    assert!(compaction.is_kept_id(store, &stored.input.totals, "p"));
    let rule = store.records().iter().find(|r| r.id == "p").unwrap();
    assert_eq!(rule.text.as_deref(), Some("No payments over 5."));
}

#[test]
fn a_store_too_large_to_hold_is_read_twice_and_judged_as_a_held_one() {
    let (_dir, path) = rule_store();
    let p = path.to_str().unwrap();
    let request = transcript_request(p);
    let call = pay_call();
    let haystack = crate::view::Haystack::new(["No payments over 5.", "note 7 and note 12"]);
    let load = |most| {
        let texts = entry::store_texts_holding(&request, most, &Default::default()).unwrap();
        // Held: no stamp to check; read twice: a stamp and no bytes.
        assert_eq!(texts.held.is_some(), texts.stamp.is_none());
        let stored = texts
            .load_in_view(&request, call.clone(), &haystack)
            .unwrap();
        let compaction = stored.compaction.unwrap();
        let (store, totals) = (&stored.input.store, &stored.input.totals);
        let kept: Vec<bool> = ["p", "c7", "c12", "c8"]
            .iter()
            .map(|id| compaction.is_kept_id(store, totals, id))
            .collect();
        (format!("{:?} {compaction:?}", stored.input), kept)
    };
    let held = load(source::HOLD_UP_TO);
    assert_eq!(held, load(0));
    assert_eq!(held.1, [true, true, true, false]);
}

#[test]
fn texts_written_alike_are_judged_as_each_alone() {
    // Repeated texts, some written alike (found again as written), some written apart
    // but alike decoded or normalised, one a prefix of another: the records in view are
    // the definition's, held (texts found again as written) or read twice (not).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.jsonl");
    let written = [
        r#""No payments over 5.""#,
        r#""No payments\tover 5.""#,
        r#""No  payments over 5.""#,
        r#""No payments over 50.""#,
        r#""note\u0020one""#,
        r#""note one""#,
        r#""not seen""#,
    ];
    let mut store = String::new();
    let mut seq = 1;
    while store.len() < source::LEAN_FROM + 100 {
        let text = written[seq % written.len()];
        store.push_str(&format!(
            "{{\"id\":\"c{seq}\",\"seq\":{seq},\"kind\":\"chatter\",\"text\":{text}}}\n"
        ));
        seq += 1;
    }
    std::fs::write(&path, &store).unwrap();
    let p = path.to_str().unwrap();
    let request = transcript_request(p);
    let live = ["said: No payments over 5. and note one"];
    let haystack = crate::view::Haystack::new(live);
    let exact = load(p, store.as_bytes(), Limits::default()).unwrap();
    let want: Vec<bool> =
        crate::view::Sought::new(exact.store.records().iter().map(|r| r.text.as_deref()))
            .in_view(&haystack);
    assert_eq!(want.iter().filter(|&&k| k).count() * 7 / want.len(), 5);
    let call = Action::from_json(&serde_json::json!({"tool": "t", "params": {}})).unwrap();
    for most in [source::HOLD_UP_TO, 0] {
        let texts = entry::store_texts_holding(&request, most, &Default::default()).unwrap();
        assert_eq!(texts.held.is_some(), most > 0);
        let stored = texts
            .load_in_view(&request, call.clone(), &haystack)
            .unwrap();
        let compaction = stored.compaction.unwrap();
        let (lean, totals) = (&stored.input.store, &stored.input.totals);
        let got: Vec<bool> = exact
            .store
            .records()
            .iter()
            .map(|r| compaction.is_kept_id(lean, totals, &r.id))
            .collect();
        assert_eq!(got, want, "held up to {most} bytes");
    }
}

#[test]
fn plain_kept_ids_are_split_as_str_split_splits() {
    // The split by memchr against `str::split` and the same filters.
    let reference = |text: &str, from_file: bool| -> Vec<String> {
        let sep = if from_file { '\n' } else { ',' };
        let parts: Vec<&str> = text.split(sep).collect();
        let last = parts.len() - 1;
        parts
            .into_iter()
            .enumerate()
            .map(|(at, id)| {
                if from_file && at < last {
                    id.strip_suffix('\r').unwrap_or(id)
                } else {
                    id
                }
            })
            .filter(|id| !id.is_empty())
            .map(str::to_string)
            .collect()
    };
    for text in [
        "",
        "\n",
        ",",
        "a",
        "a\n",
        "\na",
        "a\r\nb\r\n",
        "a,,b,",
        ",a,b",
        "\r\n\r\n",
        "a\r\nb\r",
        "\r",
        "é1\nü,2\n\n3",
        "r0900001\nr0900002\nr0900003\n",
    ] {
        for from_file in [false, true] {
            let got: Vec<String> = plain_kept_ids(text, from_file)
                .map(str::to_string)
                .collect();
            assert_eq!(got, reference(text, from_file), "{text:?} {from_file}");
        }
    }
}
