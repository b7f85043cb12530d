#!/usr/bin/env bash
# Issue 12's 2^24 figure on one H200: porep-lite 2165 challenges x depth 32, 16,770,090 constraints
# and 2,167 input rows, the largest porep-lite whose domain is 2^24 (2170 challenges need 2^25).
# Steps: the circuit's compile and per-proof synthesis (`bench synth`), setup (every span by
# CUZK_TIMING=2, wall and peak RSS by /usr/bin/time -v), proofs with the key resident
# (`bench prove`, host RSS and device memory sampled), then one fresh `cuzk prove` and its verify.
# A step whose result is already in OUT is skipped, so a call cut off by a time limit can go on.
#   bash bench/h200_2e24.sh [DIR] [OUT]        (PROFILE, CHALLENGES, DEPTH override the knobs)
#   bash bench/h200_2e24.sh /tmp/p24 /tmp/out-2e24
set -euo pipefail
params=${1:-/tmp/p24}
out=${2:-bench-h200-2e24}
profile=${PROFILE:-h200}
knobs=(--challenges "${CHALLENGES:-2165}" --depth "${DEPTH:-32}")
mkdir -p "$params" "$out"
export CUZK_CACHE_DIR=${CUZK_CACHE_DIR:-$params/cache}
stamp() { echo "== $(date +%T) $*" >&2; }
timed() { # label, command...: run it with /usr/bin/time -v and CUZK_TIMING=2 spans into OUT
    local label=$1
    shift
    CUZK_TIMING=2 /usr/bin/time -v -o "$out/$label-time.txt" "$@" 2> "$out/$label.log"
    grep -E "Elapsed|Maximum resident" "$out/$label-time.txt" >&2
}

if [ ! -f "$out/synth.json" ]; then
    stamp "compile + synthesis"
    cuzk --profile "$profile" -q bench synth "${knobs[@]}" --runs 3 --warmup 0 \
        --memlog "$out/synth-mem.csv" --json "$out/synth.json" > "$out/synth.txt"
    tail -12 "$out/synth.txt" >&2
fi
if [ ! -f "$params/params.bin.cuzkkey" ]; then
    stamp "setup"
    timed setup cuzk --profile "$profile" -q setup "${knobs[@]}" --seed 1 --out "$params"
fi
if [ ! -f "$out/prove.json" ]; then
    stamp "proofs with the key resident"
    cuzk --profile "$profile" -q bench prove --params "$params" "${knobs[@]}" --runs 3 --warmup 2 \
        --memlog "$out/prove-mem.csv" --json "$out/prove.json" > "$out/prove.txt"
    tail -20 "$out/prove.txt" >&2
fi
stamp "one fresh cuzk prove, then verify"
rm -rf "$out/proof"
timed prove cuzk --profile "$profile" -q prove --params "$params" "${knobs[@]}" --out "$out/proof"
cuzk verify --vk "$out/proof/vk.bin" --proof "$out/proof/proof.bin" --public "$out/proof/public.json"
stamp "done"
