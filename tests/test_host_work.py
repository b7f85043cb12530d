"""Host work beside a device: queued in order, run while a backend says its device is busy,
and on demand for whatever is left."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import py_ecc_oracle
import pytest

from cuzk_core.curve.g1 import G1_GENERATOR, G1_OPS, g1_from_affine, g1_to_affine
from cuzk_core.field.constants import FR_MODULUS as R
from cuzk_core.host_work import Deferred, HostWork, while_device_busy


def _recorder():
    ran: list[str] = []

    def piece(name: str) -> str:
        ran.append(name)
        return name.upper()

    return ran, piece


def test_queued_work_runs_in_order_while_busy_then_on_demand():
    ran, piece = _recorder()
    work = HostWork()
    first, second, third = (work.submit(piece, name) for name in ("a", "b", "c"))
    answers = iter([True, False])
    work.run_while(lambda: next(answers))  # busy for one piece only
    assert ran == ["a"] and work.queued == 2
    assert third.result() == "C" and ran == ["a", "c"]  # asked for: runs now, out of turn
    work.run_while(lambda: True)
    assert ran == ["a", "c", "b"] and work.queued == 0  # c is not run twice
    assert (first.result(), second.result()) == ("A", "B")


def test_a_piece_asked_for_runs_the_unrun_pieces_it_needs_once():
    ran, piece = _recorder()
    work = HostWork()
    first = work.submit(piece, "first")
    second = work.submit(lambda: first.result() + "!")
    assert second.result() == "FIRST!" and ran == ["first"]  # on demand, before any wait
    work.run_while(lambda: True)
    assert ran == ["first"] and work.queued == 0  # neither runs again


def test_an_error_in_a_piece_reaches_whoever_asks_for_its_result():
    work = HostWork()
    failing = work.submit(lambda: 1 // 0)

    def fails_later():
        yield
        raise KeyError("step two")

    failing_later = work.submit_steps(fails_later)
    after = work.submit(lambda: 7)
    work.run_while(lambda: True)  # a backend's wait never sees the errors
    assert after.result() == 7
    with pytest.raises(ZeroDivisionError):
        failing.result()
    with pytest.raises(KeyError, match="step two"):
        failing_later.result()


def test_an_interrupted_piece_says_so_again_when_asked_for():
    def interrupted():
        yield
        raise KeyboardInterrupt

    work = HostWork()
    piece = work.submit_steps(interrupted)
    with pytest.raises(KeyboardInterrupt):
        work.run_while(lambda: True)  # an interrupt is not held back
    with pytest.raises(KeyboardInterrupt):
        piece.result()


def test_a_backend_runs_only_its_own_threads_current_work():
    ran, piece = _recorder()
    work, other = HostWork(), HostWork()
    work.submit(piece, "mine")
    other.submit(piece, "other")
    while_device_busy(lambda: True)  # no current work in this thread: nothing runs
    assert ran == []
    with work.beside_device():
        with other.beside_device():
            thread = threading.Thread(target=while_device_busy, args=(lambda: True,))
            thread.start()
            thread.join()
            assert ran == []  # another thread has no current work
            while_device_busy(lambda: True)
            assert ran == ["other"]
        while_device_busy(lambda: True)  # the outer work is current again
        assert ran == ["other", "mine"]


def test_deferred_work_runs_only_when_asked_for():
    ran, piece = _recorder()
    later = Deferred().submit(piece, "x")
    assert ran == []
    assert later.result() == "X" and later.result() == "X" and ran == ["x"]


def test_deferred_work_asked_for_by_two_threads_at_once_runs_once():
    """A proof's query scalars: B·G2's thread and the prover's may ask at the same moment."""
    calls: list[str] = []
    started = threading.Event()

    def slow(word: str) -> str:
        calls.append(word)
        started.set()
        time.sleep(0.05)  # the other thread asks meanwhile
        return word.upper()

    later = Deferred().submit(slow, "x")
    with ThreadPoolExecutor(1) as pool:
        other = pool.submit(later.result)
        started.wait(5)
        assert later.result() == "X"
        assert other.result() == "X"
    assert calls == ["x"]


def test_stepwise_work_runs_a_step_per_busy_check_and_returns_its_value():
    ran: list[int] = []

    def counting(n: int):
        for i in range(n):
            ran.append(i)
            yield
        return n * 10

    work = HostWork()
    piece = work.submit_steps(counting, 3)
    after = work.submit(lambda: "next")
    answers = iter([True, True, False])
    work.run_while(lambda: next(answers))
    assert ran == [0, 1] and work.queued == 2  # two steps, then the device was done
    assert piece.result() == 30 and ran == [0, 1, 2]  # the rest on demand
    work.run_while(lambda: True)
    assert work.queued == 0 and after.result() == "next"


def test_a_scalar_multiplication_in_steps_agrees_with_py_ecc():
    point = g1_from_affine(G1_GENERATOR)
    for k in (0, 1, 2, 3, R - 1, R + 5, (1 << 255) - 19):
        work, busy_checks = HostWork(), []
        piece = work.submit_steps(G1_OPS.mul_steps, point, k)
        work.run_while(lambda checks=busy_checks: checks.append(1) or True)
        assert len(busy_checks) > (1 if k.bit_length() > G1_OPS.step_ops else 0)
        expected = py_ecc_oracle.multiply(py_ecc_oracle.to_py_g1(G1_GENERATOR), k)
        assert g1_to_affine(piece.result()) == py_ecc_oracle.from_py_g1(expected), k
