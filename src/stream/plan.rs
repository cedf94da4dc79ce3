//! The plan of a lean load: the kept ids (an index, and a blocked Bloom filter that
//! stays in cache), the tools whose rules must be held, and the id hash everything is
//! keyed by.

use super::*;

/// A `Hasher` over [`id_hash`], for maps keyed by ids.
#[derive(Default)]
pub(super) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 ^= id_hash(bytes);
    }

    fn write_u64(&mut self, n: u64) {
        // Keys that are already id hashes pass through.
        self.0 ^= n;
    }
}

pub(super) type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// Most words the kept-id prefilter may have (128 KiB): small enough to stay in cache
/// while the input streams past it. Most records are not kept, and most of those are
/// turned away by one word of it.
pub(super) const FILTER_MAX_WORDS: usize = 1 << 14;

/// The prefilter's word for an id hash, and the three bits of that word the id sets (a
/// blocked Bloom filter: one cache line read per lookup). `words` is a power of two.
pub(super) fn filter_slot(h: u64, words: usize) -> (usize, u64) {
    let bits = (1 << ((h >> 32) & 63)) | (1 << ((h >> 38) & 63)) | (1 << ((h >> 44) & 63));
    ((h as usize) & (words - 1), bits)
}

/// What the load is for: the kept ids (retention `given`) and the tools a gate will judge.
pub struct Plan<'a> {
    /// Each distinct kept id's hash, mapped to its index in `kept`.
    pub(super) index: IdMap<u64, u32>,
    /// The kept ids' hashes in a blocked Bloom filter (see [`filter_slot`]); its length
    /// is a power of two.
    pub(super) filter: Vec<u64>,
    /// The distinct kept ids, in first-seen order.
    pub(super) kept: Vec<&'a str>,
    /// The hash of each of `kept`.
    pub(super) kept_hashes: Vec<u64>,
    /// Two distinct kept ids share a hash: the load falls back.
    pub(super) clash: bool,
    /// Tools whose in-scope policies and effects must be held; `None`: every policy and
    /// every effect (the tools are known only once the whole store is read).
    pub(super) tools: Option<Vec<String>>,
    /// For precheck and pin: tool names may be globs, each standing for every tool it
    /// covers (SPEC 2.3), so a policy is held when its scope meets one
    /// ([`crate::precheck::Domain::meets`]) and an effect when its `tool` meets one.
    pub(super) patterns: bool,
    /// For `pin`: hold every record a held one depends on, transitively.
    pub(super) pin: bool,
    /// For `pin --budget`: gather every record's tokens (see [`Budget`]), and digest
    /// every record parsed by the strict path (so each held record has its digest).
    pub(super) count_tokens: bool,
    /// How the kept ids were obtained: for a retention other than `given`, the ids are
    /// what the loader was told the retention keeps, and the load falls back unless the
    /// records' `seq`s bear that out (see [`Retention::keeps`]).
    pub(super) retention: Retention,
    /// Limits for the strict path.
    pub(super) limits: Limits,
    /// The kept ids were a `--kept` value read as a JSON array, which read as plain ids
    /// names ids with a `[`, `]` or `"`: a record whose id has one sends the load back to
    /// the exact loader, which refuses the value if it names that record either way.
    pub(crate) kept_json: bool,
}

