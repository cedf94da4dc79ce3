//! `validate`: what in a valid store may not mean what its author meant. Nothing here
//! is an error (the gate judges such a store as it is); each warning names the record
//! and what to change.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::action::Tool;
use crate::compaction::Compaction;
use crate::decimal::Decimal;
use crate::json::json_brief;
use crate::predicate::{Comparison, Op, Predicate};
use crate::record::{Kind, Record, Store, globs_overlap, misspelt_kind};
use crate::text::clean;

/// One thing worth a second look in a valid store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Where: `record `id``, or `records `a`, `b`` for a cycle.
    pub place: String,
    /// What, and what to change.
    pub message: String,
}

/// The warnings for `store`, in `seq` order of the records they are about (a cycle
/// where its first record is): a kind that looks misspelt, a kept record of a kind the
/// gate cannot evaluate (when a kept set is given), a policy or fact without `text` or
/// with a text too short to say the rule (a transcript may hold it by chance), a
/// policy whose scope surely matches none of `tools` (when tools are listed; two globs
/// may always overlap), a scope or effect tool written as a pattern of another syntax
/// (see [`crate::harness::has_pattern_syntax`]), a policy that orders a field against a
/// number written as a string (`"gt", "5000"`: it orders as text), and `depends_on`
/// cycles; first, a store that binds nothing; last, each listed tool whose schema Gemini
/// CLI's validator cannot compile ([`unchecked_schema_warning`]).
pub fn warnings(store: &Store, kept: Option<&Compaction>, tools: Option<&[Tool]>) -> Vec<Warning> {
    let mut out = Vec::new();
    if binds_nothing(store) {
        out.push(Warning {
            place: "store".to_string(),
            message: BINDS_NOTHING.to_string(),
        });
    }
    let cycles = depends_on_cycles(store);
    for (pos, record) in store.records().iter().enumerate() {
        let at = |message: String| Warning {
            place: format!("record `{}`", clean(&record.id)),
            message,
        };
        if let Kind::Unevaluable(kind) = &record.kind {
            if let Some(near) = misspelt_kind(kind) {
                out.push(at(format!(
                    "kind `{}` is not a kind the gate evaluates: did you mean `{near}`?",
                    clean(kind)
                )));
            }
            if kept.is_some_and(|c| c.is_kept(pos)) {
                out.push(at(format!(
                    "kept, of kind `{}`, which the gate cannot evaluate: nothing it says binds a call while it is kept, and once dropped it blocks every call (type it as policy, fact or effect, or chatter)",
                    clean(kind)
                )));
            }
        }
        if let Some(message) = text_warning(record) {
            out.push(at(message));
        }
        out.extend(quoted_number_warnings(record).into_iter().map(at));
        // A scope or effect tool written as a matcher's regex or a shell's glob.
        let names = record.tool_names();
        for name in names
            .iter()
            .filter(|n| crate::harness::has_pattern_syntax(n))
        {
            let globs = crate::harness::pattern_fixes(name).unwrap_or_default();
            out.push(at(format!(
                "`{}` is written as a pattern of another syntax, and the gate reads it as one tool's name (a name, or a glob whose only wildcard is `*`: `|`, `?`, `[...]`, `(...)`, `^`, `$`, `+` and `\\` are read as written), which no harness gives a tool, so the record binds no call: write each tool it means as a name or `*` glob, such as {} (read as a harness reads a matcher, it is searched in the tool's name: name too each tool whose name holds it that it means)",
                clean(name),
                list(&globs)
            )));
        }
        if let (Kind::Policy(p), Some(tools)) = (&record.kind, tools)
            && !p
                .scope
                .iter()
                .any(|s| tools.iter().any(|t| globs_overlap(s, &t.name)))
        {
            out.push(at(format!(
                "scope {} matches none of the listed tools ({}): no call of theirs is bound by the rule (precheck and pin judge it all the same, as a rule of a tool that takes any params)",
                list(&p.scope),
                list(tools.iter().map(|t| &t.name))
            )));
        }
        for cycle in cycles.iter().filter(|c| c.first() == Some(&pos)) {
            let ids: Vec<&str> = cycle
                .iter()
                .chain(cycle.first())
                .filter_map(|&p| store.get(p).map(|r| r.id.as_str()))
                .collect();
            out.push(Warning {
                place: format!(
                    "records {}",
                    list(ids.iter().take(ids.len().saturating_sub(1)))
                ),
                message: format!(
                    "`depends_on` cycle: {} (each is derived from the next; none can be checked)",
                    ids.iter()
                        .map(|id| format!("`{}`", clean(id)))
                        .collect::<Vec<_>>()
                        .join(" -> ")
                ),
            });
        }
    }
    for tool in tools.into_iter().flatten() {
        if let Some(message) = unchecked_schema_warning(tool) {
            out.push(Warning {
                place: format!("tool `{}`", clean(&tool.name)),
                message,
            });
        }
    }
    out
}

