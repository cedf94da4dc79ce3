//! Tests of the light scans against the strict path.

use std::borrow::Cow;

use super::*;
use crate::json;
use crate::record::{Kind, Limits, Place, parse_record};

/// The strict path's answer for a line: id, seq and canonical JSON.
fn strict(line: &str) -> Option<(String, u64, String)> {
    let v = json::parse(line.as_bytes()).ok()?;
    let r = parse_record(&Place::Line(1), &v, Limits::default()).ok()?;
    matches!(r.kind, Kind::Chatter).then(|| (r.id, r.seq, json::canonical(&v)))
}

/// A chatter record the simple scan decided.
fn chatter(line: &str) -> Option<Simple<'_>> {
    match simple(line) {
        Fast::Done(s) if s.kind == "chatter" => Some(s),
        _ => None,
    }
}

fn light(line: &str) -> Option<(String, u64, String)> {
    let c = chatter(line)?;
    let mut out = Vec::new();
    assert!(c.canonical(&mut out), "{line}");
    Some((c.id.to_string(), c.seq, String::from_utf8(out).unwrap()))
}

#[test]
fn plain_chatter_is_read_without_the_strict_path() {
    for line in [
        r#"{"id":"r1","seq":7,"kind":"chatter","text":"hi \"there\"\t\u00e9"}"#,
        r#"{"id":"c", "seq":1, "kind":"chatter"}"#,
        r#"{"kind":"chatter","seq":18446744073709551615,"id":"A","text":"\u0001\u001f\b\f\r\/\\\ud83d\ude42"}"#,
        r#"{"tokens":3,"text":"x","id":"c","seq":1,"kind":"chatter"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","text":"emoji 🙂 déjà vu"}"#,
    ] {
        assert!(light(line).is_some(), "{line}");
        assert_eq!(light(line), strict(line), "{line}");
    }
}

#[test]
fn canonical_json_matches_the_strict_path() {
    for line in [
        r#"{"kind":"chatter","seq":18446744073709551615,"id":"\u0041\n","text":"\u0001\u001f\b\f\r\/\\\ud83d\ude42"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","meta":{"a":[1,-2,true,false,null,{},[],"x",{"b":"\u007f"}],"z":-9223372036854775808}}"#,
        r#"{"tokens":3,"text":"x","id":"c","seq":1,"kind":"chatter"}"#,
    ] {
        let mut out = Vec::new();
        assert!(canonical(line, &mut out), "{line}");
        let want = strict(line).map(|(_, _, c)| c);
        assert_eq!(Some(String::from_utf8(out).unwrap()), want, "{line}");
    }
}

#[test]
fn duplicate_keys_inside_chatter_are_not_light() {
    for line in [
        r#"{"id":"c","seq":1,"kind":"chatter","id":"d"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","text":"a","text":"a"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","meta":1,"meta":2}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","meta":{"a":1,"a":1}}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","meta":[{"a":{"b":1,"b":2}}]}"#,
    ] {
        assert!(chatter(line).is_none(), "{line}");
        assert_eq!(strict(line), None, "{line}");
    }
}

#[test]
fn anything_unusual_takes_the_strict_path() {
    for line in [
        r#"{"id":"p","seq":1,"kind":"policy","scope":"x","predicate":{"all":[]},"effect":"deny"}"#,
        r#"{"id":"s","seq":1,"kind":"summary"}"#,
        r#"{"id":"","seq":1,"kind":"chatter"}"#,
        r#"{"id":"c","seq":-1,"kind":"chatter"}"#,
        r#"{"id":"c","seq":1.0,"kind":"chatter"}"#,
        r#"{"id":"c","seq":1e2,"kind":"chatter"}"#,
        r#"{"id":"c","seq":18446744073709551616,"kind":"chatter"}"#,
        r#"{"id":"c","seq":"1","kind":"chatter"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","text":5}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","text":["x"]}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","text":"\x"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","text":"a \ud800 lone surrogate"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","text":"\udc00"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","text":"\u00e"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","text":"\uzzzz"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","tokens":-1}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","meta":1.5}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","meta":{"$serde_json::private::Number":"1"}}"#,
        r#"{"id":"c","seq":1,"kind":"chatter"} x"#,
        r#"{"id":"c","seq":1,"kind":"chatter""#,
        r#"{"id":"c","seq":1}"#,
        r#"[1]"#,
    ] {
        assert!(chatter(line).is_none(), "{line}");
    }
}

