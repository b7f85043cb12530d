"""snarkjs against cuzk on the same zkey and witness: `groth16 prove` vs `cuzk prove --zkey`.

For each size 2^k it generates a circom multiplication chain with 2^k − 3 constraints (one public
input, one public output: the rows plus public signals just fill a 2^k domain), compiles it for
bls12381, makes its zkey — with `--ptau`, snarkjs's setup and one contribution against a
prepared powers of tau of at least that power (tests/circom/make_ptau.sh makes one); without,
`cuzk setup --zkey` (a development key, no ceremony, so sizes past any ptau at hand) — computes
the witness, then times each prover as a whole command, file reading included, alternating
snarkjs and cuzk, under /usr/bin/time for each command's peak RSS; the ratio is reported of the
medians and of the best runs (snarkjs's worker threads suffer most when the machine is shared).
Every proof is checked with `snarkjs groth16 verify`. Results go to bench/results/ as JSON.

    python bench/snarkjs_vs_cuzk.py --ptau /tmp/pot16_final.ptau --sizes 12 14 16 --repeat 3
    python bench/snarkjs_vs_cuzk.py --profile fastcpu --sizes 18 --repeat 2
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cuzk_core.bench import environment

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / "node_modules" / ".bin"
CIRCUIT = """pragma circom 2.0.0;

// {n} constraints s[i] = s[i-1]^2 + i: full-size witness values, so no MSM shortcut applies.
template MulChain(n) {{
    signal input x;
    signal output y;
    signal s[n];
    s[0] <== x * x;
    for (var i = 1; i < n; i++) {{
        s[i] <== s[i - 1] * s[i - 1] + i;
    }}
    y <== s[n - 1];
}}