/// A warning for a tool whose schema Gemini CLI's validator cannot compile
/// ([`crate::schema::validator_skips`]): Gemini CLI then checks no call against it, and
/// precheck and pin read it as admitting any params, so it rules out no call.
pub(crate) fn unchecked_schema_warning(tool: &Tool) -> Option<String> {
    let why = crate::schema::validator_skips(tool.input_schema.as_ref()?)?;
    Some(format!(
        "its schema is one Gemini CLI's validator cannot compile ({why}), and then it checks no call against it and runs every call: precheck and pin read it as admitting any params, so it rules out no call (fix the tool's own schema, and give the gate the same)"
    ))
}

/// One warning for each comparison of a policy's predicate that orders a field against
/// a number written as a string (see [`quoted_numbers`]).
pub(crate) fn quoted_number_warnings(record: &Record) -> Vec<String> {
    let Kind::Policy(p) = &record.kind else {
        return Vec::new();
    };
    let mut quoted = Vec::new();
    quoted_numbers(&p.predicate, &mut quoted);
    quoted
        .into_iter()
        .map(|(c, number)| {
            format!(
                "`predicate` compares `{}` `{}` the string `{}`, which orders as text, by code point (`\"9\"` is `gt` `\"10\"`), and a number against it is a type-mismatch ERROR: to compare numbers, write the number `{number}`, without quotes",
                clean(&c.field),
                c.op.as_str(),
                json_brief(&c.value),
            )
        })
        .collect()
}

/// The ordering comparisons (`lt`, `lte`, `gt`, `gte`) in `predicate` whose literal is a
/// string written as a number (`"5000"`, `"5,000"`), each with that number as JSON
/// writes it: strings order by code point, so `"10000"` is not `gt` `"5000"`, and a
/// number compared with one is a type mismatch. An ISO-8601 date, which orders right
/// as a string, is no number.
fn quoted_numbers<'a>(predicate: &'a Predicate, out: &mut Vec<(&'a Comparison, String)>) {
    match predicate {
        Predicate::Cmp(c) => {
            if let (Op::Lt | Op::Lte | Op::Gt | Op::Gte, Value::String(s)) = (c.op, &c.value) {
                let s = s.trim();
                let number: String = s.chars().filter(|&ch| ch != ',' && ch != '_').collect();
                if thousands_only(s)
                    && number.starts_with(|ch: char| ch.is_ascii_digit() || ch == '-')
                    && Decimal::parse(&number).is_ok()
                {
                    out.push((c, number));
                }
            }
        }
        Predicate::All(ps) | Predicate::Any(ps) => ps.iter().for_each(|p| quoted_numbers(p, out)),
        Predicate::Not(p) => quoted_numbers(p, out),
    }
}

/// Whether each comma of `s` groups the thousands of its whole part (`5,000.50`), so
/// that without them it is the number meant: `1,2` may be 1.2 or a list, and is none.
fn thousands_only(s: &str) -> bool {
    let (whole, fraction) = s.split_once('.').unwrap_or((s, ""));
    let mut groups = whole.trim_start_matches('-').split(',');
    let first = groups.next().map_or(0, str::len);
    !s.contains(',')
        || (!fraction.contains(',') && (1..=3).contains(&first) && groups.all(|g| g.len() == 3))
}

/// Whether nothing in `store` can stop a call: no restrictive policy, no effect record,
/// no record the gate cannot evaluate (facts, permissions and chatter bind nothing by
/// themselves). Every check over it passes, and a hook wired to it guards nothing.
pub fn binds_nothing(store: &Store) -> bool {
    !store.records().iter().any(|r| match &r.kind {
        Kind::Policy(p) => p.effect.is_restrictive(),
        Kind::Effect(_) | Kind::Unevaluable(_) => true,
        Kind::Fact(_) | Kind::Chatter => false,
    })
}

