"""zkey jobs through the engine with their proof checks in processes or on the prover's thread.

A zkey job's proof is verified before it is kept (a pairing check in Python, ~30 ms). With
``[engine] check_workers = 0`` stage 2 does it between proofs; with N > 0 it goes to N spawned
processes while stage 2 proves the next job. Each variant runs in a fresh process (``--one``),
variants alternating, ``--rounds`` rounds: a warm-up job, then COUNT jobs submitted at once and
awaited; the figure is wall time per job.

    python bench/zkey_check_bench.py --workers 0 1 2 --count 30 --rounds 3 --out J.json

The key and witness default to the test corpus's (tests/fuzz_corpus: a circom circuit of a few
constraints, where the check dominates a job); ``--zkey`` and ``--wtns`` take others.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cuzk_core.bench import environment
from cuzk_core.fileio import write_json_atomic

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "fuzz_corpus"


def one(zkey: Path, wtns: Path, profile: str, workers: int, count: int) -> float:
    """Wall ms per job for ``count`` jobs on a fresh engine (after one warm-up job)."""
    from cuzk_core.engine import Engine, EngineConfig, JobInput, JobRequest, JobState, check_key
    from cuzk_core.engine.keys import KeyKind
    from cuzk_core.profile import load_profile

    witness = wtns.read_bytes()
    with tempfile.TemporaryDirectory() as folder:
        specs = {"zk": check_key("zk", KeyKind.ZKEY, zkey)}
        config = EngineConfig(
            Path(folder), load_profile(profile), specs, 1 << 32, check_workers=workers
        )
        engine = Engine(config)
        engine.start()
        try:
            request = JobRequest("zk", JobInput(), witness_upload=witness)
            engine.await_job(engine.submit(request).job_id, 120)
            began = time.perf_counter()
            jobs = [engine.submit(request).job_id for _ in range(count)]
            for job in jobs:
                record = engine.await_job(job, 600)
                if record.state is not JobState.DONE:
                    sys.exit(f"job {job}: {record.state.value}: {record.error}")
            return 1000.0 * (time.perf_counter() - began) / count
        finally:
            engine.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zkey", type=Path, default=CORPUS / "zkey" / "seed-one_private.zkey")
    parser.add_argument("--wtns", type=Path, default=CORPUS / "wtns" / "seed-one_private.wtns")
    parser.add_argument("--profile", default="fastcpu")
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a variant's own process
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.one is not None:
        print(one(args.zkey, args.wtns, args.profile, args.one, args.count))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        zkey = Path(folder) / args.zkey.name  # a copy: its key cache is written beside it
        zkey.write_bytes(args.zkey.read_bytes())
        runs: dict[int, list[float]] = {w: [] for w in args.workers}
        for _ in range(args.rounds):
            for workers in args.workers:
                command = [sys.executable, __file__, "--one", str(workers)]
                command += ["--zkey", str(zkey), "--wtns", str(args.wtns)]
                command += ["--profile", args.profile, "--count", str(args.count)]
                done = subprocess.run(command, capture_output=True, text=True, check=False)
                if done.returncode != 0:
                    sys.exit(f"check_workers = {workers} failed:\n{done.stderr}")
                runs[workers].append(float(done.stdout.split()[-1]))
    print(f"{'check_workers':>13} {'ms a job, median':>17}  runs")
    for workers, values in runs.items():
        shown = " ".join(f"{v:.1f}" for v in values)
        print(f"{workers:>13} {statistics.median(values):>17.1f}  {shown}")
    if args.out:
        record = {
            "benchmark": "zkey-check-workers",
            "zkey": str(args.zkey),
            "profile": args.profile,
            "count": args.count,
            "environment": environment.capture(),
            "ms_per_job": {
                str(w): {"median": statistics.median(v), "runs": v} for w, v in runs.items()
            },
        }
        write_json_atomic(args.out, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
