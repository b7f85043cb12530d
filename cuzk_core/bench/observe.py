"""Observing a proof: ``cuzk prove --trace FILE`` and ``--memlog FILE``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from cuzk_core.backend import Backend
from cuzk_core.bench.memlog import DEFAULT_INTERVAL_S, MemoryLog
from cuzk_core.errors import OutputError
from cuzk_core.fileio import check_output_file


def check_observation_outputs(
    trace: str | Path | None,
    memlog: str | Path | None,
    others: Iterable[Path] = (),
) -> None:
    """Before the proof: ``--trace`` and ``--memlog`` can be written (see
    :func:`~cuzk_core.fileio.check_output_file`), are two files, and are none of the command's
    ``others`` outputs (one would overwrite the other)."""
    check_output_file(trace, "--trace")
    check_output_file(memlog, "--memlog")
    taken = {Path(p).absolute(): "the command's own output" for p in others}
    for path, option in ((trace, "--trace"), (memlog, "--memlog")):
        if path is None:
            continue
        where = Path(path).absolute()
        if where in taken:
            raise OutputError(f"{option} {path}: is {taken[where]} too; give another file")
        taken[where] = f"the {option} file"


@contextlib.contextmanager
def observe(
    backend: Backend,
    trace: str | Path | None = None,
    memlog: str | Path | None = None,
    memlog_interval_s: float = DEFAULT_INTERVAL_S,
) -> Iterator[dict[str, Any]]:
    """Sample memory and write the span trace around a proof; yields extra ``timings.json`` keys.

    The trace is written even when the proof fails or is interrupted, so it shows where the run
    was; the memory peaks (``"memory"``) land in the yielded dict when the block ends.
    """
    extra: dict[str, Any] = {}
    try:
        if memlog is None:
            yield extra
        else:
            with MemoryLog(memlog, memlog_interval_s, backend.device_memory) as log:
                yield extra
            extra["memory"] = log.peaks()
    finally:
        if trace is not None:
            backend.ctx.timer.write_trace(trace, extra.get("memory"))
