"""Time loading a proving key from its key cache under each ``memory.key_storage``, with the peak
RSS the load adds, one fresh process per policy (the page cache warmed first).

    python bench/keyload_bench.py --params /tmp/p18/params.bin --profile cpu --runs 5 \\
        --json bench/results/DATE-keyload-cpu-2e18.json

A child process loads the profile's backend with ``memory.key_storage`` (and each ``--change``)
set, resets its RSS high-water mark (``/proc/self/clear_refs``), then times
``ParamsFile(path).load(backend)`` ``--runs`` times: the ``load_params`` phase is this call plus
O(inputs) bookkeeping; under ``device`` the later loads return the process's resident key. Each
policy runs in ``--processes`` fresh processes, interleaved; wall and CPU seconds (all threads:
the figure to compare on a busy machine) are their medians. The first load's peak RSS above the
RSS before it is what the key-cache targets bound: ``mmap`` ≤ 0.2 ×, ``host`` ≤ 1.2 × the key's
bytes. ``key_alloc`` is the time the first load spent in the backend's five host buffers
(page-locked on a GPU backend that pins through a pool), overlapped with the reading of the
sections before each.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from cuzk_core.bench import environment

POLICIES = ("host", "mmap", "device", "stream")


def _rss_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def child(params: Path, profile: str, changes: dict[str, str], storage: str, runs: int) -> dict:
    """Load the key ``runs`` times under ``storage`` in this process; timings and RSS."""
    from cuzk_core.groth16.key_cache import beside, read_header
    from cuzk_core.groth16.key_sources import ParamsFile
    from cuzk_core.plugins import load_plugins
    from cuzk_core.profile import load_profile
    from cuzk_core.timing import Timer

    timer = Timer(level=0)
    changes = {**changes, "memory.key_storage": storage}
    backend = load_plugins().backend(load_profile(profile, changes), timer)
    backend.prepare()
    key_bytes = read_header(beside(params)).key_bytes
    source = ParamsFile(params, log=lambda message: print(message, file=sys.stderr))
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS
    before = _rss_kib("VmRSS")
    seconds, cpu_seconds, keys = [], [], []
    for _ in range(runs):
        start, cpu_start = time.perf_counter(), time.process_time()
        keys.append(source.load(backend))
        seconds.append(time.perf_counter() - start)
        cpu_seconds.append(time.process_time() - cpu_start)
        if len(keys) == 1:
            peak = _rss_kib("VmHWM")
        if storage != "device":
            keys.clear()  # the next load allocates afresh, as a new proof would
    spans: dict[str, list[float]] = {}
    for span in timer.spans:
        if span.name == "key_alloc" and len(spans.get("key_alloc", [])) < 5:  # the first load's
            spans.setdefault(span.name, []).append(round(span.ms / 1000, 4))
    return {
        "storage": storage,
        "backend": backend.name,
        "key_bytes": key_bytes,
        "first_s": round(seconds[0], 4),
        "later_median_s": round(statistics.median(seconds[1:]), 4) if runs > 1 else None,
        "all_s": [round(s, 4) for s in seconds],
        "cpu_all_s": [round(s, 4) for s in cpu_seconds],
        "spans_s": spans,
        "rss_before_kib": before,
        "peak_rss_added_kib": peak - before,
        "peak_rss_added_over_key": round((peak - before) * 1024 / key_bytes, 3),
    }


def main() -> None:
    """Run one child per policy and print (and optionally write) what each measured."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=Path, required=True, help="a params.bin with its cache")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument(
        "--change", action="append", default=[], metavar="KEY=VALUE",
        help="a profile key changed for every load (e.g. memory.pinning=none), repeatable",
    )  # fmt: skip
    parser.add_argument("--storage", default=",".join(POLICIES), help="policies, comma-separated")
    parser.add_argument("--runs", type=int, default=5, help="loads in each process")
    parser.add_argument("--processes", type=int, default=3, help="fresh processes per policy")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    changes = dict(change.split("=", 1) for change in args.change)
    if args.child:
        print(json.dumps(child(args.params, args.profile, changes, args.child, args.runs)))
        return
    cache = args.params.with_name(args.params.name + ".cuzkkey")
    if not cache.is_file():
        sys.exit(f"{cache}: no key cache beside the key (cuzk setup writes one)")
    with cache.open("rb") as f:  # into the page cache: the figures are for a warm cache
        while f.read(64 << 20):
            pass
    policies = args.storage.split(",")
    children: dict[str, list[dict]] = {storage: [] for storage in policies}
    for _ in range(args.processes):  # the policies interleaved, so drift in load hits each alike
        for storage in policies:
            command = [sys.executable, __file__, "--params", str(args.params), "--profile",
                       args.profile, "--runs", str(args.runs), "--child", storage,
                       *(f"--change={change}" for change in args.change)]  # fmt: skip
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                sys.exit(f"{storage}: {done.stderr.strip().splitlines()[-1:]}")
            children[storage].append(json.loads(done.stdout))
    results = []
    for storage, runs in children.items():
        first = statistics.median(r["first_s"] for r in runs)
        later = statistics.median(r["later_median_s"] or 0 for r in runs)
        first_cpu = statistics.median(r["cpu_all_s"][0] for r in runs)
        later_cpu = statistics.median(s for r in runs for s in r["cpu_all_s"][1:] or [0])
        peak = max(r["peak_rss_added_kib"] for r in runs)
        alloc = statistics.median(sum(r["spans_s"].get("key_alloc", [0])) for r in runs)
        results.append({"storage": storage, "first_median_s": first, "later_median_s": later,
                        "first_cpu_median_s": first_cpu, "later_cpu_median_s": later_cpu,
                        "peak_rss_added_kib_max": peak, "processes": runs})  # fmt: skip
        print(
            f"{storage:7s} first {first * 1000:7.1f} ms (CPU {first_cpu * 1000:6.1f})  later "
            f"{later * 1000:7.1f} ms (CPU {later_cpu * 1000:6.1f})  (medians of {len(runs)} "
            f"processes; key_alloc of a first load {alloc * 1000:.1f} ms)"
            f"  peak RSS added {peak / 1024:7.1f} MiB ({peak * 1024 / runs[0]['key_bytes']:.2f}"
            " x the key)"
        )
    if args.json:
        document = {
            "schema": "cuzk-keyload/1",
            **environment.capture(),
            "profile": args.profile,
            "changes": changes,
            "params": str(args.params),
            "params_bytes": args.params.stat().st_size,
            "cache_bytes": cache.stat().st_size,
            "runs": args.runs,
            "results": results,
        }
        args.json.write_text(json.dumps(document, indent=1) + "\n")
        print(f"written to {args.json}")


if __name__ == "__main__":
    main()
