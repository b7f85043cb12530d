#!/usr/bin/env bash
# Issue 14's H200 figure: the daemon against 20 fresh `cuzk prove` processes and against
# pipelining off, plus its added latency, at porep-lite 2^20 (135 challenges, depth 32). Makes
# the key first unless DIR already holds one (the first setup compiles the circuit: ~90 s).
#   bash bench/h200_daemon.sh [DIR] [OUT]
#   bash bench/h200_daemon.sh /tmp/p20 bench/results
set -euo pipefail
params=${1:-/tmp/p20}
out=${2:-bench/results}
export CUZK_CACHE_DIR=${CUZK_CACHE_DIR:-$params/cache}
if [ ! -f "$params/params.bin.cuzkkey" ]; then
    cuzk --profile h200 -q setup --challenges 135 --depth 32 --seed 1 --out "$params"
fi
mkdir -p "$out"
python3 "$(dirname "$0")/daemon_bench.py" --profile h200 --sizes 20 --params "$params" \
    --count 20 --latency-runs 5 --out "$out" --label h200
