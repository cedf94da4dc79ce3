//! The compaction: which records were kept and which were dropped (SPEC 3).
//!
//! The dropped set is always computed here as records minus kept; nobody can hand the
//! gate a dropped list. The kept set is fingerprinted so that two reports can prove they
//! judged the same compaction.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

use crate::harness::Harness;
use crate::record::{Named, Store};
use crate::text::{self, clean, is_plain_digits};

/// How the kept set is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Retention {
    /// The ids the compactor reported keeping.
    Given,
    /// The first K and the last K records by `seq`.
    HeadTail(usize),
    /// The last K records by `seq`.
    Recency(usize),
    /// The records in view of the harness's transcript (SPEC 10).
    Transcript(Harness),
}

impl fmt::Display for Retention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Retention::Given => f.write_str("given"),
            Retention::HeadTail(k) => write!(f, "head_tail:{k}"),
            Retention::Recency(k) => write!(f, "recency:{k}"),
            Retention::Transcript(h) => write!(f, "transcript:{h}"),
        }
    }
}

impl Retention {
    /// For a retention that keeps the records at the ends of the `seq` order: how many
    /// it keeps from the start and from the end (`head_tail:K`: K and K, `recency:K`: 0
    /// and K).
    pub fn ends(self) -> Option<(usize, usize)> {
        match self {
            Retention::HeadTail(k) => Some((k, k)),
            Retention::Recency(k) => Some((0, k)),
            Retention::Given | Retention::Transcript(_) => None,
        }
    }
}

/// Why kept ids are refused: as a JSON list, or for the store they are to split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeptError {
    /// Not an array.
    #[error("must be an array of record ids")]
    NotArray,
    /// An element that is not a string: the element.
    #[error("expected a record id string, found {}", crate::json::json_text(.0))]
    NotId(serde_json::Value),
    /// Retention `given`, and no kept ids.
    #[error(
        "retention=given needs the kept ids: a document `kept` key or --kept (or have them computed from the harness's transcript: check --transcript FILE, hook --kept-from transcript)"
    )]
    Missing,
    /// Kept ids given beside a retention that computes the kept set itself and would
    /// ignore them: the retention.
    #[error(
        "kept ids go with retention given: retention `{0}` computes the kept set itself and would ignore them (give no kept ids, or retention given)"
    )]
    WithRetention(Retention),
    /// A plain list (inline, or one id per line in a file) that names no id: an unset
    /// variable, an empty file. `[]` says that nothing was kept.
    #[error("names no record id: to say that nothing was kept, give `[]`")]
    NamesNone,
    /// Retention `transcript:H`, which kept ids cannot give.
    #[error("retention transcript:H is read from a transcript: use --transcript FILE")]
    FromTranscript,
    /// A kept id that names no record, with the record id it nearly names, if any.
    #[error("kept id `{}` names no record{}", visible(.id), did_you_mean(.near))]
    NoSuchRecord {
        /// The kept id.
        id: String,
        /// The record id it nearly names.
        near: Option<String>,
    },
    /// An id of the document's own `kept` that names no record: the fix says the key
    /// can go, since a kept set read from a transcript needs none (a starter store's
    /// `kept` left beside records of one's own denies every call of a hook).
    #[error(
        "kept id `{}` names no record{}: fix it, or delete the document's `kept`, which a kept set read from a transcript does not need (`hook --kept-from transcript`, as init writes it)",
        visible(.id),
        near_only(.near)
    )]
    InDocument {
        /// The kept id.
        id: String,
        /// The record id it nearly names.
        near: Option<String>,
    },
}

/// A `--retention` value the gate cannot read: the value as given, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RetentionError {
    /// A known strategy whose count `K` is not plain digits.
    #[error("retention `{}`: K must be a count, plain digits such as 8", clean(.0))]
    Count(String),
    /// No strategy of that name (or `given` with a count).
    #[error("unknown retention `{}` (given, head_tail:K or recency:K)", clean(.0))]
    Unknown(String),
}

