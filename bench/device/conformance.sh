#!/usr/bin/env bash
# The GPU conformance run (rounds 27–33): the conformance suite and every test file with GPU
# tests, on every backend installed, held to the cpu reference; the output to OUT/conformance.txt
# as it goes. Run from the tree's root after `source bench/device/prepare.sh …; wait_pycuda`.
#   bash bench/device/conformance.sh OUT [SEED] [WORKERS] [pytest args...]
# -n 16 runs some MSM tests out of memory on an 80 GB H100; 6 takes ~3.5 min a backend there.
set -uo pipefail
out=${1:?usage: conformance.sh OUT [SEED] [WORKERS] [pytest args...]}
seed=${2:-$RANDOM}
workers=${3:-6}
shift $(($# < 3 ? $# : 3))
mkdir -p "$out"
python3 -m pytest -q -n "$workers" -p no:cacheprovider --cuzk-seed "$seed" \
    cuzk_core/conformance/suite tests/conformance tests/test_gpu_backends.py tests/test_groth16.py \
    tests/test_engine.py tests/test_host_work.py tests/test_msm_steps.py \
    tests/test_witness_schedule.py tests/test_poseidon.py tests/test_porep_lite.py \
    tests/test_witness.py "$@" > "$out/conformance.txt" 2>&1
rc=$?
echo "conformance seed $seed, $workers workers: rc $rc; $(tail -1 "$out/conformance.txt")"
exit $rc
