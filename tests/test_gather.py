"""gather_rows: the threaded row gather equals numpy's take, whatever the size."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from cuzk_core.gather import MIN_ROWS_PER_THREAD, gather_rows


@pytest.mark.parametrize("count", [0, 1, 7, MIN_ROWS_PER_THREAD - 1, 5 * MIN_ROWS_PER_THREAD + 3])
@pytest.mark.parametrize("shape", [(), (4,)])
def test_gather_rows_equals_take(count: int, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(count)
    values = rng.integers(0, 2**63, size=(1000, *shape), dtype=np.uint64)
    indices = rng.integers(0, len(values), size=count, dtype=np.int64)
    indices[: min(count, 2)] = [0, len(values) - 1][: min(count, 2)]  # both ends
    expected = np.take(values, indices, axis=0)
    got = gather_rows(values, indices)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.array_equal(got, expected)
    with ThreadPoolExecutor(3) as pool:
        assert np.array_equal(gather_rows(values, indices, pool), expected)


def test_gather_rows_of_no_values() -> None:
    values = np.zeros((0, 4), dtype=np.uint64)
    assert gather_rows(values, np.zeros(0, dtype=np.int64)).shape == (0, 4)