impl FromStr for Retention {
    type Err = RetentionError;

    fn from_str(s: &str) -> Result<Retention, RetentionError> {
        // K is a count: plain ASCII digits (`usize::from_str` would take a `+` sign).
        let count = |k: &str| {
            Some(k)
                .filter(|k| is_plain_digits(k))
                .and_then(|k| k.parse::<usize>().ok())
                .ok_or_else(|| RetentionError::Count(s.to_string()))
        };
        match s.split_once(':') {
            None if s == "given" => Ok(Retention::Given),
            Some(("head_tail", k)) => Ok(Retention::HeadTail(count(k)?)),
            Some(("recency", k)) => Ok(Retention::Recency(count(k)?)),
            _ => Err(RetentionError::Unknown(s.to_string())),
        }
    }
}

/// A kept/dropped split of a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    /// How the kept set was obtained.
    pub retention: Retention,
    /// `kept[i]` is true when the record at position `i` (seq order) was kept.
    kept: Vec<bool>,
    kept_count: usize,
    /// First 12 hex digits of the kept set's fingerprint (over every kept record of the
    /// input, held by the store or not).
    pub kept_sha256: String,
    /// Per fact field, the position of its newest kept fact: computed once, so that a
    /// lookup in the agent's view never walks past every dropped newer fact (which made
    /// many rules over one much-corrected field quadratic).
    newest_kept_fact: BTreeMap<String, usize>,
}

impl Compaction {
    /// Computes the kept set. With `Given`, `given` holds the compactor's kept ids (each
    /// must name a record; repeats are harmless).
    pub(crate) fn new(
        store: &Store,
        retention: Retention,
        given: Option<&[String]>,
    ) -> Result<Compaction, KeptError> {
        let n = store.len();
        // Under a retention that says what was kept, a document's `kept` is not what is
        // judged; yet a kept id that names no record is invalid input whatever the
        // retention (SPEC 9), as `validate` says, never passed over in silence.
        if retention.ends().is_some() {
            kept_ids_name_records(store, given.unwrap_or_default())?;
        }
        let kept: Vec<bool> = match retention {
            Retention::Given => {
                let Some(ids) = given else {
                    return Err(KeptError::Missing);
                };
                let mut kept = vec![false; n];
                for id in ids {
                    let Some(pos) = store.position(id) else {
                        return Err(unknown_kept_id(store, id));
                    };
                    if let Some(slot) = kept.get_mut(pos) {
                        *slot = true;
                    }
                }
                kept
            }
            // `n - k` saturates: a K beyond the record count keeps everything (`i + k`
            // would overflow for a K near usize::MAX and wrap to a wrong kept set).
            Retention::HeadTail(k) => (0..n).map(|i| i < k || i >= n.saturating_sub(k)).collect(),
            Retention::Recency(k) => (0..n).map(|i| i >= n.saturating_sub(k)).collect(),
            Retention::Transcript(_) => {
                return Err(KeptError::FromTranscript);
            }
        };
        Ok(Compaction::from_mask(store, retention, kept))
    }

    /// A compaction from a mask aligned with the store's positions.
    pub(crate) fn from_mask(
        store: &Store,
        retention: Retention,
        mut kept: Vec<bool>,
    ) -> Compaction {
        kept.resize(store.len(), false);
        let kept_sha256 = fingerprint(store, &kept);
        Compaction::with_fingerprint(store, retention, kept, kept_sha256)
    }

    /// [`Compaction::from_mask`] with the kept set's fingerprint computed already, over
    /// kept records the store may not hold (see [`fingerprint_of`]).
    pub(crate) fn with_fingerprint(
        store: &Store,
        retention: Retention,
        mut kept: Vec<bool>,
        kept_sha256: String,
    ) -> Compaction {
        kept.resize(store.len(), false);
        let kept_count = kept.iter().filter(|&&k| k).count();
        let newest_kept_fact = newest_kept_facts(store, &kept);
        Compaction {
            retention,
            kept,
            kept_count,
            kept_sha256,
            newest_kept_fact,
        }
    }