component main {{public [x]}} = MulChain({n});
"""


TIME = Path("/usr/bin/time")
_PEAK_RSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")


def run(*command: str | Path, cwd: Path | None = None) -> float:
    """Run a command to completion; its wall time in seconds (a failure stops the benchmark)."""
    return run_measured(*command, cwd=cwd)[0]


def run_measured(*command: str | Path, cwd: Path | None = None) -> tuple[float, float | None]:
    """Wall seconds and peak RSS in MiB (None without GNU time) of one command, children
    included (snarkjs's worker threads are one process; GNU time reports the largest RSS of
    the command and its waited-for children)."""
    argv = [str(c) for c in command]
    report = None
    if TIME.exists():
        report = Path(os.environ.get("TMPDIR", "/tmp")) / f"cuzk-bench-time-{os.getpid()}.txt"
        argv = [str(TIME), "-v", "-o", str(report), *argv]
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, command))}\n{done.stdout}\n{done.stderr}")
    if report is None:
        return elapsed, None
    found = _PEAK_RSS.search(report.read_text())
    report.unlink()
    return elapsed, round(int(found.group(1)) / 1024, 1) if found else None


def tool_version(command: list[str]) -> str:
    """The first line a tool prints about its version."""
    done = subprocess.run(command, capture_output=True, text=True)
    return (done.stdout or done.stderr).strip().splitlines()[0]


def machine() -> dict[str, Any]:
    """What the numbers were measured on, plus the node tools compared against."""
    return {
        **environment.capture(),
        "node": tool_version(["node", "--version"]),
        "snarkjs": tool_version([str(BIN / "snarkjs"), "--version"]),
        "circom2": tool_version([str(BIN / "circom2"), "--version"]),
    }


def prepare(
    log_size: int, ptau: Path | None, profile: str, work: Path
) -> tuple[dict[str, Path], dict[str, Any]]:
    """Compile, make the zkey and compute the witness for the 2^log_size chain (cached in
    ``work``); the files, and how the key was made (with its setup time when made now)."""
    n = (1 << log_size) - 3
    key = "snarkjs groth16 setup + 1 contribution" if ptau else "cuzk setup --zkey (development)"
    folder = work / (f"chain{log_size}" if ptau else f"chain{log_size}-cuzkkey")
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "r1cs": folder / "chain.r1cs",
        "zkey": folder / "chain.zkey",
        "vk": folder / "vk.json",
        "wtns": folder / "chain.wtns",
    }
    made: dict[str, Any] = {"key": key}
    if all(p.exists() for p in files.values()):
        return files, made
    source = folder / "chain.circom"
    source.write_text(CIRCUIT.format(n=n))
    # circom2 (WebAssembly) sees only its working directory: run it from / with relative paths.
    flags = ("--r1cs", "--wasm", "--prime", "bls12381", "-o", folder.relative_to("/"))
    made["compile_s"] = round(
        run(BIN / "circom2", source.relative_to("/"), *flags, cwd=Path("/")), 1
    )
    if ptau is not None:
        first = folder / "chain_0.zkey"
        run(BIN / "snarkjs", "groth16", "setup", files["r1cs"], ptau, first)
        run(BIN / "snarkjs", "zkey", "contribute", first, files["zkey"], "--name=bench", "-e=bench")
    else:
        setup = ("-q", "--profile", profile, "setup", "--r1cs", files["r1cs"], "--seed", "1")
        seconds, peak = run_measured(cuzk_command(), *setup, "--zkey", files["zkey"])
        made.update(setup_s=round(seconds, 1), setup_peak_rss_mib=peak)
    run(BIN / "snarkjs", "zkey", "export", "verificationkey", files["zkey"], files["vk"])
    if ptau is None:  # the vk cuzk wrote beside the zkey is the one snarkjs exports from it
        ours = json.loads(files["zkey"].with_suffix(".vk.json").read_text())
        made["cuzk_vk_equals_snarkjs_export"] = ours == json.loads(files["vk"].read_text())
    (folder / "input.json").write_text(json.dumps({"x": "3"}))
    wasm = folder / "chain_js" / "chain.wasm"
    run(BIN / "snarkjs", "wtns", "calculate", wasm, folder / "input.json", files["wtns"])
    return files, made


def cuzk_command() -> str:
    """The ``cuzk`` console script."""
    cuzk = shutil.which("cuzk")
    if cuzk is None:
        sys.exit("the cuzk command is not on PATH: pip install -e . first")
    return cuzk


def verified(vk: Path, folder: Path) -> bool:
    """Whether snarkjs accepts the proof in ``folder``."""
    files = (vk, folder / "public.json", folder / "proof.json")
    done = subprocess.run(
        [str(BIN / "snarkjs"), "groth16", "verify", *map(str, files)],
        capture_output=True,
        text=True,
    )
    return done.returncode == 0 and "OK" in done.stdout


def measure(files: dict[str, Path], profile: str, repeat: int, work: Path) -> dict[str, Any]:
    """Alternate the two provers ``repeat`` times; wall times, cuzk's phases, verification."""
    cuzk = cuzk_command()
    snarkjs_dir, cuzk_dir = work / "snarkjs_out", work / "cuzk_out"
    snarkjs_dir.mkdir(exist_ok=True)
    snarkjs_s, cuzk_s, phases = [], [], []
    snarkjs_rss, cuzk_rss = [], []
    load_before = round(os.getloadavg()[0], 2)
    options = ("-q", "--profile", profile, "prove", "--out", cuzk_dir)
    # the first proof converts the zkey into the key cache once; later ones read the cache
    first_s, first_rss = run_measured(
        cuzk, *options, "--zkey", files["zkey"], "--wtns", files["wtns"]
    )
    for _ in range(repeat):
        outputs = (snarkjs_dir / "proof.json", snarkjs_dir / "public.json")
        inputs = (files["zkey"], files["wtns"])
        seconds, peak = run_measured(BIN / "snarkjs", "groth16", "prove", *inputs, *outputs)
        snarkjs_s.append(seconds)
        snarkjs_rss.append(peak)
        seconds, peak = run_measured(cuzk, *options, "--zkey", inputs[0], "--wtns", inputs[1])
        cuzk_s.append(seconds)
        cuzk_rss.append(peak)
        timings = json.loads((cuzk_dir / "timings.json").read_text())
        phases.append(timings)
    snarkjs_median, cuzk_median = statistics.median(snarkjs_s), statistics.median(cuzk_s)
    return {
        "load_average_1m_before": load_before,
        "load_average_1m_after": round(os.getloadavg()[0], 2),
        "zkey_mib": round(files["zkey"].stat().st_size / (1 << 20), 1),
        "cuzk_first_s": round(first_s, 3),
        "cuzk_first_peak_rss_mib": first_rss,
        "snarkjs_s": [round(t, 3) for t in snarkjs_s],
        "cuzk_s": [round(t, 3) for t in cuzk_s],
        "snarkjs_peak_rss_mib": snarkjs_rss,
        "cuzk_peak_rss_mib": cuzk_rss,
        "snarkjs_median_s": round(snarkjs_median, 3),
        "cuzk_median_s": round(cuzk_median, 3),
        "cuzk_over_snarkjs": round(cuzk_median / snarkjs_median, 2),
        "cuzk_over_snarkjs_best": round(min(cuzk_s) / min(snarkjs_s), 2),
        "cuzk_phase_ms": _median_phases(phases),
        "snarkjs_proof_verified": verified(files["vk"], snarkjs_dir),
        "cuzk_proof_verified": verified(files["vk"], cuzk_dir),
    }


def _median_phases(runs: list[dict[str, Any]]) -> dict[str, float]:
    """Median milliseconds of each phase across runs (from each run's timings.json)."""
    names = runs[0]["phases_ms"]
    return {name: round(statistics.median(t["phases_ms"][name] for t in runs), 1) for name in names}


def main() -> None:
    """Parse arguments, run every size, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ptau", type=Path, help="prepared bls12381 ptau (default: zkeys from cuzk setup --zkey)"
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[12, 14, 16], help="log2 sizes")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each prover per size")
    parser.add_argument("--profile", default="cpu", help="cuzk profile (default cpu)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/cuzk-bench"), help="scratch")
    parser.add_argument("--out", type=Path, help="results file (default bench/results/…)")
    args = parser.parse_args()
    results = {"benchmark": "snarkjs groth16 prove vs cuzk prove --zkey", "machine": machine()}
    results["profile"] = args.profile
    results["sizes"] = []
    for log_size in args.sizes:
        print(f"2^{log_size}: preparing", file=sys.stderr, flush=True)
        files, made = prepare(log_size, args.ptau, args.profile, args.work)
        print(f"2^{log_size}: measuring", file=sys.stderr, flush=True)
        row = {"log_size": log_size, "constraints": (1 << log_size) - 3, **made}
        row.update(measure(files, args.profile, args.repeat, files["zkey"].parent))
        print(json.dumps(row), file=sys.stderr, flush=True)
        results["sizes"].append(row)
    out = args.out or REPO / "bench" / "results" / f"snarkjs_vs_cuzk_{Path(args.profile).stem}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=2) + "\n")
    tmp.replace(out)
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
