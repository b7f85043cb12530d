"""``cuzk bench …`` and ``cuzk trace show``, and the ``--trace``/``--memlog`` options of prove.

:mod:`cuzk_core.cli.parser` registers these through :func:`add_bench_parser`,
:func:`add_trace_parser` and :func:`add_observation_options`; the work lives in
:mod:`cuzk_core.bench`.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cuzk_core.bench import environment
from cuzk_core.bench.arguments import parse_change, parse_percent, parse_size
from cuzk_core.bench.compare import DEFAULT_MIN_DELTA_MS, compare_results
from cuzk_core.bench.definitions import (
    Benchmark,
    MsmBench,
    NttBench,
    PoseidonBench,
    ProveBench,
    SynthBench,
)
from cuzk_core.bench.errors import BenchError
from cuzk_core.bench.isolate import isolate_deltas, isolate_variants
from cuzk_core.bench.memlog import DEFAULT_INTERVAL_S, MemoryLog
from cuzk_core.bench.report import format_comparison, format_result
from cuzk_core.bench.results import build_result, read_result, write_result
from cuzk_core.bench.runner import Variant, run_variants
from cuzk_core.bench.stats import paired_ratios
from cuzk_core.bench.trace import memory_line, read_trace, render_png, waterfall
from cuzk_core.cli import commands
from cuzk_core.cli.parser import whole_number
from cuzk_core.fileio import check_output_file, refuse_outputs_over_inputs, write_json_atomic
from cuzk_core.groth16 import params_dir
from cuzk_core.groth16.key_sources import ParamsFile
from cuzk_core.plugins import Plugins, load_plugins
from cuzk_core.profile import MSM_NAMES, load_profile
from cuzk_core.progress import Progress
from cuzk_core.timing import Timer

G1_MSMS = tuple(m for m in MSM_NAMES if m != "b_g2")

# ---------------------------------------------------------------- prove --trace / --memlog


def add_observation_options(parser: argparse.ArgumentParser) -> None:
    """``--trace FILE``, ``--memlog FILE`` and ``--memlog-interval S`` for ``cuzk prove``."""
    group = parser.add_argument_group("measurement")
    group.add_argument("--trace", metavar="FILE", help="write every span as JSON lines")
    _add_memlog_options(group)


def _add_memlog_options(group: argparse._ActionsContainer) -> None:
    group.add_argument(
        "--memlog", metavar="FILE", help="sample host RSS and device memory to this CSV"
    )
    group.add_argument(
        "--memlog-interval",
        metavar="S",
        type=float,
        default=DEFAULT_INTERVAL_S,
        help=f"seconds between memory samples (default {DEFAULT_INTERVAL_S})",
    )


# ---------------------------------------------------------------- cuzk bench …


def add_bench_parser(
    sub: argparse._SubParsersAction,
    add_circuit_options: Callable[[argparse.ArgumentParser], None],
    seed: Callable[[str], int],
) -> argparse._SubParsersAction:
    """Register ``bench msm|ntt|poseidon|synth|prove|compare|isolate``; returns the bench
    sub-parsers (``cuzk_core.cli.serve_commands`` adds the daemon benches there)."""
    bench = sub.add_parser("bench", help="time one phase alone, A/B profiles, compare results")
    actions = bench.add_subparsers(dest="bench_command", required=True, metavar="BENCH")

    def timed(name: str, text: str, ab: bool = True, warmup: int = 1) -> argparse.ArgumentParser:
        parser = actions.add_parser(name, help=text)
        parser.add_argument("--runs", type=whole_number, default=5, help="timed runs (default 5)")
        why = ": a GPU witness program's second run may time both its kernels" if warmup > 1 else ""
        parser.add_argument(
            "--warmup",
            type=whole_number,
            default=warmup,
            help=f"untimed runs first (default {warmup}{why})",
        )
        if ab:
            parser.add_argument("--vs", metavar="Q", help="A/B: also run profile Q, alternating")
        _add_output_option(parser)
        _add_memlog_options(parser.add_argument_group("memory"))
        return parser

    msm = timed("msm", "one MSM over seeded bases and scalars")
    msm.add_argument("--curve", choices=("g1", "g2"), default="g1", help="group (default g1)")
    msm.add_argument("--size", required=True, help="points: 2^20 or 1048576")
    msm.add_argument(
        "--msm",
        choices=MSM_NAMES,
        help="whose window bits the profile gives (default h for g1, b_g2 for g2)",
    )
    msm.add_argument("--seed", type=seed, default=1, help="input seed (default 1)")
    msm.set_defaults(handler=bench_msm)

    ntt = timed("ntt", "one NTT over seeded scalars")
    ntt.add_argument("--size", required=True, help="a power of two: 2^22 or 4194304")
    ntt.add_argument("--coset", action="store_true", help="coset NTT (shift 7) instead")
    ntt.add_argument("--seed", type=seed, default=1, help="input seed (default 1)")
    ntt.set_defaults(handler=bench_ntt)

    poseidon = timed("poseidon", "many Poseidon permutations in one call (a Merkle tree level)")
    poseidon.add_argument("--size", required=True, help="states: 2^12 or 4096")
    poseidon.add_argument("--seed", type=seed, default=1, help="input seed (default 1)")
    poseidon.set_defaults(handler=bench_poseidon)

    synth = timed(
        "synth", "the synthesis phase alone: witness, A·z, B·z, C·z and the check", warmup=2
    )
    add_circuit_options(synth)
    synth.add_argument(
        "--gadgets",
        action="store_true",
        help="run the circuit's gadgets every time instead of its compiled program (A/B)",
    )
    synth.set_defaults(handler=bench_synth)

    prove = timed("prove", "whole proofs, phase by phase", warmup=2)
    _add_prove_options(prove, add_circuit_options, seed)
    prove.set_defaults(handler=bench_prove)

    compare = actions.add_parser("compare", help="compare two saved results (a CI gate)")
    compare.add_argument("a", help="baseline results (JSON from --json)")
    compare.add_argument("b", help="results to judge against the baseline")
    compare.add_argument("--fail-above", metavar="PCT", help="exit 1 on a regression above PCT%%")
    compare.add_argument(
        "--phase", action="append", default=[], help="only this figure (repeatable)"
    )
    compare.add_argument(
        "--min-delta-ms",
        type=float,
        default=DEFAULT_MIN_DELTA_MS,
        help=f"smaller slowdowns never fail the gate (default {DEFAULT_MIN_DELTA_MS} ms)",
    )
    compare.add_argument("--force", action="store_true", help="compare across machines")
    _add_output_option(compare)
    compare.set_defaults(handler=bench_compare)

    isolate = timed("isolate", "the baseline, each --change alone and all together", ab=False)
    isolate.add_argument("base", help="baseline profile (path or shipped name)")
    isolate.add_argument(
        "--change",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a profile change, e.g. msm.split_01=true (repeatable)",
    )
    _add_prove_options(isolate, add_circuit_options, seed)
    isolate.set_defaults(handler=bench_isolate)
    return actions


def _add_output_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON (- for stdout)")


def _add_prove_options(
    parser: argparse.ArgumentParser,
    add_circuit_options: Callable[[argparse.ArgumentParser], None],
    seed: Callable[[str], int],
) -> None:
    parser.add_argument("--params", help="parameters folder from `cuzk setup` (default: cached)")
    parser.add_argument("--seed", type=seed, default=1, help="proof randomness seed (default 1)")
    add_circuit_options(parser)


MAX_RUNS = 10_000
"""The most timed (or warm-up) runs a bench takes: a typo of a few digits is not a week's run."""