    /// True when the record with this id was kept (false when no record has it): held
    /// by `store`, by the mask; else by `totals`, which knows the kept records a partial
    /// load did not hold.
    pub(crate) fn is_kept_id(&self, store: &Store, totals: &Totals, id: &str) -> bool {
        match store.position(id) {
            Some(pos) => self.is_kept(pos),
            None => totals.kept_not_held(id),
        }
    }

    /// The position of the newest kept fact of `field`.
    pub(crate) fn newest_kept_fact(&self, field: &str) -> Option<usize> {
        self.newest_kept_fact.get(field).copied()
    }

    /// True when the record at `pos` was kept.
    pub(crate) fn is_kept(&self, pos: usize) -> bool {
        self.kept.get(pos).copied().unwrap_or(false)
    }

    /// Number of kept records the store holds.
    pub fn kept(&self) -> usize {
        self.kept_count
    }
}

/// What a load knows about the whole input beside the records its store holds: the
/// exact loader holds every record (`Totals::of`); a partial load (the lean loader,
/// which holds only the records a command can consult) counts and names the rest here.
/// Reports count records from it, precheck and pin find the tools the records name in
/// it, and the gate asks it whether a record it does not hold was kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    /// Records in the input.
    pub records: usize,
    /// Every tool name or glob a policy scope or an effect of the input gives (SPEC 2.3),
    /// with what the records giving each give beside it.
    pub named: Named,
    /// [`crate::ids::id_hash`] of each kept record the store does not hold, sorted: exact,
    /// because the partial load proved every record's id hash distinct.
    kept_not_held: Vec<u64>,
}

impl Totals {
    /// The totals of a store that holds every record of its input.
    pub(crate) fn of(store: &Store) -> Totals {
        Totals {
            records: store.len(),
            named: Named::of(store.records()),
            kept_not_held: Vec::new(),
        }
    }

    /// The totals of a partial load: `kept_not_held` as for [`Totals::kept_not_held`], in
    /// any order, distinct.
    pub(crate) fn partial(records: usize, named: Named, mut kept_not_held: Vec<u64>) -> Totals {
        kept_not_held.sort_unstable();
        Totals {
            records,
            named,
            kept_not_held,
        }
    }

    /// True when `id` is that of a kept record the store does not hold.
    fn kept_not_held(&self, id: &str) -> bool {
        !self.kept_not_held.is_empty()
            && self
                .kept_not_held
                .binary_search(&crate::ids::id_hash(id.as_bytes()))
                .is_ok()
    }

    /// Number of kept records under `compaction`, held or not.
    pub fn kept(&self, compaction: &Compaction) -> usize {
        compaction.kept() + self.kept_not_held.len()
    }

    /// Number of dropped records under `compaction`.
    pub fn dropped(&self, compaction: &Compaction) -> usize {
        self.records.saturating_sub(self.kept(compaction))
    }
}

/// Refuses the first of `ids` that names no record of `store`. A document's own `kept`
/// is held to this whatever decides the kept set (`--kept`, a retention, a transcript):
/// a document that is wrong about what was kept is invalid input, never judged as if it
/// were right.
pub(crate) fn kept_ids_name_records(store: &Store, ids: &[String]) -> Result<(), KeptError> {
    match ids.iter().find(|id| store.position(id).is_none()) {
        Some(id) => Err(unknown_kept_id(store, id)),
        None => Ok(()),
    }
}

/// [`kept_ids_name_records`] for the document's own `kept`: its error says the key can
/// go ([`KeptError::InDocument`]).
pub(crate) fn document_kept_ids_name_records(
    store: &Store,
    ids: &[String],
) -> Result<(), KeptError> {
    kept_ids_name_records(store, ids).map_err(|e| match e {
        KeptError::NoSuchRecord { id, near } => KeptError::InDocument { id, near },
        other => other,
    })
}

