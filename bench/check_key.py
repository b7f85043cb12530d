"""Time ``cuzk check --key`` against the point-by-point check it replaces, and the check of its
own proof that every ``cuzk prove`` now makes before writing.

    python bench/check_key.py --challenges 2 --depth 8 --profile cpu \\
        --profile plugins/cuzk-fastcpu/src/cuzk_fastcpu/profiles/fastcpu.toml \\
        --json bench/results/DATE-check-key.json

The key is porep-lite's (made once with the first profile). Per profile: the whole check of
the key (random small-weight MSMs on the backend), then the exact check ([r]P = O in Python) of
``--sample`` points per group, extrapolated to the key's point counts.
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from cuzk_core.bench import environment
from cuzk_core.cli import main
from cuzk_core.curve.g1 import g1_in_subgroup
from cuzk_core.curve.g2 import g2_in_subgroup
from cuzk_core.groth16 import files, params_dir
from cuzk_core.groth16.keycheck import G1, G2, check_key
from cuzk_core.groth16.verifier import check_own_proof
from cuzk_core.plugins import load_plugins
from cuzk_core.profile import load_profile
from cuzk_core.timing import Timer


def cuzk(*args: object) -> None:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        assert main(["-q", *map(str, args)]) == 0


def exact_ms_per_point(points, in_subgroup, sample: int) -> float:
    chosen = [p for p in points.to_points()[:sample] if p is not None]
    start = time.perf_counter()
    assert all(in_subgroup(p) for p in chosen)
    return (time.perf_counter() - start) * 1000 / len(chosen)


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--challenges", type=int, default=2)
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--profile", action="append", required=True)
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cuzk-check-key-"))
    knobs = ["--challenges", args.challenges, "--depth", args.depth]
    folder, out = work / "params", work / "out"
    cuzk("--profile", args.profile[0], "setup", *knobs, "--out", folder, "--seed", 1)
    cuzk("--profile", args.profile[0], "prove", "--params", folder, "--out", out, "--seed", 2)
    pk = files.read_params(folder / params_dir.PARAMS_FILE)
    g1_points = sum(len(q) for q in (pk.h, pk.l, pk.a, pk.b_g1))
    vk, proof = files.read_vk(out / "vk.bin"), files.read_proof(out / "proof.bin")
    public = files.read_public(out / "public.json", expected=vk.num_public)
    start = time.perf_counter()
    check_own_proof(vk, proof, public, str(folder))
    own_proof_ms = (time.perf_counter() - start) * 1000
    g1_ms = exact_ms_per_point(pk.h, g1_in_subgroup, args.sample)
    g2_ms = exact_ms_per_point(pk.b_g2, g2_in_subgroup, args.sample)
    exact_s = (g1_points * g1_ms + len(pk.b_g2) * g2_ms) / 1000
    runs = []
    for profile in args.profile:
        backend = load_plugins().backend(load_profile(profile), Timer(level=0))
        start = time.perf_counter()
        report = check_key(folder, backend)
        seconds = time.perf_counter() - start
        runs.append({"profile": profile, "backend": backend.name, "check_key_s": round(seconds, 2)})
        print(f"{backend.name}: check --key {seconds:.2f} s (exact, extrapolated: {exact_s:.1f} s)")
    document = {
        "benchmark": "cuzk check --key vs the point-by-point subgroup check",
        **environment.capture(),
        "circuit": {"circuit": "porep-lite", "challenges": args.challenges, "depth": args.depth},
        "points": {"g1": report.g1_points, "g2": report.g2_points},
        "rounds": {"g1": G1.rounds, "g2": G2.rounds},
        "exact_ms_per_point": {"g1": round(g1_ms, 2), "g2": round(g2_ms, 2)},
        "exact_extrapolated_s": round(exact_s, 1),
        "runs": runs,
        "own_proof_check_ms": round(own_proof_ms, 1),
    }
    Path(args.json).write_text(json.dumps(document, indent=2) + "\n")
    print(f"checking its own proof: {own_proof_ms:.0f} ms; written to {args.json}")


if __name__ == "__main__":
    main_()