def _check_counts(args: argparse.Namespace) -> None:
    if not 1 <= args.runs <= MAX_RUNS:
        raise BenchError(f"--runs {args.runs}: 1 to {MAX_RUNS} timed runs")
    if not 0 <= args.warmup <= MAX_RUNS:
        raise BenchError(f"--warmup {args.warmup}: 0 to {MAX_RUNS} untimed runs")


def _device_probe(plugins: Plugins, variants: list[Variant]) -> Callable[[], int | None]:
    """Device bytes in use summed over the distinct backends of the variants."""
    by_name = {v.profile.backend: v.profile for v in variants}
    backends = [plugins.backend(profile, Timer(level=0)) for profile in by_name.values()]

    def probe() -> int | None:
        readings = [r for r in (b.device_memory() for b in backends) if r is not None]
        return sum(readings) if readings else None

    return probe


def _emit(args: argparse.Namespace, document: dict[str, Any], text: str) -> None:
    if args.json == "-":
        print(json.dumps(document, indent=2))
        return
    print(text)
    if args.json is not None:
        print(f"\nresults written to {args.json}")


def _run(
    args: argparse.Namespace, bench: Benchmark, variants: list[Variant], kind: str
) -> dict[str, Any]:
    """Run ``bench`` under ``variants`` with memory sampling; the results document."""
    _check_counts(args)
    check_output_file(args.memlog, "--memlog")
    json_out = None if args.json in (None, "-") else args.json
    check_output_file(json_out, "--json")
    refuse_outputs_over_inputs(
        [("--memlog", args.memlog), ("--json", json_out)],
        [getattr(args, "params", None), *(s for v in variants for s in v.profile.sources)],
    )
    plugins = load_plugins()
    steps = len(variants) * (1 + args.warmup + args.runs)
    progress = Progress(f"bench {bench.name}", steps, enabled=False if args.quiet else None)
    with MemoryLog(args.memlog, args.memlog_interval, _device_probe(plugins, variants)) as memlog:
        entries = run_variants(bench, variants, plugins, args.runs, args.warmup, progress)
    progress.close()
    document = build_result(
        kind,
        bench.name,
        bench.params(),
        entries,
        args.runs,
        args.warmup,
        environment.capture(),
        memlog.peaks(),
    )
    if kind == "ab":
        ratios = paired_ratios(entries[0].samples, entries[1].samples)
        document["ratios"] = {name: ratio.to_json() for name, ratio in ratios.items()}
    elif kind == "isolate":
        document["isolate"] = isolate_deltas(document["variants"])
    return document


