#!/usr/bin/env python3
"""Generate the reference record store of the benches (python3 standard library only).

Deterministic from --seed: the same arguments give the same bytes on every run.

    python3 bench/gen_store.py --records 1000000 --out bench/data/store_1m.jsonl
    python3 bench/gen_store.py --records 1000000 --out bench/data/store_1m.json --form document

Writes PATH (the store) and beside it:
    PATH.kept.txt     the ids of the last --kept records by seq, one per line (default N/10)
    PATH.action.json  a realistic action {"tool", "params"} for `check --action @...`
    PATH.tools.json   [{"name", "input_schema"}, ...] for a few tools, for `--tools @...`

Mix (by record): ~90% chatter (~150 bytes of text), 6% fact over 2,000 fields with
`supersedes` chains, 2% policy over 50 tools (some compound predicates), 1% effect,
1% summary. Records appear in increasing `seq` order (seq has gaps, ids are unique).

Guarantees the store is valid input for SPEC.md section 2:
  - policy / fact / effect records carry only the keys the spec allows;
  - a fact's `supersedes` names the previous fact of the same field (lower seq);
  - a policy's `supersedes` names an earlier policy; `depends_on` names earlier facts;
  - every predicate field is either a param the action sets (`amount`, `currency`,
    `customer.tier`, ...) or a fact field that already has a fact earlier in the store,
    and every ordering comparison (lt lte gt gte) pairs two numbers or two strings.
"""

import argparse
import json
import os
import random
import sys
import time

N_FIELDS = 2000
FAMILIES = ["tool_%02d" % i for i in range(10)]
VERBS = ["create", "update", "delete", "list", "send"]
TOOLS = ["%s.%s" % (f, v) for f in FAMILIES for v in VERBS]  # 50 tools
ACTION_TOOL = "tool_07.create"

CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CHF"]
REGIONS = ["us-east", "us-west", "eu-west", "eu-central", "ap-south"]
TIERS = ["free", "standard", "gold", "platinum"]
ENUM_VALUES = ["pending", "active", "frozen", "closed", "review", "escalated"]

# Param fields of every tool's calls: name -> type.  A dotted name is a nested path.
PARAM_FIELDS = {
    "amount": "num",
    "currency": "str",
    "region": "str",
    "priority": "int",
    "date": "date",
    "account_id": "str",
    "approved": "bool",
    "customer.tier": "str",
}
PARAM_NAMES = list(PARAM_FIELDS)

# Fact field i has type FIELD_TYPES[i % 5].
FIELD_TYPES = ["num", "int", "date", "enum", "bool"]

WORDS = (
    "the agent asked whether the refund for order could be split across two cards and "
    "customer replied that shipping was late again so please check status of ticket "
    "then we looked at logs noted nothing unusual okay thanks will follow up tomorrow "
    "summary draft review pending invoice balance weekly sync note about deploy window "
    "café naïve résumé — “quoted” tab\tslash/back\\slash emoji 🙂 déjà vu"
).split(" ")


def field_name(i):
    return "field_%04d" % i


def iso_date(r):
    return "20%02d-%02d-%02d" % (r.randint(20, 26), r.randint(1, 12), r.randint(1, 28))


def value_of(r, t):
    """A JSON-able value of type t."""
    if t == "num":
        if r.random() < 0.3:
            return round(r.uniform(0, 20000), 2)
        return r.randint(0, 20000)
    if t == "int":
        return r.randint(0, 9)
    if t == "date":
        return iso_date(r)
    if t == "enum":
        return r.choice(ENUM_VALUES)
    if t == "bool":
        return r.random() < 0.5
    raise ValueError(t)


def param_value(r, name):
    if name == "amount":
        return value_of(r, "num")
    if name == "currency":
        return r.choice(CURRENCIES)
    if name == "region":
        return r.choice(REGIONS)
    if name == "priority":
        return r.randint(0, 5)
    if name == "date":
        return iso_date(r)
    if name == "account_id":
        return "acct_%04d" % r.randint(0, 999)
    if name == "approved":
        return r.random() < 0.5
    if name == "customer.tier":
        return r.choice(TIERS)
    raise ValueError(name)


def leaf(r, field, t, sample):
    """A predicate leaf over `field` of type t; `sample()` draws a value of that type."""
    if t == "bool":
        op = r.choice(["eq", "ne", "eq", "in", "not_in"])
    elif t in ("str", "enum"):
        op = r.choice(["eq", "ne", "in", "not_in", "eq", "lt", "gte"])
    else:  # num, int, date: orderable
        op = r.choice(["gt", "gte", "lt", "lte", "eq", "ne", "in", "not_in", "gt", "gt"])
    if op in ("in", "not_in"):
        vals = []
        for _ in range(r.randint(1, 4)):
            v = sample()
            if v not in vals:
                vals.append(v)
        return {"field": field, "op": op, "value": vals}
    return {"field": field, "op": op, "value": sample()}


