//! The proptest strategies the property tests draw from, in one place, with the types
//! they generate. Grouped by what they model: [`refunds`] (record sets over refund
//! fields, for the gate's algebra), [`precheck`] (records, tool schemas and kept sets,
//! for precheck and pin), [`hostile`] (attacker-chosen strings, for report integrity),
//! [`spelling`] (fields spelt as keys with dots and as nested objects, for the spelling
//! invariants); [`predicate`] nests the leaves of any of them. The lean loader's own generators
//! (documents cut into chunks, near-duplicate ids) live with its tests inside the crate,
//! in `src/input/lean_tests.rs`.

use proptest::prelude::*;
use serde_json::{Value, json};

/// Predicates over the leaves `leaf` gives: `all` and `any` of up to two, and `not`,
/// nested up to two deep.
pub fn predicate(leaf: impl Strategy<Value = Value> + 'static) -> impl Strategy<Value = Value> {
    leaf.prop_recursive(2, 6, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(|ps| json!({"all": ps})),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|ps| json!({"any": ps})),
            inner.prop_map(|p| json!({"not": p})),
        ]
    })
}

/// Record sets over refund fields and tools: chatter, facts, policies with nested
/// predicates, effects and summaries, and calls of the tools.
pub mod refunds {
    use omission_gate::Action;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    /// Fields the predicates and facts name.
    pub const FIELDS: [&str; 3] = ["amount", "customer.tier", "region"];
    /// Tools the effects and actions name.
    pub const TOOLS: [&str; 3] = ["refunds.create", "refunds.void", "notes.append"];

    /// Amounts (multiples of 1,000 below 10,000) and a few strings.
    pub fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            (0i64..10).prop_map(|n| json!(n * 1000)),
            prop::sample::select(vec!["gold", "standard", "eu", "us"]).prop_map(|s| json!(s)),
        ]
    }

    /// A comparison of a field with a value (a one-element list for `in`).
    pub fn leaf() -> impl Strategy<Value = Value> {
        (
            prop::sample::select(FIELDS.to_vec()),
            prop::sample::select(vec!["eq", "ne", "lt", "gte", "in"]),
            value(),
        )
            .prop_map(|(f, op, v)| {
                let v = if op == "in" { json!([v]) } else { v };
                json!({"field": f, "op": op, "value": v})
            })
    }

    /// A record body without id and seq; those are assigned from the position.
    pub fn body() -> impl Strategy<Value = Value> {
        prop_oneof![
            3 => Just(json!({"kind": "chatter", "text": "hi"})),
            2 => (prop::sample::select(FIELDS.to_vec()), value())
                .prop_map(|(f, v)| json!({"kind": "fact", "field": f, "value": v})),
            2 => (
                prop::sample::select(vec!["refunds.*", "refunds.create", "*", "notes.append"]),
                prop::sample::select(vec!["allow", "deny", "require_approval"]),
                super::predicate(leaf()),
            )
                .prop_map(|(s, e, p)| json!({"kind": "policy", "scope": s, "effect": e, "predicate": p})),
            1 => (prop::sample::select(vec!["refunds.create", "refunds.void", "notes.append", "refunds.*"]), value())
                .prop_map(|(t, v)| json!({"kind": "effect", "tool": t, "match": {"amount": v}})),
            1 => Just(json!({"kind": "summary", "text": "prose"})),
        ]
    }

    /// A call of one of the tools with an amount and maybe a customer tier.
    pub fn action() -> impl Strategy<Value = Action> {
        (
            prop::sample::select(TOOLS.to_vec()),
            value(),
            prop::option::of(value()),
        )
            .prop_map(|(tool, amount, tier)| {
                let mut params = serde_json::Map::new();
                params.insert("amount".into(), amount);
                if let Some(t) = tier {
                    params.insert("customer".into(), json!({"tier": t}));
                }
                Action {
                    tool: tool.into(),
                    params,
                }
            })
    }

    /// Up to 23 record bodies, a kept mask over them and an action.
    pub fn case() -> impl Strategy<Value = (Vec<Value>, Vec<bool>, Action)> {
        prop::collection::vec(body(), 1..24).prop_flat_map(|bodies| {
            let n = bodies.len();
            (
                Just(bodies),
                prop::collection::vec(any::<bool>(), n),
                action(),
            )
        })
    }
}

