#!/usr/bin/env bash
# load_params of a key cache under each memory.key_storage on the H200, warm page cache, plus
# the host policy with pageable buffers (pinning = "none") to show what page-locking costs.
#   bench/h200_keyload.sh PARAMS_DIR [PROFILE] [JSON_OUT]
# PARAMS_DIR holds params.bin and params.bin.cuzkkey (`cuzk setup` writes both; for 2^20:
# python bench/setup_params.py --log-size 20 --profile profiles/h200.toml --out PARAMS_DIR).
set -euo pipefail
params=${1:?usage: bench/h200_keyload.sh PARAMS_DIR [PROFILE] [JSON_OUT]}
profile=${2:-profiles/h200.toml}
out=${3:-bench/results/$(date +%F)-keyload-h200.json}
here=$(dirname "$0")
python3 "$here/keyload_bench.py" --params "$params/params.bin" --profile "$profile" \
  --storage host,mmap,device,stream --runs 5 --processes 3 --json "$out"
python3 "$here/keyload_bench.py" --params "$params/params.bin" --profile "$profile" \
  --storage host --change memory.pinning=none --runs 5 --processes 3 --json "${out%.json}-pageable.json"