def _run_and_report(args: argparse.Namespace, bench: Benchmark) -> int:
    """Plain or A/B (``--vs``) run of one benchmark, printed and optionally saved."""
    variants = [Variant("A", load_profile(args.profile))]
    if args.vs is not None:
        variants.append(Variant("B", load_profile(args.vs)))
    document = _run(args, bench, variants, "ab" if args.vs is not None else "bench")
    _save(args, document)
    _emit(args, document, format_result(document))
    return 0


def _save(args: argparse.Namespace, document: dict[str, Any]) -> None:
    if args.json is not None and args.json != "-":
        write_result(args.json, document)


def bench_msm(args: argparse.Namespace) -> int:
    """``cuzk bench msm``: one MSM, seeded inputs, checked once, timed by the backend's clock."""
    size = parse_size(args.size, power_of_two=False)
    msm = args.msm or ("h" if args.curve == "g1" else "b_g2")
    allowed = G1_MSMS if args.curve == "g1" else ("b_g2",)
    if msm not in allowed:
        raise BenchError(f"--msm {msm} is not a {args.curve} MSM (choose {', '.join(allowed)})")
    return _run_and_report(args, MsmBench(args.curve, size, msm, args.seed))


def bench_ntt(args: argparse.Namespace) -> int:
    """``cuzk bench ntt``: one (coset) NTT of a power-of-two size."""
    size = parse_size(args.size, power_of_two=True)
    return _run_and_report(args, NttBench(size, args.coset, args.seed))


def bench_poseidon(args: argparse.Namespace) -> int:
    """``cuzk bench poseidon``: many width-3 permutations in one hook call."""
    return _run_and_report(
        args, PoseidonBench(parse_size(args.size, power_of_two=False), args.seed)
    )


def bench_synth(args: argparse.Namespace) -> int:
    """``cuzk bench synth``: synthesis of an embedded circuit alone."""
    spec = commands.circuit_spec(args)
    commands.build_circuit(spec)  # a bad knob is an error now, not after the first profile
    bench = SynthBench(lambda: commands.build_circuit(spec), spec, gadgets=args.gadgets)
    return _run_and_report(args, bench)


