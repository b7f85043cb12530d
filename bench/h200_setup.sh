#!/usr/bin/env bash
# Time `cuzk --profile h200 setup` of porep-lite at 2^20 (135 challenges, depth 32: 1,045,710
# constraints) on the H200, with every setup span (CUZK_TIMING=2), twice: a cold run (a fresh
# CUZK_CACHE_DIR, so the circuit's one-time compile is inside: record, check_program) and a warm
# one (the compiled circuit cached: load_compiled instead). Then one proof with the key and
# `cuzk verify`, so a fast but wrong key cannot pass. Writes the logs and a JSON summary of the
# phases into OUT (default bench-h200-setup/): the issue-13 target is setup <= 10 s at 2^20.
#
#   bash bench/h200_setup.sh [OUT] [PROFILE] [CHALLENGES] [DEPTH]
#   bash bench/h200_setup.sh /tmp/h200-setup h200 135 32
set -euo pipefail

out=${1:-bench-h200-setup}
profile=${2:-h200}
challenges=${3:-135}
depth=${4:-32}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cache="$out/cache"
rm -rf "$cache" "$out/params-cold" "$out/params-warm" "$out/proof"

run_setup() { # label: one timed `cuzk setup` into $out/params-<label>
    local label=$1
    echo "== setup ($label)" >&2
    CUZK_CACHE_DIR="$cache" CUZK_TIMING=2 /usr/bin/time -v -o "$out/time-$label.txt" \
        cuzk --profile "$profile" --quiet setup --challenges "$challenges" --depth "$depth" \
        --seed 1 --out "$out/params-$label" 2> "$out/setup-$label.log"
    grep -E "Elapsed|Maximum resident" "$out/time-$label.txt" >&2
}

run_setup cold
run_setup warm
cmp "$out/params-cold/params.bin" "$out/params-warm/params.bin" # same seed: the same key

echo "== prove + verify with the warm key" >&2
CUZK_CACHE_DIR="$cache" cuzk --profile "$profile" --quiet prove --params "$out/params-warm" \
    --out "$out/proof" --seed 1
cuzk verify --vk "$out/proof/vk.bin" --proof "$out/proof/proof.bin" \
    --public "$out/proof/public.json" | tee "$out/verify.txt"

python3 - "$out" "$profile" "$challenges" "$depth" <<'EOF'
"""Summarise the CUZK_TIMING spans and /usr/bin/time of both setups into setup-summary.json."""
import json
import re
import sys
from pathlib import Path

out, profile, challenges, depth = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
summary = {
    "schema": "cuzk-notes/1",
    "kind": "h200-setup-phases",
    "command": f"cuzk --profile {profile} --quiet setup --challenges {challenges} --depth {depth} "
    "--seed 1 --out DIR  (CUZK_TIMING=2, /usr/bin/time -v)",
    "runs": {},
}
try:
    from cuzk_core.bench.environment import capture

    summary["environment"] = capture()
except Exception as exc:  # the summary is still worth having without it
    summary["environment_error"] = str(exc)
for label in ("cold", "warm"):
    spans: dict[str, float] = {}
    top_level_ms = 0.0  # spans without a parent: the rest of the wall is start-up and writing
    for line in (out / f"setup-{label}.log").read_text().splitlines():
        m = re.match(r"CUZK_TIMING span=(\S+) ms=([\d.]+)", line)
        if m:
            spans[m[1]] = round(spans.get(m[1], 0.0) + float(m[2]), 1)
            top_level_ms += 0.0 if " parent=" in line else float(m[2])
    timing = (out / f"time-{label}.txt").read_text()
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", timing)[1]
    seconds = sum(float(p) * 60**i for i, p in enumerate(reversed(wall.split(":"))))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", timing)[1])
    outside = round(seconds - top_level_ms / 1000, 2)
    summary["runs"][label] = {
        "wall_s": seconds,
        "peak_rss_kb": rss,
        "spans_ms": spans,
        "outside_spans_s": outside,  # imports, the circuit's tree, params.bin and the key cache
    }
summary["verify"] = (out / "verify.txt").read_text().strip()
(out / "setup-summary.json").write_text(json.dumps(summary, indent=1) + "\n")
for label, run in summary["runs"].items():
    print(
        f"{label}: wall {run['wall_s']:.1f} s, peak RSS {run['peak_rss_kb'] / 2**20:.2f} GiB, "
        f"outside the spans {run['outside_spans_s']:.1f} s"
    )
    for span, ms in sorted(run["spans_ms"].items(), key=lambda kv: -kv[1]):
        print(f"    {span:24s} {ms / 1000:8.2f} s")
print(f"wrote {out / 'setup-summary.json'}")
EOF