/// Records over a few abstract fields (`a`, `b`, `c.d`, `e`, `s`) and tools (`t1`,
/// `t2`, globs), tool schemas with the validator for them (written here, independently
/// of the library's `schema` module, for the shapes generated here), and kept sets.
pub mod precheck {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    /// The tools precheck and pin are given: two names, a glob and a name, or (`None`) every
    /// name or glob the records give, without schemas.
    pub fn tool_names() -> impl Strategy<Value = Option<[&'static str; 2]>> {
        prop_oneof![
            2 => Just(Some(["t1", "t2"])),
            1 => Just(Some(["t*", "t2"])),
            1 => Just(Some(["*", "t1"])),
            1 => Just(Some(["*1", "u*"])),
            2 => Just(None),
        ]
    }

    /// Fields predicates read: plain params, a dotted path, a fact-only field; `c` (which
    /// overlaps `c.d`) is rare.
    pub fn field() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            4 => Just("a"),
            3 => Just("b"),
            3 => Just("c.d"),
            2 => Just("e"),
            2 => Just("s"),
            1 => Just("c"),
        ]
    }

    /// Small numbers, a fraction, 5000, short strings, booleans and null.
    pub fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            4 => (-1i64..4).prop_map(|n| json!(n)),
            1 => Just(json!(2.5)),
            1 => Just(json!(5000)),
            2 => prop::sample::select(vec!["", "x", "y", "x0"]).prop_map(|s| json!(s)),
            1 => any::<bool>().prop_map(|b| json!(b)),
            1 => Just(Value::Null),
        ]
    }

    /// A scalar, or now and then an array or an object.
    pub fn constant() -> impl Strategy<Value = Value> {
        prop_oneof![
            8 => scalar(),
            1 => Just(json!([1])),
            1 => Just(json!({"d": 1})),
        ]
    }

    /// A comparison of a field with a constant (a list of up to two for `in` and `not_in`).
    pub fn leaf() -> impl Strategy<Value = Value> {
        (
            field(),
            prop::sample::select(vec!["eq", "ne", "lt", "lte", "gt", "gte", "in", "not_in"]),
            constant(),
            prop::collection::vec(constant(), 0..3),
        )
            .prop_map(|(f, op, v, list)| {
                let v = if op == "in" || op == "not_in" {
                    json!(list)
                } else {
                    v
                };
                json!({"field": f, "op": op, "value": v})
            })
    }

    /// A record body; `id`, `seq`, `supersedes` and `depends_on` are added when assembled.
    pub fn body() -> impl Strategy<Value = Value> {
        prop_oneof![
            2 => Just(json!({"kind": "chatter", "text": "hi"})),
            4 => (field(), constant())
                .prop_map(|(f, v)| json!({"kind": "fact", "field": f, "value": v})),
            5 => (
                prop::sample::select(vec!["t1", "t2", "t*", "*", "other", "*1", "u*", "t?*"]),
                prop::sample::select(vec!["allow", "deny", "require_approval"]),
                super::predicate(leaf()),
            )
                .prop_map(|(s, e, p)| json!({"kind": "policy", "scope": s, "effect": e, "predicate": p})),
            2 => (prop::sample::select(vec!["t1", "t2", "t3", "t*", "*1"]), scalar(), prop::option::of(scalar()))
                .prop_map(|(t, a, b)| {
                    let mut m = Map::new();
                    m.insert("a".into(), a);
                    if let Some(b) = b {
                        m.insert("b".into(), b);
                    }
                    json!({"kind": "effect", "tool": t, "match": m})
                }),
            1 => Just(json!({"kind": "summary", "text": "prose"})),
        ]
    }

    /// A generated schema for one param, and the validator for it.
    #[derive(Debug, Clone)]
    pub enum Prop {
        Number {
            integer: bool,
            min: Option<(i64, bool)>,
            max: Option<(i64, bool)>,
        },
        Str,
        Bool,
        Enum(Vec<Value>),
        Any,
    }

    impl Prop {
        pub fn json(&self) -> Value {
            match self {
                Prop::Number { integer, min, max } => {
                    let mut m = Map::new();
                    m.insert(
                        "type".into(),
                        json!(if *integer { "integer" } else { "number" }),
                    );
                    if let Some((v, excl)) = min {
                        let key = if *excl { "exclusiveMinimum" } else { "minimum" };
                        m.insert(key.into(), json!(v));
                    }
                    if let Some((v, excl)) = max {
                        let key = if *excl { "exclusiveMaximum" } else { "maximum" };
                        m.insert(key.into(), json!(v));
                    }
                    Value::Object(m)
                }
                Prop::Str => json!({"type": "string", "maxLength": 50}),
                Prop::Bool => json!({"type": "boolean"}),
                Prop::Enum(values) => json!({ "enum": values }),
                Prop::Any => json!({"description": "anything"}),
            }
        }

        pub fn admits(&self, v: &Value) -> bool {
            match self {
                Prop::Number { integer, min, max } => {
                    let Some(x) = v.as_f64() else {
                        return false;
                    };
                    if *integer && x.fract() != 0.0 {
                        return false;
                    }
                    let lo =
                        min.is_none_or(|(m, excl)| if excl { x > m as f64 } else { x >= m as f64 });
                    let hi =
                        max.is_none_or(|(m, excl)| if excl { x < m as f64 } else { x <= m as f64 });
                    lo && hi
                }
                Prop::Str => v.as_str().is_some_and(|s| s.chars().count() <= 50),
                Prop::Bool => v.is_boolean(),
                Prop::Enum(values) => values.iter().any(|e| same(e, v)),
                Prop::Any => true,
            }
        }
    }

    /// JSON equality with numbers by value (the generated numbers are exact in f64).
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| same(p, q)))
            }
            _ => a == b,
        }
    }

    /// A schema for one param.
    pub fn prop_schema() -> impl Strategy<Value = Prop> {
        let bound = prop::option::of((-1i64..4, any::<bool>()));
        prop_oneof![
            4 => (any::<bool>(), bound.clone(), bound).prop_map(|(integer, min, max)| Prop::Number { integer, min, max }),
            2 => Just(Prop::Str),
            1 => Just(Prop::Bool),
            // Members once each: Gemini CLI's validator cannot compile an `enum` that
            // repeats one, and precheck then reads the whole schema as admitting anything.
            2 => prop::collection::vec(scalar(), 1..4).prop_map(|values| {
                let mut members: Vec<Value> = Vec::new();
                for v in values {
                    if !members.iter().any(|m| same(m, &v)) {
                        members.push(v);
                    }
                }
                Prop::Enum(members)
            }),
            1 => Just(Prop::Any),
        ]
    }

    /// A tool's params schema: a few properties, `c` an object with `d`, the literal key
    /// `c.d`, some required, maybe closed.
    #[derive(Debug, Clone)]
    pub struct ToolSchema {
        pub props: Vec<(&'static str, Prop)>,
        pub nested_d: Option<Prop>,
        pub required: Vec<&'static str>,
        pub closed: bool,
    }

    impl ToolSchema {
        pub fn json(&self) -> Value {
            let mut props = Map::new();
            for (k, p) in &self.props {
                props.insert((*k).into(), p.json());
            }
            if let Some(d) = &self.nested_d {
                props.insert(
                    "c".into(),
                    json!({"type": "object", "properties": {"d": d.json()}}),
                );
            }
            json!({
                "type": "object",
                "properties": props,
                "required": self.required,
                "additionalProperties": !self.closed,
            })
        }

        pub fn admits(&self, params: &Map<String, Value>) -> bool {
            if !self.required.iter().all(|k| params.contains_key(*k)) {
                return false;
            }
            params.iter().all(|(k, v)| {
                if let Some((_, p)) = self.props.iter().find(|(name, _)| name == k) {
                    return p.admits(v);
                }
                if k == "c"
                    && let Some(d) = &self.nested_d
                {
                    return v
                        .as_object()
                        .is_some_and(|o| o.get("d").is_none_or(|x| d.admits(x)));
                }
                !self.closed
            })
        }
    }

    /// A tool's params schema, or none.
    pub fn tool_schema() -> impl Strategy<Value = Option<ToolSchema>> {
        let keys = prop::sample::subsequence(vec!["a", "b", "c.d", "e", "s"], 0..=5);
        prop::option::of(
            (
                keys,
                prop::collection::vec(prop_schema(), 5),
                prop::option::of(prop_schema()),
                prop::collection::vec(any::<bool>(), 6),
                any::<bool>(),
            )
                .prop_map(|(keys, props, nested_d, req, closed)| {
                    let props: Vec<(&str, Prop)> = keys.into_iter().zip(props).collect();
                    let mut names: Vec<&str> = props.iter().map(|(k, _)| *k).collect();
                    if nested_d.is_some() {
                        names.push("c");
                    }
                    let required = names
                        .into_iter()
                        .zip(req)
                        .filter(|(_, r)| *r)
                        .map(|(k, _)| k)
                        .collect();
                    ToolSchema {
                        props,
                        nested_d,
                        required,
                        closed,
                    }
                }),
        )
    }

    /// One generated case: a store, a kept mask, tool schemas and a sampling seed.
    #[derive(Debug, Clone)]
    pub struct Case {
        pub records: Vec<Value>,
        pub kept: Vec<bool>,
        pub schemas: Vec<Option<ToolSchema>>,
        pub tools: Option<[&'static str; 2]>,
        pub seed: u64,
        pub max_calls: usize,
    }

    /// A case: up to 11 records (some superseding or depending on earlier ones), a kept
    /// mask, two tool schemas, the tools, a seed and a call bound.
    pub fn case() -> impl Strategy<Value = Case> {
        (
            prop::collection::vec(
                (
                    body(),
                    prop::option::of(0usize..12),
                    prop::option::of(0usize..12),
                ),
                1..12,
            ),
            prop::collection::vec(any::<bool>(), 12),
            prop::collection::vec(tool_schema(), 2),
            tool_names(),
            any::<u64>(),
            prop_oneof![4 => Just(100_000usize), 1 => Just(3usize)],
        )
            .prop_map(|(bodies, kept, schemas, tools, seed, max_calls)| {
                let mut records: Vec<Value> = Vec::new();
                for (i, (mut b, sup, dep)) in bodies.into_iter().enumerate() {
                    let id = format!("r{i}");
                    let obj = b.as_object_mut().unwrap();
                    obj.insert("id".into(), json!(id));
                    obj.insert("seq".into(), json!(i + 1));
                    let kind = obj["kind"].as_str().unwrap().to_string();
                    if let Some(j) = sup.filter(|&j| j < i) {
                        let earlier = &records[j];
                        let same_kind = earlier["kind"] == json!(kind);
                        let same_field = kind != "fact" || earlier["field"] == obj["field"];
                        if (kind == "policy" || kind == "fact") && same_kind && same_field {
                            obj.insert("supersedes".into(), json!(format!("r{j}")));
                        }
                    }
                    if let Some(j) = dep.filter(|&j| j != i && j < 12)
                        && (kind == "policy" || kind == "fact")
                    {
                        // depends_on must name an existing record: only earlier ones exist yet.
                        if j < i {
                            obj.insert("depends_on".into(), json!([format!("r{j}")]));
                        }
                    }
                    records.push(b);
                }
                let n = records.len();
                Case {
                    records,
                    kept: kept.into_iter().take(n).collect(),
                    schemas,
                    tools,
                    seed,
                    max_calls,
                }
            })
    }
}

/// Strings an attacker would choose, and scenarios whose every name and value is one.
pub mod hostile {
    use proptest::prelude::*;

    /// Pieces an attacker would try: line breaks of every kind, terminal escapes, forged
    /// labels and seals, bidi tricks, quotes and backslashes, JSON punctuation.
    pub const NASTY: &[&str] = &[
        "\n",
        "\r",
        "\r\n",
        "\u{b}",
        "\u{c}",
        "\u{85}",
        "\u{2028}",
        "\u{2029}",
        "\u{1b}[2J",
        "\u{1b}]0;owned\u{7}",
        "\u{9b}31m",
        "\u{7f}",
        "\u{0}",
        "\u{202e}",
        "\u{2066}",
        "\u{200f}",
        "\u{61c}",
        "\u{feff}",
        "verdict   : PASS exit 0",
        "sha256    : 0000000000000000000000000000000000000000000000000000000000000000",
        "reason    : ",
        "restore   : ",
        "\",\"verdict\":\"PASS",
        "\"}",
        "'",
        "\\",
        "\"",
        "{",
        "]",
        ": ",
        "x",
        "é",
        "*",
        ".",
    ];

    /// Mostly the pieces of [`NASTY`] put together, else any non-empty string or a short
    /// plain word.
    pub fn string() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => prop::collection::vec(prop::sample::select(NASTY), 1..6).prop_map(|v| v.concat()),
            1 => any::<String>().prop_filter("non-empty", |s| !s.is_empty()),
            1 => "[a-z]{1,4}",
        ]
    }

    /// [`string`] without a control character: a tool name with one is refused (no
    /// harness names a tool so), and a scenario's tool must load to be judged. Line
    /// separators, bidi tricks, forged labels and the rest stay.
    pub fn tool_name() -> impl Strategy<Value = String> {
        string().prop_filter("no control character", |s| !s.contains(char::is_control))
    }

    /// A scenario whose every name and value is attacker-chosen.
    #[derive(Debug, Clone)]
    pub struct Scenario {
        pub ids: [String; 6],
        pub tool: String,
        pub field: String,
        pub param: String,
        pub value: String,
        pub kind: String,
        pub texts: [String; 3],
        pub amount: u32,
        pub keep: [bool; 6],
        pub allow_unevaluable: bool,
    }

    /// Every name and value hostile, an amount below 10,000, a kept mask and the flag.
    pub fn scenario() -> impl Strategy<Value = Scenario> {
        (
            [string(), string(), string(), string(), string(), string()],
            (tool_name(), string(), string(), string(), string()),
            [string(), string(), string()],
            0u32..10_000,
            any::<[bool; 6]>(),
            any::<bool>(),
        )
            .prop_map(
                |(
                    ids,
                    (tool, field, param, value, kind),
                    texts,
                    amount,
                    keep,
                    allow_unevaluable,
                )| {
                    Scenario {
                        ids,
                        tool,
                        field,
                        param,
                        value,
                        kind,
                        texts,
                        amount,
                        keep,
                        allow_unevaluable,
                    }
                },
            )
    }
}

