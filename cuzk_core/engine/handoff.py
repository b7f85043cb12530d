"""The bounded queue between the engine's two stages: synthesized jobs on their way to the
prover, with room for at most ``depth`` jobs from the start of their synthesis to the end of
their proof, so that synthesized witnesses (large at scale) never pile up ahead of the backend.

Stage 1 reserves a place before it synthesizes (it blocks while the queue is full), then puts
the job or, when the job ended in stage 1, gives the place back; stage 2 gets jobs in order and
frees each one's place when done with it.
"""

from __future__ import annotations

import collections
import threading
from typing import Generic, TypeVar

Item = TypeVar("Item")

PIPELINE_DEPTH = 2
"""Places with pipelining on: the job in stage 2 and the next one, synthesized beside it."""
SEQUENTIAL_DEPTH = 1
"""Places with pipelining off: a job is synthesized only once the one before has finished."""


class Handoff(Generic[Item]):
    """A FIFO of at most ``depth`` jobs, each counted from :meth:`reserve` to :meth:`done`
    (or :meth:`release`); :meth:`close` ends it once what was put has been taken."""

    def __init__(self, depth: int) -> None:
        if depth < 1:
            raise ValueError(f"a handoff needs at least one place, not {depth}")
        self.depth = depth
        self._items: collections.deque[Item] = collections.deque()
        self._taken = 0
        self._closed = False
        self._changed = threading.Condition()

    def __len__(self) -> int:
        """Places in use: jobs being synthesized, waiting for stage 2, or in stage 2."""
        with self._changed:
            return self._taken

    def reserve(self) -> bool:
        """Block until a place is free and take it; False (nothing taken) once closed."""
        with self._changed:
            while self._taken >= self.depth and not self._closed:
                self._changed.wait()
            if self._closed:
                return False
            self._taken += 1
            return True

    def release(self) -> None:
        """Give back a reserved place whose job was never put (it ended in stage 1)."""
        self._free()

    def put(self, item: Item) -> None:
        """Hand a job to stage 2 in the place reserved for it."""
        with self._changed:
            self._items.append(item)
            self._changed.notify_all()

    def get(self) -> Item | None:
        """The next job for stage 2, blocking until there is one; None once closed and empty."""
        with self._changed:
            while not self._items and not self._closed:
                self._changed.wait()
            return self._items.popleft() if self._items else None

    def done(self) -> None:
        """Stage 2 has finished a job: its place is free."""
        self._free()

    def close(self) -> None:
        """No more reservations; :meth:`get` drains what was put, then returns None."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def _free(self) -> None:
        with self._changed:
            if self._taken == 0:
                raise RuntimeError("a handoff place freed that was never reserved")
            self._taken -= 1
            self._changed.notify_all()
