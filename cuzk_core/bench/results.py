"""Results files: the JSON layout ``cuzk bench`` writes and ``compare`` reads, and its checks.

Layout (``"schema": "cuzk-bench/1"``)::

    kind         "bench" (one profile), "ab" (--vs: two, with "ratios"), "isolate" (with "isolate")
    created      UTC time, ISO 8601
    benchmark    {"name": "msm" | "ntt" | "synth" | "prove", "params": {...}}
    runs, warmup timed runs per profile and untimed ones before them
    environment  {"machine": {"cpu_model", "cpu_cores", "gpus"}, "libraries", "commit", ...}
    memory       peaks of host RSS and device memory over the whole run (see memlog)
    variants     [{"label", "profile": {"name", "digest", "settings", "changes"},
                   "backend": {"name", "version"}, "clock", "check",
                   "figures": {name: {"median_ms", "min_ms", "max_ms", "spread", "samples_ms"}}}]

Figures are the top-level spans of a run (the phases of a proof, ``msm_g1``, ``ntt`` …) and the
spans one level below as ``parent/child``; a proof adds ``total``.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cuzk_core.bench.errors import BenchError
from cuzk_core.bench.stats import FigureStats
from cuzk_core.errors import FormatError
from cuzk_core.fileio import MAX_JSON_DEPTH, json_depth, read_input, write_json_atomic

if TYPE_CHECKING:
    from cuzk_core.bench.runner import VariantRun

SCHEMA = "cuzk-bench/1"
KINDS = ("bench", "ab", "isolate")

_NUMBER = (int, float)
_LAYOUT: dict[str, Any] = {
    "schema": str,
    "kind": str,
    "created": str,
    "runs": int,
    "warmup": int,
    "benchmark": {"name": str, "params": dict},
    "environment": {"machine": {"cpu_model": str, "cpu_cores": int, "gpus": list}},
    "variants": [
        {
            "label": str,
            "profile": {"name": str, "digest": str},
            "backend": {"name": str},
            "clock": str,
            "figures": {"*": {"median_ms": _NUMBER, "samples_ms": [_NUMBER]}},
        }
    ],
}
"""Required keys and their types; extra keys are allowed. ``[x]``: a non-empty list of x."""


def build_result(
    kind: str,
    benchmark: str,
    params: dict[str, Any],
    variant_runs: list[VariantRun],
    runs: int,
    warmup: int,
    environment: dict[str, Any],
    memory: dict[str, Any] | None,
) -> dict[str, Any]:
    """A results document in the layout above."""
    return {
        "schema": SCHEMA,
        "kind": kind,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "benchmark": {"name": benchmark, "params": params},
        "runs": runs,
        "warmup": warmup,
        "environment": environment,
        "memory": memory,
        "variants": [run.to_json() for run in variant_runs],
    }


def variant_figures(variant: dict[str, Any]) -> dict[str, FigureStats]:
    """A variant record's figures, read back into statistics."""
    return {name: FigureStats.from_json(record) for name, record in variant["figures"].items()}


def _type_name(kind: Any) -> str:
    if isinstance(kind, dict):
        return "an object"
    if isinstance(kind, list):
        return "a non-empty list"
    names = {str: "a string", int: "an integer", dict: "an object", list: "a list"}
    return names.get(kind, "a number")


def _validate(value: Any, layout: Any, where: str, path: Path) -> None:
    if isinstance(layout, dict):
        if not isinstance(value, dict):
            raise BenchError(f"{path}: {where or 'the file'} must be {_type_name(layout)}")
        for key, sub in layout.items():
            if key == "*":
                for name, item in value.items():
                    _validate(item, sub, f"{where}.{name}", path)
            elif key not in value:
                raise BenchError(f"{path}: missing {where + '.' if where else ''}{key}")
            else:
                _validate(value[key], sub, f"{where}.{key}" if where else key, path)
    elif isinstance(layout, list):
        if not isinstance(value, list) or not value:
            raise BenchError(f"{path}: {where} must be {_type_name(layout)}")
        for index, item in enumerate(value):
            _validate(item, layout[0], f"{where}[{index}]", path)
    elif not isinstance(value, layout) or isinstance(value, bool):
        raise BenchError(f"{path}: {where} must be {_type_name(layout)}, got {value!r}")


def validate_result(document: Any, path: str | Path = "<result>") -> dict[str, Any]:
    """``document`` if it is a results document of this schema; else a BenchError naming the key."""
    path = Path(path)
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        found = document.get("schema") if isinstance(document, dict) else None
        raise BenchError(f"{path}: not a cuzk bench result (schema {found!r}, expected {SCHEMA!r})")
    _validate(document, _LAYOUT, "", path)
    if document["kind"] not in KINDS:
        raise BenchError(f"{path}: kind {document['kind']!r} is not one of {', '.join(KINDS)}")
    return document


MAX_RESULT_BYTES = 256 << 20
"""The largest results file read: far above any bench's (a few KB to a few MB of samples)."""


def read_result(path: str | Path) -> dict[str, Any]:
    """Read and check a results file; unreadable or malformed files are one-line errors."""
    try:
        text = read_input(path, MAX_RESULT_BYTES, "cuzk bench result").decode()
    except FormatError as exc:
        raise BenchError(str(exc)) from None
    except UnicodeDecodeError:
        raise BenchError(f"{path}: not a text file, so not a cuzk bench result") from None
    if json_depth(text.encode()) > MAX_JSON_DEPTH:  # before the parser recurses that deep
        raise BenchError(f"{path}: JSON nested too deep to be a cuzk bench result")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchError(f"{path}: not valid JSON: {exc}") from None
    return validate_result(document, path)


def write_result(path: str | Path, document: dict[str, Any]) -> None:
    """Write a results document atomically, after checking it against the layout."""
    write_json_atomic(path, validate_result(document, path))