/// Stores and calls whose fields are spelt both ways: as keys with dots (`{"a.b": 1}`)
/// and as paths through nested objects (`{"a": {"b": 1}}`), mixed, with arrays on paths.
/// A [`Case`] holds what is said (fields and their values); [`Case::render`] spells it,
/// each call, effect `match` and fact value as a seed picks, so that one case gives
/// the same store and call spelt many ways. [`escape_dots`] spells dots in JSON text
/// as `\u002e`.
pub mod spelling {
    use omission_gate::Action;
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    /// Fields predicates read and calls and effects give.
    pub const FIELDS: [&str; 6] = ["a", "b", "a.b", "a.c", "a.b.c", "b.c"];
    /// Fields facts state.
    pub const FACT_FIELDS: [&str; 5] = ["a", "b", "a.b", "a.c", "b.c"];
    /// Fields below a fact's own, in an object value.
    pub const BELOW: [&str; 5] = ["b", "c", "b.c", "b.d", "c.b"];
    /// The tools calls go to, each with a schema ([`SCHEMAS`]).
    pub const TOOLS: [&str; 2] = ["t1", "t2"];

    /// A small deterministic generator (xorshift64*), for spellings and sampled calls.
    pub struct Rng(pub u64);

    impl Rng {
        pub fn new(seed: u64) -> Rng {
            Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
        }

