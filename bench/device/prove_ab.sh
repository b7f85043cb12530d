#!/usr/bin/env bash
# Whole proofs, this tree against a reference tree, in alternating processes (`bench prove`,
# spans by CUZK_TIMING=2 in the first round only), the tree that goes first swapped every round:
# at 2^20 on an H100, with a fixed order, whichever tree went first read slower in 11 of 16
# rounds, by ~3% (weak evidence, p ≈ 0.1, but enough to fake a code effect; bench/NOTES.md,
# round 40). Run from the tree's root after
# `source bench/device/prepare.sh SHARED REF_TARBALL`, with a key made by `cuzk setup` in PARAMS.
#   bash bench/device/prove_ab.sh PARAMS OUT ROUNDS [bench prove args...]
#   bash bench/device/prove_ab.sh /tmp/p20 $OUT/ab 2 --challenges 135 --depth 32 --runs 5 --warmup 2
# Writes OUT/prove-{main,ref}-R.json and the processes' output to OUT/prove.log, then `cuzk bench
# compare` of each round (ref as A) to stdout and OUT/compare.txt: 2·ROUNDS + 2 files, as the
# device returns at most 8.
set -uo pipefail
params=${1:?usage: prove_ab.sh PARAMS OUT ROUNDS [bench prove args...]}
out=${2:?}
rounds=${3:?}
shift 3
source "$(dirname "$0")/use.sh"
mkdir -p "$out"
# absolute: each process runs in /tmp
params=$(cd "$params" && pwd) out=$(cd "$out" && pwd)
for round in $(seq 1 "$rounds"); do
    order=$([ $((round % 2)) = 1 ] && echo "main ref" || echo "ref main")
    for tree in $order; do
        use "$tree"
        timing=$([ "$round" = 1 ] && echo 2 || echo 0)
        # outside the tree's root: there `python -m` and pytest would import this tree's core
        (cd /tmp && CUZK_TIMING=$timing cuzk --profile "${PROFILE:-h200}" -q bench prove \
            --params "$params" --json "$out/prove-$tree-$round.json" "$@" \
            >> "$out/prove.log" 2>&1)
        echo "$tree round $round: rc $?"
    done
    (cd /tmp && cuzk bench compare "$out/prove-ref-$round.json" "$out/prove-main-$round.json") |
        tee -a "$out/compare.txt"
done