def random_leaf(r, known_fields):
    if known_fields and r.random() < 0.4:
        i = r.choice(known_fields)
        t = FIELD_TYPES[i % 5]
        return leaf(r, field_name(i), t, lambda: value_of(r, t))
    name = r.choice(PARAM_NAMES)
    return leaf(r, name, PARAM_FIELDS[name], lambda: param_value(r, name))


def predicate(r, known_fields, depth=0):
    x = r.random()
    if depth >= 2 or x < 0.70:
        return random_leaf(r, known_fields)
    if x < 0.72:
        return {"all": []}
    if x < 0.84:
        return {"all": [predicate(r, known_fields, depth + 1) for _ in range(r.randint(2, 3))]}
    if x < 0.94:
        return {"any": [predicate(r, known_fields, depth + 1) for _ in range(r.randint(2, 3))]}
    return {"not": predicate(r, known_fields, depth + 1)}


def scope(r):
    x = r.random()
    if x < 0.60:
        return r.choice(TOOLS)
    if x < 0.85:
        return r.choice(FAMILIES) + ".*"
    if x < 0.88:
        return "*." + r.choice(VERBS)
    if x < 0.90:
        return "*"
    return sorted({r.choice(TOOLS) for _ in range(r.randint(2, 3))} | {r.choice(FAMILIES) + ".*"})


def effect_value(r):
    x = r.random()
    if x < 0.30:
        return "allow"
    if x < 0.65:
        return "deny"
    return "require_approval"


def chatter_pool(r, size=4096):
    """Pre-encoded `"text":...` fragments, ~150 bytes of text each."""
    pool = []
    for _ in range(size):
        words = []
        n = 0
        target = r.randint(130, 170)
        while n < target:
            w = r.choice(WORDS)
            words.append(w)
            n += len(w.encode("utf-8")) + 1
        pool.append(json.dumps(" ".join(words), ensure_ascii=False))
    return pool


def build_action(r):
    params = {}
    for name in PARAM_NAMES:
        if "." in name:
            head, tail = name.split(".", 1)
            params.setdefault(head, {})[tail] = param_value(r, name)
        else:
            params[name] = param_value(r, name)
    params["amount"] = 8400
    params["currency"] = "USD"
    params["customer"]["tier"] = "gold"
    params["note"] = "refund for late delivery, customer asked twice"
    return {"tool": ACTION_TOOL, "params": params}