        pub fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
            &items[(self.next() % items.len() as u64) as usize]
        }
    }

    /// Leaf values: small numbers, 5000, a string, a boolean, null, and arrays, some of
    /// objects (an array on the path of a field below it).
    pub fn leaves() -> Vec<Value> {
        vec![
            json!(-1),
            json!(0),
            json!(1),
            json!(2),
            json!(3),
            json!(5000),
            json!("x"),
            json!(true),
            Value::Null,
            json!([1]),
            json!([{"b": 1}]),
            json!([{"c": 2}]),
        ]
    }

    pub fn leaf_value() -> impl Strategy<Value = Value> {
        prop::sample::select(leaves())
    }

    /// Fields with values, none a part of another (`a.b` and `a.b.c` are not both
    /// there), so that every spelling of them is one params object (or `match`, or
    /// fact value) that gives each field once.
    #[derive(Debug, Clone, Default)]
    pub struct Tree(pub Vec<(String, Value)>);

    impl Tree {
        /// The fields of `given` in order, each unless it is a part of one before it or
        /// one before it is a part of it.
        pub fn of(given: Vec<(&str, Value)>) -> Tree {
            let mut out: Vec<(String, Value)> = Vec::new();
            for (f, v) in given {
                let meets = |g: &String| {
                    g == f || g.starts_with(&format!("{f}.")) || f.starts_with(&format!("{g}."))
                };
                if !out.iter().any(|(g, _)| meets(g)) {
                    out.push((f.to_string(), v));
                }
            }
            Tree(out)
        }

        /// The fields spelt as `rng` picks: each field's path cut at some of its dots
        /// (`a.b.c` as `{"a.b.c": v}`, `{"a": {"b.c": v}}`, `{"a.b": {"c": v}}` or
        /// `{"a": {"b": {"c": v}}}`), paths sharing a key meeting in one object.
        pub fn spell(&self, rng: &mut Rng) -> Map<String, Value> {
            let mut out = Map::new();
            for (field, value) in &self.0 {
                let mut keys: Vec<String> = vec![String::new()];
                for (i, part) in field.split('.').enumerate() {
                    if i > 0 && rng.next().is_multiple_of(2) {
                        keys.push(String::new());
                    }
                    let last = keys.last_mut().unwrap();
                    if !last.is_empty() {
                        last.push('.');
                    }
                    last.push_str(part);
                }
                let (leaf, path) = keys.split_last().unwrap();
                let mut here = &mut out;
                for key in path {
                    let next = here.entry(key.clone()).or_insert_with(|| json!({}));
                    here = next.as_object_mut().expect("the fields are apart");
                }
                here.insert(leaf.clone(), value.clone());
            }
            out
        }
    }

    /// Up to three fields of `fields` with values.
    pub fn tree(fields: &'static [&'static str]) -> impl Strategy<Value = Tree> {
        prop::collection::vec((prop::sample::select(fields), leaf_value()), 0..4).prop_map(Tree::of)
    }

    /// A fact's value: a leaf, or an object giving fields below the fact's own.
    #[derive(Debug, Clone)]
    pub enum FactValue {
        Leaf(Value),
        Object(Tree),
    }

    /// A record body; `id`, `seq` and `supersedes` are added when rendered.
    #[derive(Debug, Clone)]
    pub enum Body {
        Chatter,
        Summary,
        Fact(&'static str, FactValue),
        Policy(&'static str, &'static str, Value),
        Effect(&'static str, Tree),
    }

    /// A comparison of one of [`FIELDS`] with a value.
    pub fn leaf() -> impl Strategy<Value = Value> {
        (
            prop::sample::select(FIELDS.to_vec()),
            prop::sample::select(vec!["eq", "ne", "lt", "gt", "in"]),
            prop_oneof![
                4 => (-1i64..4).prop_map(|n| json!(n)),
                1 => Just(json!("x")),
                1 => Just(json!({"c": 1})),
                1 => Just(json!([{"b": 1}])),
            ],
        )
            .prop_map(|(f, op, v)| {
                let v = if op == "in" { json!([v, 5000]) } else { v };
                json!({"field": f, "op": op, "value": v})
            })
    }

    pub fn body() -> impl Strategy<Value = Body> {
        let fact_value = prop_oneof![
            2 => leaf_value().prop_map(FactValue::Leaf),
            3 => tree(&BELOW).prop_map(FactValue::Object),
        ];
        prop_oneof![
            1 => Just(Body::Chatter),
            1 => Just(Body::Summary),
            4 => (prop::sample::select(FACT_FIELDS.to_vec()), fact_value)
                .prop_map(|(f, v)| Body::Fact(f, v)),
            4 => (
                prop::sample::select(vec!["t1", "t2", "t*"]),
                prop::sample::select(vec!["allow", "deny", "require_approval"]),
                super::predicate(leaf()),
            )
                .prop_map(|(s, e, p)| Body::Policy(s, e, p)),
            3 => (prop::sample::select(vec!["t1", "t2", "t*"]), tree(&FIELDS))
                .prop_map(|(t, m)| Body::Effect(t, m)),
        ]
    }

    /// Which parts of a case a seed spells: the call's params, effects' `match`, facts'
    /// values. Each is spelt by its own generator, so that one part can be spelt anew
    /// while the others stay as they were.
    #[derive(Debug, Clone, Copy)]
    pub struct Spelling {
        pub call: u64,
        pub effects: u64,
        pub facts: u64,
    }

    /// A store, a kept mask over it, a call, and the schema of each tool ([`SCHEMAS`]).
    #[derive(Debug, Clone)]
    pub struct Case {
        pub bodies: Vec<Body>,
        pub kept: Vec<bool>,
        pub tool: &'static str,
        pub call: Tree,
        pub schemas: [usize; 2],
    }

    impl Case {
        /// The records (facts of one field chained by `supersedes`) and the call,
        /// spelt as `spelling` says.
        pub fn render(&self, spelling: Spelling) -> (Vec<Value>, Action) {
            let mut effects = Rng::new(spelling.effects);
            let mut facts = Rng::new(spelling.facts);
            let mut last_fact: std::collections::BTreeMap<&str, String> = Default::default();
            let records = self
                .bodies
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let id = format!("r{i}");
                    let mut r = match b {
                        Body::Chatter => json!({"kind": "chatter", "text": "hi"}),
                        Body::Summary => json!({"kind": "summary", "text": "prose"}),
                        Body::Fact(field, value) => {
                            let value = match value {
                                FactValue::Leaf(v) => v.clone(),
                                FactValue::Object(t) => Value::Object(t.spell(&mut facts)),
                            };
                            let mut r = json!({"kind": "fact", "field": field, "value": value});
                            if let Some(prev) = last_fact.insert(field, id.clone()) {
                                r["supersedes"] = json!(prev);
                            }
                            r
                        }
                        Body::Policy(scope, effect, predicate) => json!({
                            "kind": "policy", "scope": scope, "effect": effect, "predicate": predicate
                        }),
                        Body::Effect(tool, m) => {
                            json!({"kind": "effect", "tool": tool, "match": m.spell(&mut effects)})
                        }
                    };
                    r["id"] = json!(id);
                    r["seq"] = json!(i as u64 * 2 + 1);
                    r
                })
                .collect();
            let action = Action {
                tool: self.tool.to_string(),
                params: self.call.spell(&mut Rng::new(spelling.call)),
            };
            (records, action)
        }

        /// Every record's id, and the ids the mask keeps.
        pub fn ids(&self) -> (Vec<String>, Vec<String>) {
            let ids: Vec<String> = (0..self.bodies.len()).map(|i| format!("r{i}")).collect();
            let kept = ids
                .iter()
                .zip(&self.kept)
                .filter(|(_, k)| **k)
                .map(|(id, _)| id.clone())
                .collect();
            (ids, kept)
        }
    }

    pub fn case() -> impl Strategy<Value = Case> {
        prop::collection::vec(body(), 1..12).prop_flat_map(|bodies| {
            let n = bodies.len();
            (
                Just(bodies),
                prop::collection::vec(any::<bool>(), n),
                prop::sample::select(vec!["t1", "t2", "t3"]),
                tree(&FIELDS),
                (0..SCHEMAS.len(), 0..SCHEMAS.len()),
            )
                .prop_map(|(bodies, kept, tool, call, (s1, s2))| Case {
                    bodies,
                    kept,
                    tool,
                    call,
                    schemas: [s1, s2],
                })
        })
    }

    /// Tool schemas that bound a field in one spelling and not the other, or close the
    /// params to one spelling, each with its validator (written here, independently of
    /// the library's `schema` module): `None` for no schema.
    pub const SCHEMAS: [Option<&str>; 7] = [
        None,
        Some(
            r#"{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"integer","maximum":2}}}}}"#,
        ),
        Some(r#"{"type":"object","properties":{"a.b":{"type":"integer","maximum":2}}}"#),
        Some(
            r#"{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"integer","maximum":2}},"additionalProperties":false}},"additionalProperties":false}"#,
        ),
        Some(
            r#"{"type":"object","properties":{"a":{"type":"array"},"b":{"type":"integer","minimum":3}},"required":["b"]}"#,
        ),
        // A string on the path of the fields below `a` (or `a.b`): they are UNKNOWN in
        // the params there, and no fact stands in.
        Some(r#"{"type":"object","properties":{"a":{"type":"string"}}}"#),
        Some(
            r#"{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}}}}"#,
        ),
    ];

    /// True when schema `i` of [`SCHEMAS`] admits `params`.
    pub fn admits(i: usize, params: &Map<String, Value>) -> bool {
        let small = |v: &Value| v.as_i64().is_some_and(|n| n <= 2);
        match i {
            0 => true,
            1 => params
                .get("a")
                .is_none_or(|a| a.as_object().is_some_and(|a| a.get("b").is_none_or(small))),
            2 => params.get("a.b").is_none_or(small),
            3 => params.iter().all(|(k, a)| {
                k == "a"
                    && a.as_object()
                        .is_some_and(|a| a.iter().all(|(k, b)| k == "b" && small(b)))
            }),
            5 => params.get("a").is_none_or(Value::is_string),
            6 => params.get("a").is_none_or(|a| {
                a.as_object()
                    .is_some_and(|a| a.get("b").is_none_or(Value::is_string))
            }),
            _ => {
                params.get("a").is_none_or(Value::is_array)
                    && params
                        .get("b")
                        .is_some_and(|b| b.as_i64().is_some_and(|n| n >= 3))
            }
        }
    }

    /// `text` (JSON) with each `.` inside a string spelt `\u002e` where `rng` says so.
    pub fn escape_dots(text: &str, rng: &mut Rng) -> String {
        let mut out = String::with_capacity(text.len());
        let (mut in_string, mut escaped) = (false, false);
        for c in text.chars() {
            match c {
                _ if escaped => escaped = false,
                '\\' if in_string => escaped = true,
                '"' => in_string = !in_string,
                '.' if in_string && rng.next().is_multiple_of(2) => {
                    out.push_str("\\u002e");
                    continue;
                }
                _ => {}
            }
            out.push(c);
        }
        out
    }
}