impl<'a> Plan<'a> {
    /// A plan for kept ids `kept` (repeats are harmless) and the given tools.
    pub fn new(
        kept: impl IntoIterator<Item = &'a str>,
        tools: Option<Vec<String>>,
        limits: Limits,
    ) -> Plan<'a> {
        let kept = kept.into_iter();
        // Sized for the most ids the iterator may give (an upper bound, when it has one),
        // within reason: past that the index grows as it fills.
        let n = match kept.size_hint() {
            (_, Some(most)) => most,
            (least, None) => least,
        }
        .min(1 << 22);
        let mut plan = Plan {
            index: IdMap::with_capacity_and_hasher(n, Default::default()),
            filter: Vec::new(),
            kept: Vec::with_capacity(n),
            kept_hashes: Vec::with_capacity(n),
            clash: false,
            tools,
            patterns: false,
            pin: false,
            count_tokens: false,
            retention: Retention::Given,
            limits,
            kept_json: false,
        };
        for id in kept {
            let h = id_hash(id.as_bytes());
            match plan.index.entry(h) {
                std::collections::hash_map::Entry::Occupied(k) => {
                    // A repeat is harmless; another id of the same hash is a clash.
                    if plan.kept.get(*k.get() as usize) != Some(&id) {
                        plan.clash = true;
                    }
                }
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(plan.kept.len() as u32);
                    plan.kept.push(id);
                    plan.kept_hashes.push(h);
                }
            }
        }
        // About ten bits per kept id, up to the cap (past it, more ids only raise the
        // filter's false positives, which the index then turns away).
        let words = (plan.kept.len() * 10 / 64)
            .next_power_of_two()
            .clamp(64, FILTER_MAX_WORDS);
        plan.filter = vec![0; words];
        for &h in &plan.kept_hashes {
            let (at, bits) = filter_slot(h, words);
            if let Some(w) = plan.filter.get_mut(at) {
                *w |= bits;
            }
        }
        plan
    }

    /// The plan for precheck: tool names may be globs, a policy is held when it may
    /// scope one of them, an effect when one covers its tool.
    pub fn for_patterns(mut self) -> Plan<'a> {
        self.patterns = true;
        self
    }

    /// The plan for `pin`: as [`Plan::for_patterns`], and every record a held record
    /// depends on (transitively) is held too.
    pub fn for_pin(mut self) -> Plan<'a> {
        self.pin = true;
        self.for_patterns()
    }

    /// Also gather every record's tokens, for `pin --budget` (see [`Budget`]), and give
    /// every held record its digest.
    pub fn counting_tokens(mut self) -> Plan<'a> {
        self.count_tokens = true;
        self
    }

    /// The kept ids are those `retention` keeps (as the caller read them from the input's
    /// first and last records): the compaction is under `retention`, and the load falls
    /// back unless the kept records are exactly the ones it keeps by `seq`.
    pub fn under(mut self, retention: Retention) -> Plan<'a> {
        self.retention = retention;
        self
    }

    /// The index of `id` (whose hash is `h`) among the kept ids.
    pub(super) fn kept_index(&self, id: &str, h: u64) -> Option<u32> {
        let (at, bits) = filter_slot(h, self.filter.len());
        if self.filter.get(at).is_none_or(|w| w & bits != bits) {
            return None;
        }
        let k = *self.index.get(&h)?;
        (self.kept.get(k as usize) == Some(&id)).then_some(k)
    }

    pub(super) fn in_scope(&self, record: &Record) -> bool {
        match &record.kind {
            Kind::Policy(p) => self.policy_in_scope(&p.scope),
            Kind::Effect(e) => self.effect_in_scope(&e.tool),
            _ => false,
        }
    }

    /// Whether records other than chatter may take the light paths, which count no
    /// tokens (`pin --budget` needs every record's).
    pub(super) fn light(&self) -> bool {
        !self.count_tokens
    }

    /// Whether a policy with this `scope` scopes one of the tools (as
    /// [`crate::record::Policy::scopes`] decides; for precheck and pin, whose tools may be
    /// globs, as [`crate::precheck::Domain::meets`] does; any does when the tools are
    /// not known).
    pub(super) fn policy_in_scope<S: AsRef<str>>(&self, scope: &[S]) -> bool {
        let scopes = |s: &str, t: &str| {
            if self.patterns {
                globs_overlap(s, t)
            } else {
                glob_match(s, t)
            }
        };
        self.tools.as_ref().is_none_or(|tools| {
            tools
                .iter()
                .any(|t| scope.iter().any(|s| scopes(s.as_ref(), t)))
        })
    }

    /// Whether an effect of `tool` (a name or glob) may be replayed by a call of one of the
    /// tools, as [`crate::gate::replay`] decides: for `check`, its `tool` covers the call's
    /// tool; for precheck and pin, whose tools may be globs, some name is covered by both
    /// (as [`crate::precheck::effect_meets`] decides); any is when the tools are not known.
    pub(super) fn effect_in_scope(&self, tool: &str) -> bool {
        self.tools.as_ref().is_none_or(|tools| {
            tools.iter().any(|t| {
                if self.patterns {
                    globs_overlap(tool, t)
                } else {
                    glob_match(tool, t)
                }
            })
        })
    }
}