def tool_schema(r, name):
    verb = name.split(".", 1)[1]
    props = {
        "amount": {"type": "number", "minimum": 0, "maximum": r.choice([5000, 10000, 20000])},
        "currency": {"type": "string", "enum": CURRENCIES},
        "region": {"type": "string", "enum": REGIONS},
        "priority": {"type": "integer", "minimum": 0, "maximum": 5},
        "date": {"type": "string"},
        "account_id": {"type": "string"},
        "approved": {"type": "boolean"},
        "customer": {
            "type": "object",
            "properties": {"tier": {"type": "string", "enum": TIERS}},
            "required": ["tier"],
            "additionalProperties": False,
        },
        "note": {"type": "string"},
    }
    required = ["account_id"] if verb == "list" else ["amount", "currency", "account_id", "customer"]
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, required=True, help="number of records N")
    ap.add_argument("--out", required=True, help="output path of the store")
    ap.add_argument("--form", choices=["jsonl", "document"], default="jsonl")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--kept", type=int, default=None,
                    help="how many of the last records (by seq) are kept; default N/10")
    args = ap.parse_args(argv)

    n = args.records
    if n < 1:
        ap.error("--records must be >= 1")
    kept_n = n // 10 if args.kept is None else args.kept
    if not 0 <= kept_n <= n:
        ap.error("--kept must be between 0 and --records")

    t0 = time.time()
    r = random.Random(args.seed)
    pool = chatter_pool(random.Random(args.seed * 7919 + 1))
    pool_mask = len(pool) - 1
    summaries = chatter_pool(random.Random(args.seed * 7919 + 2), 256)

    last_fact = {}          # field index -> id of its newest fact so far
    known_fields = []       # field indices that already have a fact (resolvable)
    known_set = set()
    fact_ids = []           # ids of all facts so far (for depends_on)
    policy_ids = []         # ids of all policies so far (for supersedes)

    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    rnd = r.random
    getbits = r.getrandbits
    lines = []
    ids_tail = []
    counts = {"chatter": 0, "fact": 0, "policy": 0, "effect": 0, "summary": 0}
    seq = 0

    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    tmp = args.out + ".tmp"
    f = open(tmp, "w", encoding="utf-8", newline="\n")
    if args.form == "document":
        f.write('{"records":[\n')
        sep = ","
    else:
        sep = "\n"
    first = True

    for i in range(n):
        seq += 1 + (getbits(2) == 0)  # increasing, unique, with gaps
        rid = "r%07d" % (i + 1)
        if i >= n - kept_n:
            ids_tail.append(rid)
        x = rnd()
        if x < 0.90:
            counts["chatter"] += 1
            line = '{"id":"%s","seq":%d,"kind":"chatter","text":%s}' % (rid, seq, pool[getbits(12) & pool_mask])
        elif x < 0.96:
            counts["fact"] += 1
            fi = r.randrange(N_FIELDS)
            rec = {"id": rid, "seq": seq, "kind": "fact", "field": field_name(fi),
                   "value": value_of(r, FIELD_TYPES[fi % 5])}
            prev = last_fact.get(fi)
            if prev is not None:
                rec["supersedes"] = prev
            if fact_ids and rnd() < 0.03:
                rec["depends_on"] = sorted({r.choice(fact_ids) for _ in range(r.randint(1, 2))})
            if rnd() < 0.2:
                rec["text"] = "%s set to %s" % (field_name(fi), json.dumps(rec["value"]))
            last_fact[fi] = rid
            fact_ids.append(rid)
            if fi not in known_set:
                known_set.add(fi)
                known_fields.append(fi)
            line = dumps(rec)
        elif x < 0.98:
            counts["policy"] += 1
            rec = {"id": rid, "seq": seq, "kind": "policy", "scope": scope(r),
                   "predicate": predicate(r, known_fields), "effect": effect_value(r)}
            if policy_ids and rnd() < 0.08:
                rec["supersedes"] = r.choice(policy_ids)
            if fact_ids and rnd() < 0.03:
                rec["depends_on"] = [r.choice(fact_ids)]
            if rnd() < 0.5:
                rec["text"] = "rule %d: %s for %s" % (len(policy_ids), rec["effect"], json.dumps(rec["scope"]))
            policy_ids.append(rid)
            line = dumps(rec)
        elif x < 0.99:
            counts["effect"] += 1
            tool = r.choice(TOOLS)
            match = {}
            for name in r.sample(["account_id", "amount", "currency", "date"], r.randint(1, 3)):
                match[name] = param_value(r, name)
            rec = {"id": rid, "seq": seq, "kind": "effect", "tool": tool, "match": match}
            if rnd() < 0.5:
                rec["text"] = "called %s" % tool
            line = dumps(rec)
        else:
            counts["summary"] += 1
            line = '{"id":"%s","seq":%d,"kind":"summary","text":%s,"tokens":%d}' % (
                rid, seq, summaries[getbits(8)], 40 + getbits(6))
        if first:
            lines.append(line)
            first = False
        else:
            lines.append(sep)
            lines.append(line)
        if len(lines) >= 20000:
            f.write("".join(lines))
            lines.clear()

    f.write("".join(lines))
    lines.clear()

    ar = random.Random(args.seed * 7919 + 3)
    action = build_action(ar)
    tools_pick = [ACTION_TOOL, "tool_07.update", "tool_07.list", "tool_03.send", "tool_04.delete"]
    tools = [{"name": t, "input_schema": tool_schema(ar, t)} for t in tools_pick]

    if args.form == "document":
        f.write('\n],\n"kept":')
        f.write(json.dumps(ids_tail, separators=(",", ":")))
        f.write(',\n"action":')
        f.write(json.dumps(action, ensure_ascii=False, separators=(",", ":")))
        f.write("}\n")
    else:
        f.write("\n")
    f.close()
    os.replace(tmp, args.out)

    with open(args.out + ".kept.txt", "w", encoding="utf-8", newline="\n") as kf:
        kf.write("".join(k + "\n" for k in ids_tail))
    with open(args.out + ".action.json", "w", encoding="utf-8", newline="\n") as af:
        af.write(json.dumps(action, ensure_ascii=False, indent=2) + "\n")
    with open(args.out + ".tools.json", "w", encoding="utf-8", newline="\n") as tf:
        tf.write(json.dumps(tools, ensure_ascii=False, indent=2) + "\n")

    size = os.path.getsize(args.out)
    print("%s: %d records (%s), %d kept, %.1f MB, %.1fs" % (
        args.out, n, ", ".join("%s %d" % kv for kv in counts.items()), kept_n,
        size / 1e6, time.time() - t0), file=sys.stderr)


if __name__ == "__main__":
    main()
