#!/usr/bin/env bash
# bench/lines.sh: the size of the fast path (the lean loader), per file.
#
# The fast path is src/scan/, src/stream/, src/input/lean.rs and src/input/source.rs.
# Columns, per file:
#   all    every line of the file
#   nontest  the lines outside tests: a file that is all tests (`tests.rs`) counts 0,
#          and an inline `#[cfg(test)] mod NAME { ... }` block (up to its closing `}` in
#          column 0) is left out
#   code   the `nontest` lines that are neither blank nor a comment (a line whose first
#          non-blank characters are `//`, doc comments included)
# The totals of the three columns are printed last. `src/ids.rs` (the id hash and the
# sort, shared with the compaction's totals) and `src/input/lean_tests.rs` (the lean
# loader's tests in the input module) are shown apart, outside the totals.
#
#   bash bench/lines.sh            # the working tree
#   REV=main bash bench/lines.sh   # a commit, read with git show
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REV=${REV:-}

files() {
    if [ -n "$REV" ]; then
        git ls-tree -r --name-only "$REV" -- src/scan src/stream src/input/lean.rs src/input/source.rs
    else
        ls src/scan/*.rs src/stream/*.rs src/input/lean.rs src/input/source.rs
    fi | sort
}
show() { if [ -n "$REV" ]; then git show "$REV:$1" 2>/dev/null || true; else cat "$1" 2>/dev/null || true; fi; }

count() { # count FILE: prints "all nontest code"
    local f=$1
    show "$f" | awk -v whole_test="$([[ $f == */tests.rs || $f == *_tests.rs ]] && echo 1 || echo 0)" '
        { all++ }
        whole_test == 1 { next }
        skipping { if ($0 ~ /^}/) skipping = 0; next }
        /^#\[cfg\(test\)\]$/ { pending = 1; held = $0; next }
        pending {
            pending = 0
            if ($0 ~ /^mod [a-z_]+ \{/) { skipping = 1; next }
            nontest++; if (held !~ /^[ \t]*$/) code++
        }
        { nontest++ }
        /^[ \t]*$/ { next }
        /^[ \t]*\/\// { next }
        { code++ }
        END { printf "%d %d %d\n", all, nontest, code }'
}

printf '%-28s %6s %8s %6s\n' file all nontest code
ta=0 tn=0 tc=0
for f in $(files); do
    read -r a n c < <(count "$f")
    printf '%-28s %6d %8d %6d\n' "$f" "$a" "$n" "$c"
    ta=$((ta + a)) tn=$((tn + n)) tc=$((tc + c))
done
printf '%-28s %6d %8d %6d\n' "total (fast path)" "$ta" "$tn" "$tc"
for f in src/ids.rs src/input/lean_tests.rs; do
    read -r a n c < <(count "$f")
    printf '%-28s %6d %8d %6d   (not in the total)\n' "$f" "$a" "$n" "$c"
done
