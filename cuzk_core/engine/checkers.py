"""Verifying zkey jobs' proofs in worker processes, beside the prover.

A zkey has no C rows, so a zkey job's witness is checked by verifying its proof: a pairing
check in Python, ~30 ms that holds the GIL. In spawned worker processes it runs beside stage 2
and checks run beside each other. A worker ignores SIGINT (a Ctrl-C to the daemon's process
group is the daemon's to handle) and exits once the daemon is gone (a ``kill -9`` leaves no
orphans). A worker that dies breaks its pool: a new pool replaces it and the check that saw it
runs in the calling thread; when no pool can be started, every check runs there.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from cuzk_core.groth16.verifier import check_own_proof

PARENT_POLL_S = 1.0
"""How often a worker looks whether the daemon that started it is still there."""
START_TIMEOUT_S = 60.0
"""How long the workers wait for each other to start."""


class ProofCheckers:
    """``workers`` processes running :func:`check_own_proof`; ``log`` takes a line about a
    pool that broke or could not start."""

    def __init__(self, workers: int, log: Callable[[str], None]) -> None:
        self._workers = workers
        self._log = log
        self._lock = threading.Lock()
        self._pool = self._start()

    def check(self, *args: Any) -> None:
        """``check_own_proof(*args)``, in a worker when there is a pool."""
        pool = self._pool
        if pool is not None:
            try:
                pool.submit(check_own_proof, *args).result()
                return
            except BrokenProcessPool:
                self._replace(pool)
        check_own_proof(*args)

    def close(self) -> None:
        """Stop the workers (after the checks they have)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown()

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is not broken:  # another check replaced it already
                return
            self._log("a proof checker process died; starting new ones")
            broken.shutdown(wait=False, cancel_futures=True)
            self._pool = self._start()

    def _start(self) -> ProcessPoolExecutor | None:
        """A pool whose workers have started and imported the verifier (not in the first job),
        or None when it cannot start."""
        # spawned, not forked: the daemon may hold a GPU context
        context = multiprocessing.get_context("spawn")
        started = context.Barrier(self._workers, timeout=START_TIMEOUT_S)
        pool = ProcessPoolExecutor(
            self._workers,
            mp_context=context,
            initializer=_worker_start,
            initargs=(os.getpid(), started),
        )
        try:
            for ready in [pool.submit(_ready) for _ in range(self._workers)]:
                ready.result()
        except (OSError, BrokenProcessPool, threading.BrokenBarrierError) as exc:
            pool.shutdown(wait=False, cancel_futures=True)
            self._log(f"no proof checker processes ({exc}); proofs are checked on its threads")
            return None
        return pool


def _worker_start(daemon: int, started: Any) -> None:
    """A worker's first steps; it takes tasks once every worker has ignored SIGINT, so a pool
    that reports ready has no worker a Ctrl-C would stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with, args=(daemon,), daemon=True).start()
    started.wait()


def _exit_with(daemon: int) -> None:
    while os.getppid() == daemon:
        time.sleep(PARENT_POLL_S)
    os._exit(0)


def _ready() -> None:
    """A worker's first task: it has started and imported this module."""
