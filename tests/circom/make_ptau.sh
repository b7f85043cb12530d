#!/usr/bin/env bash
# Make a prepared bls12381 powers-of-tau file with one contribution, for tests and benchmarks only
# (its toxic waste is not destroyed with any care: never use it for real keys).
#   tests/circom/make_ptau.sh [POWER] [OUT]   (default: 10 and tests/circom/pot10_final.ptau)
# The committed pot10_final.ptau came from `tests/circom/make_ptau.sh 10` (snarkjs 0.7.6, about
# 20 s on 2 cores); `prepare phase2` dominates and grows ~5x per two powers (2^12: 90 s; 2^16:
# about an hour on a shared 2-core machine, which is what bench/snarkjs_vs_cuzk.py needs).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
power="${1:-10}"
out="${2:-$here/pot${power}_final.ptau}"
snarkjs="$here/../../node_modules/.bin/snarkjs"
[ -x "$snarkjs" ] || { echo "snarkjs not found: run 'npm ci' in the repository root" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$snarkjs" powersoftau new bls12381 "$power" "$work/pot_0.ptau"
"$snarkjs" powersoftau contribute "$work/pot_0.ptau" "$work/pot_1.ptau" \
  --name="cuzk test fixture" -e="cuzk test fixture entropy $power"
"$snarkjs" powersoftau prepare phase2 "$work/pot_1.ptau" "$work/pot_final.ptau"
mv "$work/pot_final.ptau" "$out"
echo "wrote $out"
