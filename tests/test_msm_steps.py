"""bench/msm_steps.py refuses a bad case in one line, before it asks for a GPU."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "msm_steps.py"


SHAPE = "expected GROUP:TABLE_BITS[:LOG], GROUP g1 or g2"
INTEGERS = "TABLE_BITS and LOG are integers"


@pytest.mark.parametrize(
    ("case", "says"),
    [("g3:20", SHAPE), ("g1", SHAPE), ("g1:x", INTEGERS), ("g2:20:big", INTEGERS)],
)
def test_a_bad_case_is_one_line_naming_it(case, says):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "g1:20", case], capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert done.stderr.strip() == f"case {case!r}: {says}"
    assert done.stdout == ""