/// The warning for a store that [binds nothing](binds_nothing).
pub const BINDS_NOTHING: &str = "no restrictive policy, effect record or record the gate cannot evaluate: nothing in it can stop a call, so check, and a hook wired to it, pass every call; add the rules the agent must keep to";

/// What a policy or fact's `text` makes of it when the kept set is read from a
/// transcript: none, never in view (always dropped); one too short to say the rule, in
/// view wherever those words occur (kept by chance, so it may never bind).
pub(crate) fn text_warning(record: &Record) -> Option<String> {
    let what = match &record.kind {
        Kind::Policy(_) => "policy",
        Kind::Fact(_) => "fact",
        _ => return None,
    };
    match &record.text {
        None => Some(format!(
            "{what} without `text`: it is never in view of a transcript, so a kept set read from one always drops it"
        )),
        Some(text) if looks_too_short(text) => Some(format!(
            "{what} whose `text` `{}` is so short that a transcript can hold it by chance: read from a transcript, the record counts as in view wherever those words occur, even where it was never said; write it out in full",
            clean(text)
        )),
        Some(_) => None,
    }
}

/// A `text` of fewer than three words and fewer than 16 characters: a label rather than
/// the rule itself, likely to occur in a transcript where the rule was never stated.
fn looks_too_short(text: &str) -> bool {
    text.split_whitespace().count() < 3 && text.trim().chars().count() < 16
}

/// `a`, `b`, `c`, each in backticks.
fn list<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    items
        .into_iter()
        .map(|s| format!("`{}`", clean(s.as_ref())))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `depends_on` cycles, each once: record positions along the cycle, starting at the