def _prove_bench(args: argparse.Namespace) -> ProveBench:
    """Whole proofs of ``--params DIR``'s circuit, or of the circuit options (params cached)."""
    if args.params is not None:
        folder = Path(args.params)
        spec = commands.params_spec(args, folder)
        commands.build_circuit(spec)
    else:
        spec = commands.circuit_spec(args)
        circuit = commands.build_circuit(spec)
        folder = commands.cached_params(circuit, args)
        spec = {"circuit": circuit.name, **circuit.knobs()}
    key = ParamsFile(folder / params_dir.PARAMS_FILE)
    return ProveBench(lambda: commands.build_circuit(spec), key, spec, args.seed)


def bench_prove(args: argparse.Namespace) -> int:
    """``cuzk bench prove``: whole proofs with a per-phase breakdown."""
    return _run_and_report(args, _prove_bench(args))


def bench_isolate(args: argparse.Namespace) -> int:
    """``cuzk bench isolate``: per-phase deltas of each profile change, alone and together."""
    variants = isolate_variants(args.base, [parse_change(c) for c in args.change])
    args.profile = args.base  # cached parameters are made under the baseline profile
    document = _run(args, _prove_bench(args), variants, "isolate")
    _save(args, document)
    _emit(args, document, format_result(document))
    return 0


def bench_compare(args: argparse.Namespace) -> int:
    """``cuzk bench compare``: exit 1 when ``--fail-above`` finds a regression."""
    threshold = None if args.fail_above is None else parse_percent(args.fail_above)
    if not (math.isfinite(args.min_delta_ms) and args.min_delta_ms >= 0):
        raise BenchError(f"--min-delta-ms {args.min_delta_ms}: a number of milliseconds ≥ 0")
    if args.json is not None and args.json != "-":
        check_output_file(args.json, "--json")
        refuse_outputs_over_inputs([("--json", args.json)], [args.a, args.b])
    comparison = compare_results(
        read_result(args.a),
        read_result(args.b),
        args.a,
        args.b,
        threshold=threshold,
        phases=args.phase,
        force=args.force,
        min_delta_ms=args.min_delta_ms,
    )
    document = comparison.to_json()
    if args.json is not None and args.json != "-":
        write_json_atomic(args.json, document)
    _emit(args, document, format_comparison(comparison))
    return 1 if comparison.regressions else 0


# ---------------------------------------------------------------- cuzk trace show

MAX_WIDTH = 1000
"""The widest waterfall: its lines are this many columns a span."""


def add_trace_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``trace show``."""
    trace = sub.add_parser("trace", help="inspect span traces from `cuzk prove --trace`")
    actions = trace.add_subparsers(dest="trace_command", required=True, metavar="ACTION")
    show = actions.add_parser("show", help="draw a waterfall of the spans, with overlaps")
    show.add_argument("file", help="trace written by `cuzk prove --trace FILE`")
    show.add_argument("--all", action="store_true", help="finer spans too, under their phase")
    show.add_argument("--width", type=whole_number, default=60, help="bar columns (default 60)")
    show.add_argument("--png", metavar="OUT", help="also render a PNG (needs cuzk[plot])")
    show.set_defaults(handler=trace_show)


def trace_show(args: argparse.Namespace) -> int:
    """``cuzk trace show``: the waterfall as text, and as a PNG with ``--png``."""
    if not 10 <= args.width <= MAX_WIDTH:
        raise BenchError(f"--width {args.width}: 10 to {MAX_WIDTH} columns")
    check_output_file(args.png, "--png")
    trace = read_trace(args.file)
    spans = trace.spans
    print(waterfall(spans, args.width, args.all))
    if trace.memory is not None:
        print(f"\n{memory_line(trace.memory)}")
    if args.png is not None:
        render_png(spans, args.png, args.all, title=str(args.file))
        print(f"\nwaterfall drawn to {args.png}")
    return 0
