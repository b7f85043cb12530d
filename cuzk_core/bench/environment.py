"""The environment beside every figure: machine (CPU, GPUs, driver), libraries, commit, profile.

``machine`` holds what makes timings comparable (CPU model and cores, GPU models); results from
different machines are not compared without ``--force``.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any

from cuzk_core import __version__

LIBRARIES = ("numpy", "pluggy", "attrs", "cupy-cuda12x", "cupy-cuda13x", "cupy", "pycuda")
"""Distributions whose versions are recorded when installed."""
_REPO = Path(__file__).resolve().parents[2]
_COMMAND_TIMEOUT_S = 10


def _run(command: list[str]) -> str | None:
    """A command's stdout, or None when it is missing, fails or hangs."""
    if shutil.which(command[0]) is None:
        return None
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=_COMMAND_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what :mod:`platform` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def memory_bytes() -> int | None:
    """Total host memory, when the OS says."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def gpus() -> list[dict[str, Any]]:
    """Every NVIDIA GPU with its driver and memory, from ``nvidia-smi`` (empty without one)."""
    query = "name,driver_version,memory.total"
    out = _run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"])
    found = []
    for line in (out or "").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3:
            name, driver, mib = parts
            memory = int(mib) * 2**20 if mib.isdigit() else None
            found.append({"name": name, "driver": driver, "memory_bytes": memory})
    return found


def git_commit() -> dict[str, Any] | None:
    """The checkout's commit and whether tracked files differ from it; outside git (a tree
    copied to a GPU machine) the commit ``CUZK_COMMIT`` names, unchecked; else None."""
    head = _run(["git", "-C", str(_REPO), "rev-parse", "HEAD"])
    if head is None:
        named = os.environ.get("CUZK_COMMIT", "").strip()
        return {"id": named, "dirty": None, "from": "CUZK_COMMIT"} if named else None
    status = _run(["git", "-C", str(_REPO), "status", "--porcelain", "--untracked-files=no"])
    return {"id": head.strip(), "dirty": bool(status and status.strip())}


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages: a busy machine makes noisy figures."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def library_versions() -> dict[str, str]:
    """cuzk, Python and every installed library of :data:`LIBRARIES`, by name."""
    versions = {"cuzk": __version__, "python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def capture() -> dict[str, Any]:
    """Everything recorded beside a result except the profile (which is per variant)."""
    found = gpus()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "machine": {
            "cpu_model": cpu_model(),
            "cpu_cores": os.cpu_count(),
            "gpus": [g["name"] for g in found],
        },
        "cpu_cores_usable": usable,
        "load_average": load_average(),
        "memory_bytes": memory_bytes(),
        "gpus": found,
        "hostname": platform.node(),
        "os": platform.platform(),
        "libraries": library_versions(),
        "commit": git_commit(),
    }


def machine_difference(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """How two ``machine`` records differ, in words, or None when they are the same machine."""
    differences = [
        f"{key} {a.get(key)!r} vs {b.get(key)!r}"
        for key in sorted(set(a) | set(b))
        if a.get(key) != b.get(key)
    ]
    return "; ".join(differences) or None