#[test]
fn many_other_keys_are_checked_for_repeats() {
    // Past the first few, the keys a scan passes over are sorted once: a repeat far down
    // is still refused, as the strict path refuses it.
    let keys: Vec<String> = (0..40).map(|i| format!(r#""k{i}":{i}"#)).collect();
    for (extra, ok) in [("", true), (r#","k3":0"#, false)] {
        let line = format!(
            r#"{{"id":"f","seq":1,"kind":"fact","field":"x","value":1,"meta":{{{}{extra}}}}}"#,
            keys.join(",")
        );
        assert_eq!(fact(&line).is_some(), ok, "{extra}");
        assert_eq!(strict_fact(&line).is_some(), ok, "{extra}");
    }
}

/// The strict path's fact for a line: id, seq, field, supersedes, depends_on.
type FactParts = (String, u64, String, Option<String>, Vec<String>);

fn strict_fact(line: &str) -> Option<FactParts> {
    let v = json::parse(line.as_bytes()).ok()?;
    let r = parse_record(&Place::Line(1), &v, Limits::default()).ok()?;
    match r.kind {
        Kind::Fact(f) => Some((r.id, r.seq, f.field, f.supersedes, f.depends_on)),
        _ => None,
    }
}

fn fact_parts(f: FactLine<'_>) -> FactParts {
    (
        f.id.into_owned(),
        f.seq,
        f.field.into_owned(),
        f.supersedes.map(Cow::into_owned),
        f.depends_on.into_iter().map(Cow::into_owned).collect(),
    )
}

fn light_fact(line: &str) -> Option<FactParts> {
    fact(line).map(fact_parts)
}

/// The fact the scan in a chunk decides of a line alone, if it decides one.
fn chunk_fact(line: &str) -> Option<FactParts> {
    match simple_in(line, 0) {
        Ok((Line::Fact(f, ..), end, _)) => {
            assert_eq!(end, line.len(), "{line}");
            Some(fact_parts(f))
        }
        _ => None,
    }
}

#[test]
fn facts_the_chunk_scan_decides_are_the_fact_scans() {
    for line in [
        r#"{"id":"f","seq":3,"kind":"fact","field":"limit","value":100}"#,
        r#"{"id":"r0000027","seq":33,"kind":"fact","field":"field_1944","value":false}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":true,"supersedes":"e"}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":null,"text":"t\n","tokens":4}"#,
        r#"{"value":"2021-10-03","supersedes":"e","field":"x","kind":"fact","seq":0,"id":"f"}"#,
        r#"{ "id" : "f" , "seq" : 3 , "kind" : "fact" , "field" : "x" , "value" : 0 }"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":"a\tb\u00e9\/"}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":18446744073709551615}"#,
    ] {
        assert!(chunk_fact(line).is_some(), "{line}");
        assert_eq!(chunk_fact(line), light_fact(line), "{line}");
        assert_eq!(chunk_fact(line), strict_fact(line), "{line}");
        // The scans of a line alone (and of a document's item) still leave it to `fact`.
        assert!(
            matches!(simple(line), Fast::NotChatter("fact") | Fast::Unknown),
            "{line}"
        );
        assert!(simple_item(line, 0).is_none(), "{line}");
    }
    // Facts it leaves to `fact` (read there all the same).
    for line in [
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":-1}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1.5}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":[1]}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":{"a":1}}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":18446744073709551616}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x\u0041","value":1}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"supersedes":"e\u0041"}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"depends_on":["a"]}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"meta":{}}"#,
    ] {
        assert!(chunk_fact(line).is_none(), "{line}");
        assert!(light_fact(line).is_some(), "{line}");
    }
}

#[test]
fn facts_the_scan_reads_are_the_strict_facts() {
    for line in [
        r#"{"id":"f","seq":3,"kind":"fact","field":"limit","value":100}"#,
        r#"{"seq":3,"value":{"a":[1,2.5,"x"]},"kind":"fact","field":"l\u0069mit","id":"f"}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":null,"text":"t\n","tokens":4,"meta":{"k":[true]}}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":false,"supersedes":"e","depends_on":["a","b"]}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1e400}"#,
    ] {
        assert!(light_fact(line).is_some(), "{line}");
        assert_eq!(light_fact(line), strict_fact(line), "{line}");
    }
}

/// What the loader reads of a policy or effect: id, seq, scope (or the effect's
/// tool), supersedes, depends_on.
type RuleParts = (String, u64, Vec<String>, Option<String>, Vec<String>);

fn strict_rule(line: &str) -> Option<RuleParts> {
    let v = json::parse(line.as_bytes()).ok()?;
    let r = parse_record(&Place::Line(1), &v, Limits::default()).ok()?;
    match r.kind {
        Kind::Policy(p) => Some((r.id, r.seq, p.scope, p.supersedes, p.depends_on)),
        Kind::Effect(e) => Some((r.id, r.seq, vec![e.tool], None, Vec::new())),
        _ => None,
    }
}

fn light_rule(line: &str) -> Option<RuleParts> {
    let r = rule(line, Limits::default().max_predicate_depth, &|_| false)?;
    let owned = |v: Vec<Cow<'_, str>>| v.into_iter().map(Cow::into_owned).collect();
    Some(match r.rule {
        Rule::Policy {
            scope,
            supersedes,
            depends_on,
        } => (
            r.id.into_owned(),
            r.seq,
            owned(scope),
            supersedes.map(Cow::into_owned),
            owned(depends_on),
        ),
        Rule::Effect { tool, .. } => (
            r.id.into_owned(),
            r.seq,
            vec![tool.into_owned()],
            None,
            Vec::new(),
        ),
    })
}

#[test]
fn rules_the_scan_reads_are_the_strict_rules() {
    for line in [
        r#"{"id":"p","seq":3,"kind":"policy","scope":"pay","predicate":{"field":"amount","op":"gt","value":5000},"effect":"deny"}"#,
        r#"{"effect":"allow","predicate":{"all":[{"not":{"field":"a","op":"in","value":[1,"x",null]}},{"any":[]}]},"scope":["pay","re*"],"kind":"policy","seq":3,"id":"p\u0031"}"#,
        r#"{"id":"p","seq":3,"kind":"policy","scope":"x","predicate":{"all":[]},"effect":"require_approval","supersedes":"o","depends_on":["f","g"],"text":"t \u00e9\n","tokens":9,"meta":{"k":[true,"v"]}}"#,
        r#"{"id":"e","seq":4,"kind":"effect","tool":"pay","match":{"amount":8400,"to":{"iban":"x"}}}"#,
        r#"{"id":"e","seq":4,"kind":"effect","tool":"pay","match":{},"text":"sent"}"#,
    ] {
        assert!(light_rule(line).is_some(), "{line}");
        assert_eq!(light_rule(line), strict_rule(line), "{line}");
    }
}

/// The hash of an effect's `match` as the loader takes it from the rule scan's text.
fn light_match_hash(line: &str) -> Option<u64> {
    let r = rule(line, Limits::default().max_predicate_depth, &|_| false)?;
    let Rule::Effect { matches, .. } = r.rule else {
        return None;
    };
    let mut out = Vec::new();
    assert!(canonical(matches, &mut out), "{line}");
    Some(crate::record::match_hash_of(&out))
}

/// The hash of an effect's `match` from the strict path's record.
fn strict_match_hash(line: &str) -> Option<u64> {
    let v = json::parse(line.as_bytes()).ok()?;
    match parse_record(&Place::Line(1), &v, Limits::default())
        .ok()?
        .kind
    {
        Kind::Effect(e) => Some(crate::record::match_hash(&e.matches)),
        _ => None,
    }
}

#[test]
fn effect_match_hashes_from_the_text_are_the_strict_ones() {
    for m in [
        "{}",
        r#"{"amount":8400,"to":{"iban":"x"}}"#,
        r#"{ "b" : 1 , "a" : [ true , null , "x\u00e9\n\/" ] }"#,
        r#"{"z":-0,"y":1.50,"x":1E3,"w":-12,"v":18446744073709551616}"#,
        r#"{"k":{"b":{"d":1,"c":2},"a":[]},"é":"🙂"}"#,
    ] {
        let line = format!(r#"{{"id":"e","seq":4,"kind":"effect","tool":"pay","match":{m}}}"#);
        assert!(light_match_hash(&line).is_some(), "{line}");
        assert_eq!(light_match_hash(&line), strict_match_hash(&line), "{line}");
    }
}

#[test]
fn the_rule_scan_stops_where_its_caller_says() {
    let depth = Limits::default().max_predicate_depth;
    let policy = r#"{"id":"p","seq":3,"kind":"policy","scope":["pay","re*"],"predicate":{"all":[]},"effect":"deny"}"#;
    let effect = r#"{"id":"e","seq":4,"kind":"effect","tool":"pay","match":{}}"#;
    let superseding = r#"{"id":"q","seq":5,"kind":"policy","scope":"x","predicate":{"all":[]},"effect":"deny","supersedes":"p"}"#;
    let scope_has = |name: &'static str| move |e: Early<'_>| matches!(e, Early::Scope(s) if s.iter().any(|t| t == name));
    assert!(rule(policy, depth, &scope_has("re*")).is_none());
    assert!(rule(policy, depth, &scope_has("other")).is_some());
    assert!(rule(effect, depth, &|e| matches!(e, Early::Tool("pay"))).is_none());
    assert!(rule(effect, depth, &|e| matches!(e, Early::Tool("other"))).is_some());
    let on_supersedes = |e: Early<'_>| matches!(e, Early::Supersedes);
    assert!(rule(superseding, depth, &on_supersedes).is_none());
    assert!(rule(policy, depth, &on_supersedes).is_some());
    assert!(rule(superseding, depth, &|_| false).is_some());
}

#[test]
fn the_rule_scan_leaves_anything_doubtful_to_the_strict_path() {
    let p = r#""id":"p","seq":3,"kind":"policy","predicate":{"all":[]},"effect":"deny""#;
    for line in [
        format!(r#"{{{p}}}"#),
        format!(r#"{{{p},"scope":""}}"#),
        format!(r#"{{{p},"scope":[]}}"#),
        format!(r#"{{{p},"scope":["a",""]}}"#),
        format!(r#"{{{p},"scope":7}}"#),
        format!(r#"{{{p},"scope":"a","scope":"b"}}"#),
        format!(r#"{{{p},"scope":"a","extra":1}}"#),
        format!(r#"{{{p},"scope":"a","tool":"t"}}"#),
        format!(r#"{{{p},"scope":"a","supersedes":""}}"#),
        format!(r#"{{{p},"scope":"a","depends_on":"f"}}"#),
        format!(r#"{{{p},"scope":"a","text":"\ud800"}}"#),
        format!(r#"{{{p},"scope":"a","tokens":1.5}}"#),
        format!(r#"{{{p},"scope":"a","meta":{{"k":1,"k":2}}}}"#),
        format!(r#"{{{p},"scope":"a"}} x"#),
        r#"{"id":"p","seq":3,"kind":"policy","scope":"a","predicate":{"field":"x","op":"near","value":1},"effect":"deny"}"#.to_string(),
        r#"{"id":"p","seq":3,"kind":"policy","scope":"a","predicate":{"field":"x","op":"eq","value":1,"value":2},"effect":"deny"}"#.to_string(),
        r#"{"id":"p","seq":3,"kind":"policy","scope":"a","predicate":{"all":[]},"effect":"block"}"#.to_string(),
        r#"{"id":"p","seq":3,"kind":"policy","scope":"a","predicate":{"field":"x","op":"eq","value":1e99999999999999999999},"effect":"deny"}"#.to_string(),
        r#"{"id":"p","seq":3,"kind":"policy","scope":"a","effect":"deny"}"#.to_string(),
        r#"{"id":"e","seq":4,"kind":"effect","tool":"pay"}"#.to_string(),
        r#"{"id":"e","seq":4,"kind":"effect","tool":"","match":{}}"#.to_string(),
        r#"{"id":"e","seq":4,"kind":"effect","tool":"pay","match":[1]}"#.to_string(),
        r#"{"id":"e","seq":4,"kind":"effect","tool":"pay","match":{},"supersedes":"x"}"#.to_string(),
        r#"{"id":"e","seq":4,"kind":"effect","tool":"pay","match":{"a":1e99999999999999999999}}"#.to_string(),
        r#"{"id":"e","seq":4,"kind":"fact","tool":"pay","match":{}}"#.to_string(),
        r#"{"id":"","seq":4,"kind":"effect","tool":"pay","match":{}}"#.to_string(),
        r#"{"id":"e","seq":-4,"kind":"effect","tool":"pay","match":{}}"#.to_string(),
    ] {
        assert!(light_rule(&line).is_none(), "{line}");
    }
    // Deeper than the limit: the strict path refuses it, so the scan must too.
    let deep = format!(
        r#"{{"id":"p","seq":3,"kind":"policy","scope":"a","predicate":{}{}{},"effect":"deny"}}"#,
        r#"{"not":"#.repeat(70),
        r#"{"all":[]}"#,
        "}".repeat(70)
    );
    assert!(strict_rule(&deep).is_none());
    assert!(light_rule(&deep).is_none());
}

#[test]
fn the_fact_scan_leaves_anything_doubtful_to_the_strict_path() {
    for line in [
        r#"{"id":"f","seq":3,"kind":"fact","field":"x"}"#,
        r#"{"id":"f","seq":3,"kind":"fact","value":1}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"","value":1}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"extra":1}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"value":2}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":{"a":1,"a":1}}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"supersedes":""}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"supersedes":7}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"depends_on":"a"}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"depends_on":[""]}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"text":1}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"meta":{"k":1,"k":2}}"#,
        r#"{"id":"f","seq":3.0,"kind":"fact","field":"x","value":1}"#,
        r#"{"id":"f","seq":3,"kind":"chatter","field":"x","value":1}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1} x"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"text":"\ud800"}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":"\ud800"}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":tru}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":truex}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":01}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","value":1,"supersedes":"a","supersedes":"b"}"#,
        r#"{"id":"f","seq":3,"kind":"fact","field":"x","field":"y","value":1}"#,
        r#"{"id":"f","seq":3,"kind":"fact","value":1,"supersedes":"a"}"#,
        r#"{"id":"f","seq":3,"field":"x","value":1}"#,
        r#"{"id":"f","kind":"fact","field":"x","value":1}"#,
        r#"{"seq":3,"kind":"fact","field":"x","value":1}"#,
        r#"{"id":"f","seq":3,"kind":"summary","field":"x","value":1,"supersedes":"a"}"#,
    ] {
        assert!(fact(line).is_none(), "{line}");
        assert!(chunk_fact(line).is_none(), "{line}");
    }
}

#[test]
fn seq_of_reads_the_seq_wherever_it_is() {
    assert_eq!(
        seq_of(r#"{"id":"f","kind":"fact","value":{"a":[1]},"seq":33,"text":"x"}"#),
        Some(33)
    );
    assert_eq!(seq_of(r#"{"id":"c","seq":7,"kind":"chatter"}"#), Some(7));
    assert_eq!(seq_of(r#"{"id":"c","kind":"chatter"}"#), None);
    assert_eq!(seq_of(r#"{"id":"c","seq":"7"}"#), None);
}

/// The strict path's record for a line: id, seq, kind, text, tokens, canonical JSON.
type Parts = (String, u64, String, Option<String>, u64, String);

fn strict_parts(line: &str) -> Option<Parts> {
    let v = json::parse(line.as_bytes()).ok()?;
    let r = parse_record(&Place::Line(1), &v, Limits::default()).ok()?;
    let kind = r.kind.name().to_string();
    Some((r.id, r.seq, kind, r.text, r.tokens, json::canonical(&v)))
}

fn simple_parts(line: &str) -> Option<Parts> {
    let Fast::Done(s) = simple(line) else {
        return None;
    };
    let mut out = Vec::new();
    assert!(s.canonical(&mut out), "{line}");
    let canonical = String::from_utf8(out).unwrap();
    let tokens = s.tokens.unwrap_or((canonical.len() as u64).div_ceil(4));
    let text = s.text().map(|t| t.unwrap());
    Some((s.id.into(), s.seq, s.kind.into(), text, tokens, canonical))
}

#[test]
fn the_simple_scan_reads_what_the_strict_path_reads() {
    for line in [
        r#"{"id":"r1","seq":7,"kind":"chatter","text":"hi \"there\"\t\\ \b\f\n\r déjà 🙂"}"#,
        r#"{"id":"r1","seq":0,"kind":"summary","text":"a\/b","tokens":18446744073709551615}"#,
        " {\t\"kind\" :\"note\",\r\"seq\": 12 ,\"id\":\"x y\" } \r",
        r#"{"id":"r1","seq":7,"kind":"summary","text":""}"#,
        r#"{"id":"r1","seq":7,"kind":"chatter","tokens":0}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","text":"\u00e9 \ud83d\ude42 \u0000"}"#,
        "{\"text\":\"0123456789abcdef0123456789abcdef\\\"x\",\"id\":\"\u{7f}\",\"seq\":7,\"kind\":\"chatter\"}",
    ] {
        assert!(simple_parts(line).is_some(), "{line}");
        assert_eq!(simple_parts(line), strict_parts(line), "{line}");
    }
}

#[test]
fn the_simple_scan_decides_nothing_doubtful() {
    for line in [
        r#"{"id":"c","seq":1,"kind":"chatter","text":"\ud800"}"#,
        r#"{"id":"c\n","seq":1,"kind":"chatter"}"#,
        r#"{"i\u0064":"c","seq":1,"kind":"chatter"}"#,
        r#"{"id":"c","seq":1,"kind":"chat\u0074er"}"#,
        r#"{"id":"","seq":1,"kind":"chatter"}"#,
        r#"{"id":"c","seq":01,"kind":"chatter"}"#,
        r#"{"id":"c","seq":-1,"kind":"chatter"}"#,
        r#"{"id":"c","seq":1.0,"kind":"chatter"}"#,
        r#"{"id":"c","seq":1e2,"kind":"chatter"}"#,
        r#"{"id":"c","seq":18446744073709551616,"kind":"chatter"}"#,
        r#"{"id":"c","seq":"1","kind":"chatter"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","tokens":true}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","text":null}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","id":"c"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","seq":1}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","meta":1}"#,
        // Keys a letter off the five the scan reads, or spelt with an escape.
        r#"{"idx":"c","seq":1,"kind":"chatter"}"#,
        r#"{"i":"c","seq":1,"kind":"chatter"}"#,
        r#"{"id":"c","se":1,"kind":"chatter"}"#,
        r#"{"id":"c","seq":1,"kinds":"chatter"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","tex":"a"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","texts":"a"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","token":1}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","t":1}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","tokens\u0000":1}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","te\u0078t":"a"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter",""#,
        r#"{"id":"c","seq":1,"kind":"chatter",}"#,
        r#"{"id":"c","seq":1,"kind":"chatter"} x"#,
        r#"{"id":"c","seq":1,"kind":"chatter"}}"#,
        r#"{"id":"c","seq":1,"kind":"chatter""#,
        r#"{"id":"c","seq":1,"kind":"chatter","text":"a"#,
        r#"{"id":"c","seq":1,"kind":"chatter","text":"a\x"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter","text":"a\"#,
        "{\"id\":\"c\",\"seq\":1,\"kind\":\"chatter\",\"text\":\"a\u{1f}\"}",
        "{\"id\":\"c\",\"seq\":1,\"kind\":\"chatter\",\"text\":\"0123456789\u{0}\"}",
        r#"{"id":"c","seq":1 "kind":"chatter"}"#,
        r#"{"id":"c","seq":1,"kind":"chatter"#,
        r#"{"id":"c","seq":1}"#,
        r#"{"seq":1,"kind":"chatter"}"#,
        r#"{"id":"c","kind":"chatter"}"#,
        r#"{"id":"c","seq":1,"kind":7}"#,
        r#"{}"#,
        r#"[1]"#,
        "",
    ] {
        assert!(!matches!(simple(line), Fast::Done(_)), "{line}");
    }
    // Only a kind that is a string other than chatter says "not chatter".
    assert!(matches!(
        simple(r#"{"id":"p","seq":1,"kind":"policy","scope":"x"}"#),
        Fast::NotChatter("policy")
    ));
    assert!(matches!(
        simple(r#"{"id":"c","seq":1,"kind":"chatter","meta":1}"#),
        Fast::Unknown
    ));
}

/// Every field of a [`Simple`], to compare two.
type Fields<'a> = (&'a str, u64, &'a str, Option<&'a str>, bool, Option<u64>);

fn fields<'a>(s: &Simple<'a>) -> Fields<'a> {
    (s.id, s.seq, s.kind, s.text, s.text_plain, s.tokens)
}

/// Walks `chunk` line by line as the loader does with [`simple_in`], checking at
/// each line that it decides exactly what [`simple`] decides on the line cut out by
/// a split on `\n`, with the same values, and that it visits the same lines. Returns
/// how many lines it decided.
fn walk_chunk(chunk: &str) -> usize {
    let split: Vec<&str> = chunk.split('\n').collect();
    let mut visited = Vec::new();
    let mut decided = 0;
    let mut at = 0;
    while at < chunk.len() {
        let end = chunk[at..].find('\n').map_or(chunk.len(), |n| at + n);
        let line = &chunk[at..end];
        visited.push(line);
        match (simple_in(chunk, at), simple(line)) {
            // A fact: the scan of the line alone stops at its first fact key (before
            // or after its `kind`).
            (
                Ok((Line::Fact(f, text, plain), e, next)),
                Fast::NotChatter("fact") | Fast::Unknown,
            ) => {
                assert_eq!(e, end, "{chunk:?} at {at}");
                assert_eq!(next, (end + 1).min(chunk.len()));
                // Its text, as the strict path reads it.
                let value: serde_json::Value = serde_json::from_str(line).unwrap();
                let got = text.map(|t| serde_json::from_str::<String>(t).unwrap());
                let want = value.get("text").and_then(|t| t.as_str()).map(String::from);
                assert_eq!(got, want, "{line:?}");
                if let (true, Some(text), Some(got)) = (plain, text, &got) {
                    assert_eq!(serde_json::to_string(got).unwrap(), text, "{line:?}");
                }
                let got = (f.id, f.seq, f.field, f.supersedes, f.depends_on);
                let want = fact(line).map(|f| (f.id, f.seq, f.field, f.supersedes, f.depends_on));
                assert_eq!(Some(got), want, "{line:?}");
                decided += 1;
            }
            (Ok((Line::Simple(s), e, next)), Fast::Done(t)) => {
                assert_eq!(e, end, "{chunk:?} at {at}");
                assert_eq!(next, (end + 1).min(chunk.len()));
                assert_eq!(fields(&s), fields(&t), "{chunk:?} at {at}");
                decided += 1;
            }
            (Err(_), Fast::Done(_)) => panic!("not decided in the chunk: {line:?}"),
            (Ok(_), _) => panic!("decided in the chunk only: {line:?} in {chunk:?}"),
            // Not decided either way: the same kind seen, or none.
            (Err(Fast::NotChatter(k)), Fast::NotChatter(l)) => assert_eq!(k, l, "{line:?}"),
            (Err(Fast::Unknown), Fast::Unknown) => {}
            // Past a fact's key, the scan in the chunk may read a `kind` the scan of the
            // line alone stopped before: the line is left to the same scans either way.
            (Err(Fast::NotChatter(_)), Fast::Unknown) => {}
            (Err(f), t) => panic!("{f:?} in the chunk, {t:?} alone: {line:?} in {chunk:?}"),
        }
        at = end + 1;
    }
    // The split also yields the empty text after a final `\n` (a blank line).
    let tail = usize::from(chunk.is_empty() || chunk.ends_with('\n'));
    assert_eq!(visited[..], split[..split.len() - tail], "{chunk:?}");
    decided
}

#[test]
fn lines_are_decided_straight_out_of_the_chunk() {
    let good = r#"{"id":"r1","seq":1,"kind":"chatter","text":"a\tb"}"#;
    let chunks = [
        format!("{good}\n{good}\n"),
        format!("{good}\n{good}"),
        format!("\n\n {good} \r\n\t{good}\r"),
        format!("{good}\n{{\"id\":\"p\",\"seq\":2,\"kind\":\"policy\"}}\n{good}"),
        // Whitespace with a newline inside an object: two lines, neither decided.
        "{\"id\":\"r1\",\n\"seq\":1,\"kind\":\"chatter\"}".to_string(),
        "{\"id\":\"r1\",\"seq\":1\n,\"kind\":\"chatter\"}".to_string(),
        format!("{good}{good}\n{good} x\n{good}\u{c}\n"),
        format!(
            "{good}\n{{\"id\":\"f\",\"seq\":2,\"kind\":\"fact\",\"field\":\"x\",\"value\":1}}\n{good}"
        ),
        // A fact's text, read as the strict path reads it.
        r#"{"id":"f","seq":2,"kind":"fact","field":"x","value":1,"text":"a\tb"}"#.to_string(),
    ];
    let decided: Vec<usize> = chunks.iter().map(|c| walk_chunk(c)).collect();
    assert_eq!(decided, [2, 2, 2, 3, 0, 0, 0, 3, 1]);
}

/// JSON texts for predicates and values, good and bad: nested objects (keys of the
/// predicate forms and others, some twice), arrays, and numbers, strings and literals
/// the checks tell apart.
fn json_piece() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let leaf = proptest::sample::select(vec![
        "0",
        "-0",
        "7",
        "-12",
        "1.5",
        "1e3",
        "-2.50E-7",
        "18446744073709551616",
        "123456789012345678901234567890123456789012345678901234567890",
        "1e999999999999",
        "true",
        "false",
        "null",
        "\"eq\"",
        "\"in\"",
        "\"not_in\"",
        "\"gt\"",
        "\"near\"",
        "\"\"",
        "\"amount\"",
        "\"a\\u00e9\"",
        "\"12\"",
        "\"x\"",
    ])
    .prop_map(str::to_string);
    leaf.prop_recursive(5, 40, 4, |inner| {
        let key = proptest::sample::select(vec![
            "all",
            "any",
            "not",
            "field",
            "op",
            "value",
            "x",
            "$serde_json::private::Number",
        ]);
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4)
                .prop_map(|v| format!("[{}]", v.join(","))),
            proptest::collection::vec((key, inner), 0..4).prop_map(|kv| {
                let parts: Vec<String> = kv.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", parts.join(","))
            }),
        ]
    })
}

/// `depth` arrays around `inner`.
fn nest(depth: usize, inner: &str) -> String {
    format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn values_are_checked_to_the_strict_depth() {
    let max = crate::predicate::MAX_VALUE_DEPTH;
    for depth in [max - 1, max, max + 1] {
        for inner in ["", "1", "{}"] {
            let value = nest(depth, inner);
            let line = format!(r#"{{"id":"f","seq":1,"kind":"fact","field":"x","value":{value}}}"#);
            assert_eq!(light_fact(&line), strict_fact(&line), "{depth} {inner}");
            let line = format!(
                r#"{{"id":"p","seq":1,"kind":"policy","scope":"a","effect":"deny","predicate":{{"field":"x","op":"in","value":{value}}}}}"#
            );
            assert_eq!(light_rule(&line), strict_rule(&line), "{depth} {inner}");
        }
    }
    // Predicates nested to the limit and past it.
    let max = Limits::default().max_predicate_depth;
    for depth in [max - 1, max, max + 1] {
        let p = format!(
            "{}{}{}",
            r#"{"not":"#.repeat(depth - 1),
            r#"{"all":[]}"#,
            "}".repeat(depth - 1)
        );
        let line = format!(
            r#"{{"id":"p","seq":1,"kind":"policy","scope":"a","effect":"deny","predicate":{p}}}"#
        );
        assert_eq!(light_rule(&line), strict_rule(&line), "{depth}");
    }
    // Many keys: a repeat far down is found (and many keys cost no more than a sort).
    let keys: Vec<String> = (0..40).map(|i| format!(r#""k{i}":{i}"#)).collect();
    for (extra, ok) in [("", true), (r#","k3":0"#, false)] {
        let line = format!(
            r#"{{"id":"f","seq":1,"kind":"fact","field":"x","value":{{{}{extra}}}}}"#,
            keys.join(",")
        );
        assert_eq!(light_fact(&line).is_some(), ok, "{extra}");
        assert_eq!(light_fact(&line), strict_fact(&line), "{extra}");
    }
}

#[test]
fn canonical_text_is_the_strict_values_canonical_json() {
    for text in [
        r#"{"b":1,"a":[true,null,"x\u00e9\n\/"],"c":{"z":-0,"y":1.50,"x":1E3,"w":-12}}"#,
        r#"{"n":18446744073709551616,"m":-9223372036854775808,"o":{}}"#,
        r#" [ 1 , "é🙂" , { } , [ ] ] "#,
        r#""\u0000\t""#,
    ] {
        let mut out = Vec::new();
        assert!(canonical(text, &mut out), "{text}");
        let want = json::canonical(&json::parse(text.as_bytes()).unwrap());
        assert_eq!(String::from_utf8(out).unwrap(), want, "{text}");
    }
    for text in [
        r#"{"a":1,"a":2}"#,
        r#"[{"k":1,"k":1}]"#,
        "1 2",
        r#""\ud800""#,
        "{",
    ] {
        assert!(!canonical(text, &mut Vec::new()), "{text}");
        assert!(json::parse(text.as_bytes()).is_err(), "{text}");
    }
}

proptest::proptest! {
    /// JSON texts, good and bad: the canonical text is the strict path's, and it is
    /// refused exactly where the strict parser refuses the text.
    #[test]
    fn canonical_text_agrees_with_the_strict_path(piece in json_piece()) {
        for text in [piece.clone(), format!(r#"{{"id":"f","seq":1,"value":{piece}}}"#)] {
            let mut out = Vec::new();
            let got = canonical(&text, &mut out).then(|| String::from_utf8(out).unwrap());
            let want = json::parse(text.as_bytes()).ok().map(|v| json::canonical(&v));
            proptest::prop_assert_eq!(got, want, "{}", text);
        }
    }

    /// Predicates, comparison values, facts' values and effects' `match`es, good and
    /// bad: the scans accept exactly what the strict path accepts, without building it.
    #[test]
    fn checked_values_and_predicates_are_the_strict_ones(
        predicate in json_piece(),
        value in json_piece(),
        op in proptest::sample::select(vec!["eq", "in", "not_in", "near"]),
    ) {
        let rule = |p: &str| {
            format!(r#"{{"id":"p","seq":1,"kind":"policy","scope":"a","predicate":{p},"effect":"deny"}}"#)
        };
        for line in [
            rule(&predicate),
            rule(&format!(r#"{{"field":"x","op":"{op}","value":{value}}}"#)),
            rule(&format!(r#"{{"any":[{predicate},{{"not":{value}}}]}}"#)),
            format!(r#"{{"id":"e","seq":1,"kind":"effect","tool":"a","match":{value}}}"#),
        ] {
            proptest::prop_assert_eq!(light_rule(&line), strict_rule(&line), "{}", line);
        }
        let line = format!(r#"{{"id":"f","seq":1,"kind":"fact","field":"x","value":{value}}}"#);
        proptest::prop_assert_eq!(light_fact(&line), strict_fact(&line), "{}", line);
        if let Some(parts) = chunk_fact(&line) {
            proptest::prop_assert_eq!(Some(parts), strict_fact(&line), "{}", line);
        }
        let effect = format!(r#"{{"id":"e","seq":1,"kind":"effect","tool":"a","match":{value}}}"#);
        if let Some(hash) = light_match_hash(&effect) {
            proptest::prop_assert_eq!(Some(hash), strict_match_hash(&effect), "{}", effect);
        }
    }

    /// Chunks of lines put together from the same pieces (newlines included): the scan
    /// in the chunk decides exactly the lines the scan of each cut-out line decides,
    /// with the same values, and finds the same line ends.
    #[test]
    fn the_scan_in_a_chunk_agrees_with_the_scan_of_its_lines(
        lines in proptest::collection::vec((
            proptest::sample::select(vec![0usize, 1, 2, 3]),
            proptest::collection::vec(proptest::sample::select(vec![
                "{", "}", ",", ":", " ", "\"", "\"id\"", "\"seq\"", "\"kind\"",
                "\"text\"", "\"tokens\"", "\"chatter\"", "\"r1\"", "0", "7", "01",
                "\"fact\"", "\"field\"", "\"kind\":\"fact\"", "\"kind\":\"summary\",",
                "\"value\"", "\"supersedes\"", "\"field\":\"x\",", ",\"value\":", "true", "null",
                r#""a\tb""#, "\"é🙂\"", "\"\u{1}\"", "\r", "\n", "\t", "\u{c}",
            ]), 0..6),
        ), 0..8),
        final_newline in proptest::bool::ANY,
    ) {
        let whole = r#"{"id":"r1","seq":3,"kind":"chatter","text":"x"}"#;
        let chunk: Vec<String> = lines
            .iter()
            .map(|(shape, pieces)| {
                let rest = pieces.concat();
                match shape {
                    0 => format!("{whole}{rest}"),
                    1 => format!("{rest}{whole}"),
                    2 => format!(r#"{{"id":"r2","seq":4,{rest}"kind":"summary"}}"#),
                    _ => rest,
                }
            })
            .collect();
        let mut chunk = chunk.join("\n");
        if final_newline {
            chunk.push('\n');
        }
        walk_chunk(&chunk);
    }

    /// Lines put together from pieces, good and bad: whatever the simple scan decides
    /// is what the strict path reads.
    #[test]
    fn the_simple_scan_agrees_with_the_strict_path(
        pieces in proptest::collection::vec(proptest::sample::select(vec![
            "{", "}", ",", ":", " ", "\"", "\"id\"", "\"seq\"", "\"kind\"", "\"text\"",
            "\"tokens\"", "\"meta\"", "\"chatter\"", "\"summary\"", "\"fact\"", "\"r1\"",
            "\"idx\"", "\"tex\"", "\"token\"", "\"t\"", "\"i", "\"s", "\"k", "\"te",
            "\"\"", "0", "7", "01", "-1", "1.5", "1e3", "18446744073709551616", "null",
            r#""a\tb""#, r#""a\/b""#, r#""\u00e9""#, r#""\ud800""#, r#""\u00""#, "\"é🙂\"",
            r#""\x""#,
            "\"\u{1}\"", "[", "]", "\\", "\r", "\n",
        ]), 0..24),
        shape in proptest::sample::select(vec![0usize, 1, 2]),
    ) {
        // Mostly near-valid records: a valid prefix, then the random pieces.
        let prefix = ["", r#"{"id":"r1","seq":3,"#, r#"{"kind":"chatter","id":"r2","#][shape];
        let line = format!("{prefix}{}", pieces.concat());
        if let Fast::Done(_) = simple(&line) {
            let light = simple_parts(&line);
            proptest::prop_assert!(light.is_some());
            proptest::prop_assert_eq!(light, strict_parts(&line), "{}", line);
        }
    }

    /// Whole records, shuffled keys and random texts: decided, and read as the strict
    /// path reads them.
    #[test]
    fn well_formed_simple_records_are_decided(
        text in "[a-z é🙂\\\\\"\t\n/]{0,40}",
        seq in proptest::num::u64::ANY,
        tokens in proptest::option::of(proptest::num::u64::ANY),
        kind in proptest::sample::select(vec!["chatter", "summary", "note"]),
        order in proptest::sample::select(vec![0usize, 1, 2]),
    ) {
        let text = serde_json::to_string(&text).unwrap();
        let mut keys = vec![
            format!("\"id\":\"r{seq}\""),
            format!("\"seq\":{seq}"),
            format!("\"kind\":\"{kind}\""),
            format!("\"text\":{text}"),
        ];
        if let Some(t) = tokens {
            keys.push(format!("\"tokens\":{t}"));
        }
        keys.rotate_left(order);
        let line = format!("{{{}}}", keys.join(","));
        proptest::prop_assert!(matches!(simple(&line), Fast::Done(_)), "{}", line);
        proptest::prop_assert_eq!(simple_parts(&line), strict_parts(&line), "{}", line);
    }
}

/// [`string_end`], one byte at a time: the reference the word and block searches
/// must agree with.
fn string_end_bytewise(b: &[u8], mut i: usize) -> Option<(usize, Escapes)> {
    let mut escapes = Escapes::None;
    loop {
        match *b.get(i)? {
            b'"' => return Some((i + 1, escapes)),
            b'\\' => {
                let this = match *b.get(i + 1)? {
                    b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => Escapes::Plain,
                    b'/' => Escapes::Slash,
                    b'u' => Escapes::Unicode,
                    _ => return None,
                };
                escapes = escapes.max(this);
                i += 2;
            }
            c if c < 0x20 => return None,
            _ => i += 1,
        }
    }
}

#[test]
fn the_string_search_finds_every_special_byte_at_every_offset() {
    // One special byte (or escape) at each position of strings of every length
    // around the 8- and 16-byte steps, behind every start offset.
    let specials: [&[u8]; 9] = [
        b"\"", b"\\\"", b"\\\\", b"\\/", b"\\u", b"\\x", b"\x00", b"\x1f", b"\n",
    ];
    let fillers: [u8; 4] = [b'a', 0x20, 0x7f, 0xc3];
    for len in 0..48 {
        for at in 0..=len {
            for special in specials {
                for &fill in &fillers {
                    for start in 0..3 {
                        let mut b = vec![fill; start];
                        b.extend(std::iter::repeat_n(fill, at));
                        b.extend_from_slice(special);
                        b.extend(std::iter::repeat_n(fill, len - at));
                        b.push(b'"');
                        assert_eq!(
                            string_end(&b, start),
                            string_end_bytewise(&b, start),
                            "{b:?} from {start}"
                        );
                    }
                }
            }
        }
    }
}

proptest::proptest! {
    /// Strings of plain, multi-byte, control and special bytes, searched from any
    /// offset: the block search finds what the bytewise reference finds.
    #[test]
    fn the_string_search_agrees_with_the_bytewise_search(
        pieces in proptest::collection::vec(proptest::sample::select(vec![
            &b"a"[..], b"abcdefghijklmnopq", b" ", b"\x7f", b"\xc3\xa9", b"\xf0\x9f\x99\x82",
            b"\"", b"\\", b"\\\"", b"\\\\", b"\\n", b"\\/", b"\\u00e9", b"\\x",
            b"\x00", b"\x1f", b"\n", b"\t", b"\x20", b"\xff",
        ]), 0..40),
        start in 0usize..20,
    ) {
        let b = pieces.concat();
        let start = start.min(b.len());
        proptest::prop_assert_eq!(string_end(&b, start), string_end_bytewise(&b, start), "{:?} from {}", b, start);
    }
}

#[test]
fn each_key_the_scan_reads_is_found_only_as_written() {
    for (written, key) in [
        (&b"\"id\":"[..], Key::Id),
        (b"\"seq\":", Key::Seq),
        (b"\"kind\":", Key::Kind),
        (b"\"text\":", Key::Text),
        (b"\"tokens\":", Key::Tokens),
    ] {
        let end = written.len() - 1;
        assert_eq!(key_at(written, 0), Some((key, end)), "{written:?}");
        // Cut short, or with a byte changed: not the key.
        assert_eq!(key_at(&written[..end - 1], 0), None, "{written:?}");
        for at in 0..end {
            let mut changed = written.to_vec();
            changed[at] ^= 0x20;
            assert_eq!(key_at(&changed, 0), None, "{changed:?}");
        }
    }
}

#[test]
fn numbers_are_written_in_decimal() {
    for n in [0, 7, 10, 99, 1234567890, u64::MAX] {
        let mut out = Vec::new();
        write_u64(&mut out, n);
        assert_eq!(String::from_utf8(out).unwrap(), n.to_string());
    }
}

/// What [`key_colon`] must find at `i`: the key [`key_at`] finds there when a `:` follows
/// its closing quote at once, and the index past the `:` (`supersedes` and keys too close
/// to the end for a word are left to [`key_at`]).
fn key_colon_reference(b: &[u8], i: usize) -> Option<(Key, usize)> {
    let (key, end) = key_at(b, i)?;
    (b.get(end) == Some(&b':') && key != Key::Supersedes && b.len() >= i + 8)
        .then_some((key, end + 1))
}

#[test]
fn a_key_and_its_colon_are_read_at_once_only_as_written() {
    let keys: [&[u8]; 8] = [
        b"\"id\":",
        b"\"seq\":",
        b"\"kind\":",
        b"\"text\":",
        b"\"tokens\":",
        b"\"field\":",
        b"\"value\":",
        b"\"supersedes\":",
    ];
    let tails: [&[u8]; 4] = [b"", b"\"x\"}", b"1234567890", b" :"];
    for written in keys {
        for tail in tails {
            for start in 0..2 {
                let mut b = vec![b','; start];
                b.extend_from_slice(written);
                b.extend_from_slice(tail);
                assert_eq!(
                    key_colon(&b, start),
                    key_colon_reference(&b, start),
                    "{b:?}"
                );
                // Cut short, or with any byte changed (the `:` too): as `key_at` reads it.
                for len in 0..b.len() {
                    let cut = &b[..len];
                    assert_eq!(
                        key_colon(cut, start),
                        key_colon_reference(cut, start),
                        "{cut:?}"
                    );
                }
                for at in start..start + written.len() {
                    for byte in [b' ', b'x', b'"', b'\\', written[at - start] ^ 0x20] {
                        let mut changed = b.clone();
                        changed[at] = byte;
                        assert_eq!(
                            key_colon(&changed, start),
                            key_colon_reference(&changed, start),
                            "{changed:?}"
                        );
                    }
                }
            }
        }
    }
    // Read at once where it can be: every key but `supersedes`, with eight bytes to read.
    assert_eq!(key_colon(b"\"id\":\"r1\"}", 0), Some((Key::Id, 5)));
    assert_eq!(key_colon(b"\"tokens\":1}", 0), Some((Key::Tokens, 9)));
}

proptest::proptest! {
    /// Keys, colons, quotes and whitespace in any order: what is read at once is what
    /// [`key_at`] and the `:` after it read.
    #[test]
    fn a_key_read_at_once_agrees_with_the_key_read_alone(
        pieces in proptest::collection::vec(proptest::sample::select(vec![
            &b"\""[..], b":", b" ", b"id", b"seq", b"kind", b"text", b"tokens", b"field",
            b"value", b"supersedes", b"i", b"s", b"t", b"e", b"\\", b"\xc3\xa9",
        ]), 0..12),
        start in 0usize..4,
    ) {
        let b = pieces.concat();
        let start = start.min(b.len());
        proptest::prop_assert_eq!(key_colon(&b, start), key_colon_reference(&b, start), "{:?} from {}", b, start);
    }
}
