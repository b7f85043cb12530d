"""Poseidon parameters generated as the paper's reference script does, from the Grain LFSR.

Follows Grassi et al., "Poseidon: A New Hash Function for Zero-Knowledge Proof Systems", and its
reference implementation (hadeshash, ``generate_parameters_grain.sage``): an 80-bit Grain LFSR
seeded with the field type, S-box, field size n, width t, R_F and R_P, then thirty 1-bits;
160 clocks discarded; output bits filtered in pairs (a pair 1b yields b, a pair 0b yields
nothing); round constants are n-bit big-endian draws, redrawn while ≥ p; the MDS matrix is the
Cauchy matrix 1/(xᵢ + yⱼ) over 2t further draws (reduced mod p, all distinct), redrawn until it
passes the script's three security checks (:mod:`.mds_security`).
"""

from __future__ import annotations

import functools

import attrs

from cuzk_core.field.constants import FR_MODULUS

from .mds_security import is_secure_mds

SBOX_ALPHA = 5
"""The S-box is x ↦ x^5 (needs gcd(5, p − 1) = 1, true for BLS12-381 Fr)."""

_FIELD_PRIME = 1  # Grain seed field tag: 0 = GF(2^n), 1 = GF(p)
_SBOX_POWER = 0  # Grain seed S-box tag: 0 = x^alpha, 1 = x^(-1)


@attrs.frozen(cache_hash=True)
class PoseidonParams:
    """A Poseidon instance: width t, full and partial round counts, round constants and MDS."""

    t: int
    r_f: int
    r_p: int
    modulus: int
    round_constants: tuple[tuple[int, ...], ...]
    """One t-tuple per round, R_F + R_P rounds in order."""
    mds: tuple[tuple[int, ...], ...]
    """The t×t matrix M; the linear layer maps the state s to M·s."""

    def is_full_round(self, r: int) -> bool:
        """Whether round r applies the S-box to every lane (the first and last R_F/2 rounds)."""
        half = self.r_f // 2
        return r < half or r >= half + self.r_p


_GRAIN_BLOCK = 16
"""Clocks computed at once: the feedback's highest tap (62) leaves 80 − 62 = 18 bits a shift
can produce together; an even block keeps the output pairs aligned."""


def _filter_table() -> list[tuple[int, int]]:
    """Per byte of raw output (four pairs, first bit lowest): the bits the filter keeps (a pair
    1b yields b, 0b yields nothing), first kept bit most significant, and how many."""
    table = []
    for byte in range(256):
        value = count = 0
        for pair in range(4):
            if byte >> (2 * pair) & 1:
                value, count = value << 1 | (byte >> (2 * pair + 1) & 1), count + 1
        table.append((value, count))
    return table


class _Grain:
    """The reference script's Grain LFSR, as an 80-bit int (bit k is the script's list entry k),
    clocked 16 steps at a time with its filtered output bits queued."""

    __slots__ = ("_pending", "_pending_bits", "_state")

    _FILTER = _filter_table()

    def __init__(self, field: int, sbox: int, n: int, t: int, r_f: int, r_p: int) -> None:
        seed = f"{field:02b}{sbox:04b}{n:012b}{t:012b}{r_f:010b}{r_p:010b}" + "1" * 30
        self._state = int(seed[::-1], 2)
        self._pending = self._pending_bits = 0
        for _ in range(160 // _GRAIN_BLOCK):
            self._clock_block()

    def _clock_block(self) -> int:
        """The next 16 raw output bits, the first one lowest."""
        s = self._state
        block = (s >> 62 ^ s >> 51 ^ s >> 38 ^ s >> 23 ^ s >> 13 ^ s) & 0xFFFF
        self._state = s >> _GRAIN_BLOCK | block << (80 - _GRAIN_BLOCK)
        return block

    def bits(self, count: int) -> int:
        """The next ``count`` filtered output bits as an int, first bit most significant."""
        while self._pending_bits < count:
            block = self._clock_block()
            for byte in (block & 0xFF, block >> 8):
                value, kept = self._FILTER[byte]
                self._pending = self._pending << kept | value
                self._pending_bits += kept
        extra = self._pending_bits - count
        value = self._pending >> extra
        self._pending &= (1 << extra) - 1
        self._pending_bits = extra
        return value


def _cauchy_candidate(grain: _Grain, n: int, t: int, p: int) -> list[list[int]] | None:
    """One draw of the script's ``create_mds_p``: None when the draw must be repeated."""
    draws = [grain.bits(n) % p for _ in range(2 * t)]
    if len(set(draws)) != 2 * t:
        return None
    xs, ys = draws[:t], draws[t:]
    if any((x + y) % p == 0 for x in xs for y in ys):
        return None
    return [[pow(x + y, -1, p) for y in ys] for x in xs]


def poseidon_params(
    t: int = 3, r_f: int = 8, r_p: int = 57, modulus: int = FR_MODULUS
) -> PoseidonParams:
    """The Poseidon x^5 instance of width t over GF(modulus), generated once per argument set.

    The defaults are hadeshash's ``poseidonperm_x5_255_3`` over BLS12-381 Fr (128-bit security).
    Other widths need their own R_P (e.g. 60 for t = 5; see the paper's round-number script).
    """
    return _generate(t, r_f, r_p, modulus)


@functools.cache
def _generate(t: int, r_f: int, r_p: int, modulus: int) -> PoseidonParams:
    if not 2 <= t < 1 << 12:
        raise ValueError(f"t must be in 2..4095, got {t}")
    if not (2 <= r_f < 1 << 10 and r_f % 2 == 0):
        raise ValueError(f"r_f must be even and in 2..1022, got {r_f}")
    if not 0 <= r_p < 1 << 10:
        raise ValueError(f"r_p must be in 0..1023, got {r_p}")
    if modulus < 3 or (modulus - 1) % SBOX_ALPHA == 0:
        raise ValueError(f"x^{SBOX_ALPHA} is not a permutation of GF({modulus})")
    n = modulus.bit_length()
    grain = _Grain(_FIELD_PRIME, _SBOX_POWER, n, t, r_f, r_p)
    constants = []
    for _ in range((r_f + r_p) * t):
        value = grain.bits(n)
        while value >= modulus:
            value = grain.bits(n)
        constants.append(value)
    while True:
        mds = _cauchy_candidate(grain, n, t, modulus)
        if mds is not None and is_secure_mds(mds, modulus):
            break
    return PoseidonParams(
        t=t,
        r_f=r_f,
        r_p=r_p,
        modulus=modulus,
        round_constants=tuple(tuple(constants[i : i + t]) for i in range(0, len(constants), t)),
        mds=tuple(tuple(row) for row in mds),
    )
