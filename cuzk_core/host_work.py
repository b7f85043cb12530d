"""Host work a proof does beside its backend's device work, in the prover's own thread.

A proof's blinding arithmetic is pure Python (scalar multiplications with ints). On a host
thread beside an accelerated backend it shares the GIL with that backend's launches: each time
the prover's thread comes back from a device wait it can sit out a whole switch interval (5 ms)
while the host thread computes, and at 2^20 that made ``ntt_h`` 3× its kernels. So the work is
queued here instead (:class:`HostWork`), and a backend that is about to wait for a long kernel
calls :func:`while_device_busy`: the queue runs, in order and a step at a time, in the
prover's thread while the device computes, instead of contending with that thread for the
GIL. What has not run when its result is asked for runs then (a CPU backend never waits for a
device, so there all of it runs on demand). A backend may queue its own host work there too
(:func:`current`): the GPU MSMs' combination of their window sums runs beside the next MSM's
device work instead of after its own.
"""

from __future__ import annotations

import collections
import contextlib
import threading
from collections.abc import Callable, Generator, Iterator
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Pending(Protocol[T_co]):
    """Work submitted to a :class:`Runner`: its result, waited for or computed on demand."""

    def result(self) -> T_co:
        """The work's result (its exception, if it raised)."""
        ...


class Runner(Protocol):
    """Where host work runs: a one-worker ``ThreadPoolExecutor``, :class:`Deferred` or
    :class:`HostWork`."""

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Pending[T]:
        """Start (or note) ``fn(*args)``."""
        ...


Steps = Generator[None, None, T]
"""Work done a step at a time: it yields between steps and returns its result."""


def drained(steps: Steps[T]) -> T:
    """The value stepwise work returns, all its steps done at once."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


class _Later(Generic[T]):
    """``fn(*args)``, computed once, by :meth:`step` or by the first :meth:`result`; a
    :data:`Steps` generator function one step per :meth:`step`. Threads that ask at once take
    turns (a proof's query scalars are asked for by B·G2's thread and the prover's)."""

    def __init__(self, fn: Callable[..., Any], args: tuple, stepwise: bool) -> None:
        self._lock = threading.Lock()
        self._work: tuple[Callable[..., Any], tuple] | None = (fn, args)
        self._stepwise = stepwise
        self._steps: Steps[T] | None = None
        self._done = False
        self._value: T
        self._error: BaseException | None = None

    def step(self) -> bool:
        """Do the next step (all the work, unless stepwise); whether the work is done. An
        exception is kept for :meth:`result`."""
        with self._lock:
            return self._step()

    def _step(self) -> bool:
        if self._done:
            return True
        try:
            if self._work is not None:
                fn, args = self._work
                self._work = None
                if not self._stepwise:
                    self._value = fn(*args)
                    self._done = True
                    return True
                self._steps = fn(*args)
            assert self._steps is not None
            next(self._steps)
            return False
        except StopIteration as end:
            self._value = end.value
        except Exception as exc:  # raised where the result is asked for, not in a backend
            self._error = exc
        except BaseException as exc:  # an interrupt: the work is broken, and says so later too
            self._error, self._done = exc, True
            raise
        self._done = True
        return True

    def result(self) -> T:
        while not self.step():
            pass
        if self._error is not None:
            raise self._error
        return self._value


class Deferred:
    """A :class:`Runner` that computes each piece of work when its result is first asked for,
    in the asking thread."""

    def submit(self, fn: Callable[..., T], /, *args: Any) -> Pending[T]:
        """Note ``fn(*args)`` for later."""
        return self._note(_Later(fn, args, stepwise=False))

    def submit_steps(self, fn: Callable[..., Steps[T]], /, *args: Any) -> Pending[T]:
        """Note ``fn(*args)``, a :data:`Steps` generator, for later."""
        return self._note(_Later(fn, args, stepwise=True))

    def _note(self, later: _Later[T]) -> _Later[T]:
        return later


class HostWork(Deferred):
    """A :class:`Runner` whose work also runs, in submission order and a step at a time,
    whenever a backend in this thread waits for its device (see :func:`while_device_busy`),
    once it is made current with :meth:`beside_device`."""

    def __init__(self) -> None:
        self._queue: collections.deque[_Later[Any]] = collections.deque()

    def _note(self, later: _Later[T]) -> _Later[T]:
        self._queue.append(later)
        return later

    @property
    def queued(self) -> int:
        """Pieces not yet finished by :meth:`run_while` (some may have run on demand)."""
        return len(self._queue)

    def run_while(self, busy: Callable[[], bool]) -> None:
        """Run queued work, one step at a time, while ``busy()`` says the device computes."""
        while self._queue and busy():
            if self._queue[0].step():
                self._queue.popleft()

    @contextlib.contextmanager
    def beside_device(self) -> Iterator[HostWork]:
        """Make this the calling thread's host work for the body."""
        before = getattr(_current, "work", None)
        _current.work = self
        try:
            yield self
        finally:
            _current.work = before


class Ready(Generic[T]):
    """A :class:`Pending` whose result is already known."""

    def __init__(self, value: T) -> None:
        self._value = value

    def result(self) -> T:
        """The value."""
        return self._value


_current = threading.local()


def current() -> HostWork | None:
    """The calling thread's current :class:`HostWork`, if any (a proof's, in its prover)."""
    return getattr(_current, "work", None)


def queued_here() -> bool:
    """Whether the calling thread has a current :class:`HostWork` with work queued."""
    work = current()
    return work is not None and work.queued > 0


def while_device_busy(busy: Callable[[], bool]) -> None:
    """For backends, after queueing a long kernel (an MSM's bucket sums, a quotient's
    transforms): run the calling thread's :class:`HostWork` while ``busy()`` is true. A step
    once started runs to its end (the proof's take 0.3–0.7 ms), so a backend calls this only
    where the device has a millisecond of work left or more."""
    work = current()
    if work is not None:
        work.run_while(busy)