/// one of lowest `seq` (the store is in `seq` order), in the order they depend.
fn depends_on_cycles(store: &Store) -> Vec<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let edges: Vec<Vec<usize>> = store
        .records()
        .iter()
        .map(|r| {
            r.depends_on()
                .iter()
                .filter_map(|id| store.position(id))
                .collect()
        })
        .collect();
    let mut mark = vec![Mark::New; edges.len()];
    let mut found: BTreeMap<Vec<usize>, ()> = BTreeMap::new();
    for start in 0..edges.len() {
        if mark.get(start) != Some(&Mark::New) {
            continue;
        }
        // An explicit stack of (node, next edge to follow): no recursion on deep chains.
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        if let Some(m) = mark.get_mut(start) {
            *m = Mark::OnPath;
        }
        while let Some(&(node, next)) = path.last() {
            let Some(&to) = edges.get(node).and_then(|e| e.get(next)) else {
                if let Some(m) = mark.get_mut(node) {
                    *m = Mark::Done;
                }
                path.pop();
                continue;
            };
            if let Some(top) = path.last_mut() {
                top.1 += 1;
            }
            match mark.get(to) {
                Some(Mark::New) => {
                    if let Some(m) = mark.get_mut(to) {
                        *m = Mark::OnPath;
                    }
                    path.push((to, 0));
                }
                Some(Mark::OnPath) => {
                    let from = path.iter().position(|&(n, _)| n == to).unwrap_or(0);
                    let mut cycle: Vec<usize> = path
                        .get(from..)
                        .unwrap_or_default()
                        .iter()
                        .map(|&(n, _)| n)
                        .collect();
                    // Start at the lowest position, keeping the order.
                    let low = cycle
                        .iter()
                        .enumerate()
                        .min_by_key(|&(_, &n)| n)
                        .map_or(0, |(i, _)| i);
                    cycle.rotate_left(low);
                    found.insert(cycle, ());
                }
                _ => {}
            }
        }
    }
    found.into_keys().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::Retention;
    use crate::input::load;
    use crate::record::Limits;

    fn store(lines: &[&str]) -> Store {
        load("in", lines.join("\n").as_bytes(), Limits::default())
            .map(|i| i.store)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn said(w: &[Warning]) -> Vec<String> {
        w.iter()
            .map(|w| format!("{}: {}", w.place, w.message))
            .collect()
    }

    #[test]
    fn a_clean_store_has_no_warnings() {
        let s = store(&[
            r#"{"id":"f","seq":1,"kind":"fact","field":"x","value":1,"text":"x is 1"}"#,
            r#"{"id":"p","seq":2,"kind":"policy","scope":"t","predicate":{"all":[]},"effect":"deny","text":"never call t","depends_on":["f"]}"#,
            r#"{"id":"c","seq":3,"kind":"chatter"}"#,
        ]);
        let tools = [Tool {
            name: "t".into(),
            input_schema: None,
        }];
        assert_eq!(warnings(&s, None, Some(&tools)), []);
    }

    #[test]
    fn a_text_too_short_to_say_the_rule_is_a_warning() {
        let s = store(&[
            r#"{"id":"p","seq":1,"kind":"policy","scope":"t","predicate":{"all":[]},"effect":"deny","text":"run"}"#,
            r#"{"id":"f","seq":2,"kind":"fact","field":"x","value":1,"text":"x is 1"}"#,
            r#"{"id":"q","seq":3,"kind":"policy","scope":"t","predicate":{"all":[]},"effect":"deny","text":"超过五千的退款需要人工审批"}"#,
            r#"{"id":"c","seq":4,"kind":"chatter","text":"ok"}"#,
        ]);
        let got = said(&warnings(&s, None, None));
        assert_eq!(got.len(), 2, "{got:#?}");
        assert!(
            got[0].starts_with("record `p`: policy whose `text` `run` is so short"),
            "{}",
            got[0]
        );
        assert!(
            got[1].starts_with("record `q`: policy whose `text`"),
            "{}",
            got[1]
        );
    }

    #[test]
    fn each_warning_names_its_record() {
        let s = store(&[
            r#"{"id":"a","seq":1,"kind":"Policy","text":"refunds over 5000 need approval"}"#,
            r#"{"id":"b","seq":2,"kind":"summary","text":"prose"}"#,
            r#"{"id":"p","seq":3,"kind":"policy","scope":["billing.*","x"],"predicate":{"all":[]},"effect":"deny"}"#,
        ]);
        let kept = ["a".to_string(), "b".to_string()];
        let c = Compaction::new(&s, Retention::Given, Some(&kept)).unwrap();
        let tools = [Tool {
            name: "refunds.create".into(),
            input_schema: None,
        }];
        let got = said(&warnings(&s, Some(&c), Some(&tools)));
        assert_eq!(got.len(), 5, "{got:#?}");
        assert_eq!(
            got[0],
            "record `a`: kind `Policy` is not a kind the gate evaluates: did you mean `policy`?"
        );
        assert!(
            got[1].starts_with("record `a`: kept, of kind `Policy`"),
            "{}",
            got[1]
        );
        assert!(
            got[2].starts_with("record `b`: kept, of kind `summary`"),
            "{}",
            got[2]
        );
        assert!(
            got[3].starts_with("record `p`: policy without `text`"),
            "{}",
            got[3]
        );
        assert_eq!(
            got[4],
            "record `p`: scope `billing.*`, `x` matches none of the listed tools (`refunds.create`): no call of theirs is bound by the rule (precheck and pin judge it all the same, as a rule of a tool that takes any params)"
        );
        // Without a kept set or tools, those warnings are not given.
        assert_eq!(warnings(&s, None, None).len(), 2);
    }

    /// `{"op": "gt", "value": "5000"}` orders as text: a refund of `"10000"` was not over
    /// `"5000"` and passed, and a refund of `8400` was a type mismatch; validate called
    /// the store clean (exit 0).
    #[test]
    fn a_number_written_as_a_string_in_an_ordering_is_a_warning() {
        let s = store(&[
            r#"{"id":"p","seq":1,"kind":"policy","scope":"refunds.create","predicate":{"field":"amount","op":"gt","value":"5000"},"effect":"require_approval","text":"Refunds over 5,000 need a human approver."}"#,
            r#"{"id":"q","seq":2,"kind":"policy","scope":"refunds.create","predicate":{"not":{"any":[{"field":"amount","op":"lte","value":"5,000.50"},{"field":"note","op":"eq","value":"5000"}]}},"effect":"deny","text":"Refunds over 5,000.50 are never issued."}"#,
            r#"{"id":"d","seq":3,"kind":"policy","scope":"deploy.run","predicate":{"field":"date","op":"gte","value":"2026-12-24"},"effect":"deny","text":"No deploys from Christmas Eve on."}"#,
            r#"{"id":"n","seq":4,"kind":"policy","scope":"refunds.create","predicate":{"field":"amount","op":"gt","value":5000},"effect":"deny","text":"Refunds over 5,000 are never issued."}"#,
            // Commas that group no thousands: 1.2 or a list, not the number 12.
            r#"{"id":"e","seq":5,"kind":"policy","scope":"refunds.create","predicate":{"any":[{"field":"rate","op":"gt","value":"1,2"},{"field":"rate","op":"gt","value":"12,34,567"},{"field":"rate","op":"gt","value":"1.2,5"}]},"effect":"deny","text":"Rates over 1,2 are never set."}"#,
        ]);
        let got = said(&warnings(&s, None, None));
        assert_eq!(
            got,
            [
                r#"record `p`: `predicate` compares `amount` `gt` the string `"5000"`, which orders as text, by code point (`"9"` is `gt` `"10"`), and a number against it is a type-mismatch ERROR: to compare numbers, write the number `5000`, without quotes"#,
                r#"record `q`: `predicate` compares `amount` `lte` the string `"5,000.50"`, which orders as text, by code point (`"9"` is `gt` `"10"`), and a number against it is a type-mismatch ERROR: to compare numbers, write the number `5000.50`, without quotes"#,
            ]
        );
    }

    /// A scope or effect tool written as a matcher's regex or a shell glob binds no call
    /// a harness sends; validate called such a store clean (exit 0).
    #[test]
    fn a_name_written_as_a_pattern_of_another_syntax_is_a_warning() {
        let s = store(&[
            r#"{"id":"p","seq":1,"kind":"policy","scope":["Bash|Edit","refunds.*"],"predicate":{"all":[]},"effect":"deny","text":"never change files without approval"}"#,
            r#"{"id":"e","seq":2,"kind":"effect","tool":"[Bb]ash","match":{}}"#,
            r#"{"id":"q","seq":3,"kind":"policy","scope":"mcp__billing__.*","predicate":{"all":[]},"effect":"deny","text":"never call the billing server"}"#,
        ]);
        let said = said(&warnings(&s, None, None));
        assert_eq!(
            said,
            [
                "record `p`: `Bash|Edit` is written as a pattern of another syntax, and the gate reads it as one tool's name (a name, or a glob whose only wildcard is `*`: `|`, `?`, `[...]`, `(...)`, `^`, `$`, `+` and `\\` are read as written), which no harness gives a tool, so the record binds no call: write each tool it means as a name or `*` glob, such as `Bash`, `Edit` (read as a harness reads a matcher, it is searched in the tool's name: name too each tool whose name holds it that it means)",
                "record `e`: `[Bb]ash` is written as a pattern of another syntax, and the gate reads it as one tool's name (a name, or a glob whose only wildcard is `*`: `|`, `?`, `[...]`, `(...)`, `^`, `$`, `+` and `\\` are read as written), which no harness gives a tool, so the record binds no call: write each tool it means as a name or `*` glob, such as `Bash`, `bash` (read as a harness reads a matcher, it is searched in the tool's name: name too each tool whose name holds it that it means)",
            ]
        );
    }

    #[test]
    fn depends_on_cycles_are_found_once_each() {
        let fact = |id: &str, seq: u32, deps: &str| {
            format!(
                r#"{{"id":"{id}","seq":{seq},"kind":"fact","field":"{id}","value":1,"text":"the value is one","depends_on":[{deps}]}}"#
            )
        };
        let lines = [
            fact("a", 1, r#""b""#),
            fact("b", 2, r#""c""#),
            fact("c", 3, r#""a","d""#),
            fact("d", 4, ""),
            fact("e", 5, r#""f""#),
            fact("f", 6, r#""e""#),
            fact("g", 7, r#""a""#),
        ];
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let got = said(&warnings(&store(&lines), None, None));
        // Facts alone stop no call: the store's warning comes first.
        assert_eq!(
            got,
            [
                format!("store: {BINDS_NOTHING}").as_str(),
                "records `a`, `b`, `c`: `depends_on` cycle: `a` -> `b` -> `c` -> `a` (each is derived from the next; none can be checked)",
                "records `e`, `f`: `depends_on` cycle: `e` -> `f` -> `e` (each is derived from the next; none can be checked)",
            ]
        );
        // A long chain is no cycle, and no recursion.
        let chain: Vec<String> = (0..20_000)
            .map(|i| {
                let deps = if i == 0 {
                    String::new()
                } else {
                    format!("\"r{}\"", i - 1)
                };
                fact(&format!("r{i}"), i, &deps)
            })
            .collect();
        let chain: Vec<&str> = chain.iter().map(String::as_str).collect();
        let got = said(&warnings(&store(&chain), None, None));
        assert_eq!(got, [format!("store: {BINDS_NOTHING}")]);
    }
}