/// The error for a kept id that names no record, with the record id it nearly names
/// (SPEC 2): ids are matched exactly, so `--kept 'a, b'` fails closed with a hint
/// instead of matching `b`.
fn unknown_kept_id(store: &Store, id: &str) -> KeptError {
    KeptError::NoSuchRecord {
        id: id.to_string(),
        near: nearest_id(store, id).map(str::to_string),
    }
}

/// ` (did you mean `NEAR`?)`, or, with no id near it, the fix: a `kept` list left from
/// records since removed (a starter store's) otherwise read as a puzzle.
fn did_you_mean(near: &Option<String>) -> String {
    near.as_deref()
        .map(|near| format!(" (did you mean `{}`?)", visible(near)))
        .unwrap_or_else(|| {
            ": each kept id is a record's `id`: remove it from the kept ids, or add the record"
                .to_string()
        })
}

/// ` (did you mean `NEAR`?)`, or nothing.
fn near_only(near: &Option<String>) -> String {
    near.as_deref()
        .map(|near| format!(" (did you mean `{}`?)", visible(near)))
        .unwrap_or_default()
}

/// Longest kept id (in characters) compared by edit distance; longer ones get a
/// suggestion only when they differ from a record id by invisible characters alone.
const MAX_EDIT_LEN: usize = 64;

/// The record id that `id` nearly names, if any: first one that differs from it only by
/// whitespace and other invisible characters (a trailing space, a no-break space, a
/// byte-order mark); else the one nearest by edit distance (Levenshtein, over
/// characters), when that distance is at most a third of the id's length (at least 1).
/// Ties go to the record with the lowest `seq`. Only the error path calls this.
fn nearest_id<'s>(store: &'s Store, id: &str) -> Option<&'s str> {
    let ids = || store.records().iter().map(|r| r.id.as_str());
    let seen = |s: &str| {
        s.chars()
            .filter(|&c| !is_invisible(c))
            .collect::<Vec<char>>()
    };
    let bare = seen(id);
    if !bare.is_empty()
        && let Some(near) = ids().find(|r| {
            r.chars()
                .filter(|&c| !is_invisible(c))
                .eq(bare.iter().copied())
        })
    {
        return Some(near);
    }
    let chars: Vec<char> = id.chars().collect();
    if chars.len() > MAX_EDIT_LEN {
        return None;
    }
    let mut best: Option<(usize, &str)> = None;
    for candidate in ids() {
        let most = best.map_or((chars.len() / 3).max(1), |(d, _)| d.saturating_sub(1));
        if let Some(d) = crate::text::edit_distance(&chars, candidate, most) {
            best = Some((d, candidate));
            if d == 0 {
                break;
            }
        }
    }
    best.map(|(_, near)| near)
}

/// Whitespace, and the characters that look like nothing ([`text::is_invisible`]): what
/// a reader cannot see in an id.
fn is_invisible(c: char) -> bool {
    c.is_whitespace() || text::is_invisible(c)
}

