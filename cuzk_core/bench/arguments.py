"""Bench arguments given as text: sizes (``2^20`` or ``1048576``), percentages, profile changes."""

from __future__ import annotations

import re
import sys
from typing import Any

from cuzk_core.bench.errors import BenchError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

_POWER = re.compile(r"^\s*2\s*(?:\^|\*\*)\s*(\d+)\s*$")
MAX_LOG_SIZE = 32


def parse_size(text: str, *, power_of_two: bool, option: str = "--size") -> int:
    """A positive size written ``2^k``, ``2**k`` or as digits; ``power_of_two`` insists on 2^k."""
    match = _POWER.match(text)
    if match:
        log_size = int(match.group(1))
        if log_size > MAX_LOG_SIZE:
            raise BenchError(f"{option} {text}: at most 2^{MAX_LOG_SIZE}")
        return 1 << log_size
    try:
        size = int(text.strip())
    except ValueError:
        raise BenchError(f"{option} {text!r}: not a size (write 2^20 or 1048576)") from None
    if size < 1:
        raise BenchError(f"{option} {text}: must be at least 1")
    if size > 1 << MAX_LOG_SIZE:
        raise BenchError(f"{option} {text}: at most 2^{MAX_LOG_SIZE}")
    if power_of_two and size & (size - 1):
        lower = 1 << (size.bit_length() - 1)
        raise BenchError(
            f"{option} {text} is not a power of two (nearest: 2^{lower.bit_length() - 1} = "
            f"{lower} or 2^{lower.bit_length()} = {2 * lower})"
        )
    return size


def format_size(size: int) -> str:
    """``2^k`` for powers of two, the digits otherwise (for tables and file names)."""
    return f"2^{size.bit_length() - 1}" if size & (size - 1) == 0 else str(size)


def parse_percent(text: str, option: str = "--fail-above") -> float:
    """``"5%"`` or ``"5"`` as the fraction 0.05; negative or non-numeric is an error."""
    number = text.strip().removesuffix("%").strip()
    try:
        value = float(number)
    except ValueError:
        raise BenchError(f"{option} {text!r}: not a percentage (write 5%)") from None
    if not value >= 0:
        raise BenchError(f"{option} {text}: must be zero or more")
    return value / 100.0


def parse_change(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with a dotted profile key and a TOML value; bare words are strings."""
    key, sep, raw = text.partition("=")
    key, raw = key.strip(), raw.strip()
    if not sep or not key or not raw:
        raise BenchError(f"--change {text!r}: write KEY=VALUE, e.g. msm.split_01=true")
    try:
        value = tomllib.loads(f"value = {raw}")["value"]
    except tomllib.TOMLDecodeError:
        value = raw  # memory.pinning=register: the shell ate the quotes
    return key, value