/// An id as a message shows it: escaped like every input string, with every invisible
/// character but a plain space spelt `\u{XXXX}`, so that `p` and `p\u{a0}` look apart.
fn visible(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for c in clean(id).chars() {
        if c != ' ' && is_invisible(c) {
            out.push_str(&format!("\\u{{{:04x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Per fact field of `store`, the position of its newest fact that `kept` marks.
fn newest_kept_facts(store: &Store, kept: &[bool]) -> BTreeMap<String, usize> {
    store
        .fact_fields()
        .filter_map(|field| {
            let newest = store
                .facts_of(field)
                .iter()
                .rev()
                .find(|&&p| kept.get(p).copied().unwrap_or(false))?;
            Some((field.to_string(), *newest))
        })
        .collect()
}

/// sha256 over each kept record, in `seq` order, of: the id's byte length (8 bytes, big
/// endian), the id, and the sha256 of the record's canonical JSON. Dropped records and
/// the file's layout do not enter it; any change to a kept record's content does. (Every
/// loader digests each kept record; one built without its digest enters by its id alone.)
fn fingerprint(store: &Store, kept: &[bool]) -> String {
    fingerprint_of(
        store
            .records()
            .iter()
            .zip(kept)
            .filter(|(_, k)| **k)
            .map(|(r, _)| (r.id.as_str(), r.digest.as_ref().map_or(&[][..], |d| &d[..]))),
    )
}

/// The fingerprint over (id, sha256 of canonical JSON) of each kept record, given in `seq`
/// order: see [`fingerprint`].
pub(crate) fn fingerprint_of<S: AsRef<str>, D: AsRef<[u8]>>(
    kept: impl Iterator<Item = (S, D)>,
) -> String {
    // The same bytes hashed as one stream, handed over in blocks rather than three small
    // updates per record (a lean load fingerprints 100,000 records at the end): blocks of
    // one page, handed over before a record would overflow it (a larger block only
    // touched more fresh pages, each a page fault).
    const ROOM: usize = 1 << 12;
    let mut hasher = Sha256::new();
    let mut block: Vec<u8> = Vec::with_capacity(ROOM);
    for (id, digest) in kept {
        let (id, digest) = (id.as_ref(), digest.as_ref());
        if block.len() + 8 + id.len() + digest.len() > ROOM {
            hasher.update(&block);
            block.clear();
        }
        block.extend_from_slice(&(id.len() as u64).to_be_bytes());
        block.extend_from_slice(id.as_bytes());
        block.extend_from_slice(digest);
    }
    hasher.update(&block);
    let hex = crate::text::hex(&hasher.finalize());
    hex.get(..12).unwrap_or(&hex).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::load;
    use crate::record::Limits;

    fn store(n: u64) -> Store {
        let lines: String = (1..=n)
            .map(|i| format!("{{\"id\":\"r{i}\",\"seq\":{i},\"kind\":\"chatter\"}}\n"))
            .collect();
        load("t", lines.as_bytes(), Limits::default())
            .unwrap()
            .store
    }

    fn kept_ids(s: &Store, c: &Compaction) -> Vec<String> {
        (0..s.len())
            .filter(|&i| c.is_kept(i))
            .map(|i| s.get(i).unwrap().id.clone())
            .collect()
    }

    #[test]
    fn retentions_keep_the_right_records() {
        let s = store(10);
        let c = Compaction::new(&s, Retention::HeadTail(2), None).unwrap();
        assert_eq!(kept_ids(&s, &c), ["r1", "r2", "r9", "r10"]);
        let c = Compaction::new(&s, Retention::Recency(3), None).unwrap();
        assert_eq!(kept_ids(&s, &c), ["r8", "r9", "r10"]);
        let t = Totals::of(&s);
        assert_eq!((t.records, t.kept(&c), t.dropped(&c)), (10, 3, 7));
        let c = Compaction::new(&s, Retention::HeadTail(8), None).unwrap();
        assert_eq!(c.kept(), 10);
        let given = vec!["r3".to_string(), "r3".to_string()];
        let c = Compaction::new(&s, Retention::Given, Some(&given)).unwrap();
        assert_eq!(kept_ids(&s, &c), ["r3"]);
    }

    #[test]
    fn totals_count_and_answer_for_kept_records_not_held() {
        // A store that holds r1..r4 of an input of 10 records, r9 and r10 kept but not held.
        let s = store(4);
        let c = Compaction::from_mask(&s, Retention::Given, vec![false, true]);
        let not_held = ["r10", "r9"].map(|id| crate::ids::id_hash(id.as_bytes()));
        let t = Totals::partial(10, Named::default(), not_held.to_vec());
        assert_eq!((t.records, t.kept(&c), t.dropped(&c)), (10, 3, 7));
        for (id, kept) in [("r2", true), ("r1", false), ("r9", true), ("r10", true)] {
            assert_eq!(c.is_kept_id(&s, &t, id), kept, "{id}");
        }
        assert!(!c.is_kept_id(&s, &t, "r5"));
        // A store that holds every record: nothing kept is unheld.
        let all = Totals::of(&s);
        assert!(!c.is_kept_id(&s, &all, "r9"));
        assert_eq!((all.records, all.kept(&c)), (4, 1));
    }

    #[test]
    fn given_needs_kept_ids_that_exist() {
        let s = store(3);
        assert!(Compaction::new(&s, Retention::Given, None).is_err());
        let bad = vec!["nope".to_string()];
        let err = Compaction::new(&s, Retention::Given, Some(&bad)).unwrap_err();
        assert!(err.to_string().contains("`nope` names no record"));
    }

    #[test]
    fn an_unknown_kept_id_suggests_the_record_it_nearly_names() {
        let s = store(12);
        let hint = |id: &str| {
            let err = Compaction::new(&s, Retention::Given, Some(&[id.to_string()]));
            err.unwrap_err().to_string()
        };
        // Whitespace and invisible characters alone, whatever their number.
        assert!(hint(" r1").ends_with("kept id ` r1` names no record (did you mean `r1`?)"));
        assert!(hint("r\u{a0}1\u{200b}\u{3000}\t").contains("(did you mean `r1`?)"));
        assert!(hint("\u{feff}r12").contains("kept id `\\u{feff}r12`"));
        // The bidi isolates and marks, the soft hyphen: as invisible as in the view.
        assert!(hint("r\u{2066}1\u{2069}\u{ad}\u{200e}").contains("(did you mean `r1`?)"));
        // Else the nearest by edits, within a third of the length; ties to the lowest seq.
        assert!(hint("R10").contains("(did you mean `r10`?)"));
        assert!(hint("r13").contains("(did you mean `r1`?)"));
        assert!(hint("rr").contains("(did you mean `r1`?)"));
        assert!(hint("nope").ends_with(
            "names no record: each kept id is a record's `id`: remove it from the kept ids, or add the record"
        ));
        assert!(hint(&"r".repeat(MAX_EDIT_LEN + 1)).ends_with("or add the record"));
    }

    #[test]
    fn huge_k_keeps_everything_instead_of_overflowing() {
        let s = store(3);
        for r in [
            Retention::HeadTail(usize::MAX),
            Retention::Recency(usize::MAX),
            Retention::Recency(usize::MAX - 1),
        ] {
            let c = Compaction::new(&s, r, None).unwrap();
            assert_eq!(c.kept(), 3, "{r}");
        }
        let k = "recency:18446744073709551615".parse::<Retention>().unwrap();
        assert_eq!(
            Totals::of(&s).dropped(&Compaction::new(&s, k, None).unwrap()),
            0
        );
    }

    #[test]
    fn newest_kept_fact_is_the_highest_seq_kept_fact_of_its_field() {
        let lines: String = (1..=5)
            .map(|i| format!("{{\"id\":\"x{i}\",\"seq\":{i},\"kind\":\"fact\",\"field\":\"x\",\"value\":{i}}}\n"))
            .chain(std::iter::once(
                "{\"id\":\"y\",\"seq\":9,\"kind\":\"fact\",\"field\":\"y\",\"value\":0}\n".to_string(),
            ))
            .collect();
        let s = load("t", lines.as_bytes(), Limits::default())
            .unwrap()
            .store;
        let kept = |ids: &[&str]| {
            let ids: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
            Compaction::new(&s, Retention::Given, Some(&ids)).unwrap()
        };
        let id =
            |c: &Compaction, f: &str| c.newest_kept_fact(f).map(|p| s.get(p).unwrap().id.clone());
        let c = kept(&["x2", "x4", "y"]);
        assert_eq!(id(&c, "x").as_deref(), Some("x4"));
        assert_eq!(id(&c, "y").as_deref(), Some("y"));
        let c = kept(&["x1"]);
        assert_eq!(id(&c, "x").as_deref(), Some("x1"));
        assert_eq!(id(&c, "y"), None);
        assert_eq!(id(&kept(&[]), "x"), None);
        assert_eq!(id(&kept(&["x5"]), "nope"), None);
    }

    #[test]
    fn retention_parses() {
        assert_eq!("given".parse(), Ok(Retention::Given));
        assert_eq!("head_tail:8".parse(), Ok(Retention::HeadTail(8)));
        assert_eq!("recency:16".parse(), Ok(Retention::Recency(16)));
        for bad in [
            "",
            "head_tail",
            "head_tail:-1",
            "recency:+1",
            "head_tail:+0",
            "recency: 3",
            "recency:3 ",
            "recency:",
            "recency:x",
            "tail:3",
            "given:1",
        ] {
            assert!(bad.parse::<Retention>().is_err(), "{bad}");
        }
        // A known strategy with a bad count says so; anything else is unknown.
        assert_eq!(
            "recency:x".parse::<Retention>(),
            Err(RetentionError::Count("recency:x".into()))
        );
        assert_eq!(
            "given:1".parse::<Retention>(),
            Err(RetentionError::Unknown("given:1".into()))
        );
        assert_eq!(
            "tail:3".parse::<Retention>().unwrap_err().to_string(),
            "unknown retention `tail:3` (given, head_tail:K or recency:K)"
        );
        assert_eq!(Retention::HeadTail(8).to_string(), "head_tail:8");
    }

    #[test]
    fn fingerprint_hashes_one_stream_whatever_the_blocks_it_is_handed_in() {
        // The plain definition: every record's bytes, one after the other, hashed once.
        let plain = |kept: &[(String, Vec<u8>)]| {
            let mut all = Vec::new();
            for (id, digest) in kept {
                all.extend_from_slice(&(id.len() as u64).to_be_bytes());
                all.extend_from_slice(id.as_bytes());
                all.extend_from_slice(digest);
            }
            crate::text::hex(&Sha256::digest(&all))[..12].to_string()
        };
        // Records of every length around a block's room, ids longer than it, no digest.
        for n in [0, 1, 85, 86, 87, 170, 1000] {
            for long in [0, 4000, 4096, 9000] {
                let kept: Vec<(String, Vec<u8>)> = (0..n)
                    .map(|i| {
                        let id = match i % 7 {
                            3 if long > 0 => "x".repeat(long + i),
                            _ => format!("r{i:0w$}", w = i % 13),
                        };
                        let digest = if i % 5 == 4 {
                            vec![]
                        } else {
                            vec![i as u8; 32]
                        };
                        (id, digest)
                    })
                    .collect();
                assert_eq!(
                    fingerprint_of(kept.iter().cloned()),
                    plain(&kept),
                    "{n} {long}"
                );
            }
        }
    }

    #[test]
    fn fingerprint_ignores_dropped_records_but_not_kept_content() {
        let a = load("t", b"{\"id\":\"a\",\"seq\":1,\"kind\":\"chatter\",\"text\":\"x\"}\n{\"id\":\"b\",\"seq\":2,\"kind\":\"chatter\"}", Limits::default()).unwrap().store;
        let b = load("t", b"{\"id\":\"b\",\"seq\":2,\"kind\":\"chatter\",\"text\":\"changed\"}\n{ \"text\":\"x\", \"id\":\"a\",\"seq\":1,\"kind\":\"chatter\"}", Limits::default()).unwrap().store;
        let c = load("t", b"{\"id\":\"a\",\"seq\":1,\"kind\":\"chatter\",\"text\":\"y\"}\n{\"id\":\"b\",\"seq\":2,\"kind\":\"chatter\"}", Limits::default()).unwrap().store;
        let kept = vec!["a".to_string()];
        let fa = Compaction::new(&a, Retention::Given, Some(&kept))
            .unwrap()
            .kept_sha256;
        let fb = Compaction::new(&b, Retention::Given, Some(&kept))
            .unwrap()
            .kept_sha256;
        let fc = Compaction::new(&c, Retention::Given, Some(&kept))
            .unwrap()
            .kept_sha256;
        assert_eq!(fa, fb);
        assert_ne!(fa, fc);
        assert_eq!(fa.len(), 12);
    }
}
