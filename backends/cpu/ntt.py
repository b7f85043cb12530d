"""Radix-2 NTT over Fr on plain Python ints: iterative Cooley–Tukey, natural order in and out."""

from __future__ import annotations

from cuzk_core.field.constants import FR_MODULUS

_R = FR_MODULUS


def bit_reverse_permute(values: list[int]) -> list[int]:
    """Reorder ``values`` (length 2^k) by bit-reversed index."""
    n = len(values)
    bits = n.bit_length() - 1
    return [values[int(f"{i:0{bits}b}"[::-1], 2) if bits else 0] for i in range(n)]


def ntt(values: list[int], omega: int) -> list[int]:
    """Evaluate the polynomial with coefficients ``values`` at the powers of ``omega``."""
    n = len(values)
    a = bit_reverse_permute(values)
    length = 2
    while length <= n:
        half = length >> 1
        w_len = pow(omega, n // length, _R)
        twiddles = [1] * half
        for j in range(1, half):
            twiddles[j] = twiddles[j - 1] * w_len % _R
        for start in range(0, n, length):
            for j in range(half):
                u = a[start + j]
                v = a[start + j + half] * twiddles[j] % _R
                a[start + j] = (u + v) % _R
                a[start + j + half] = (u - v) % _R
        length <<= 1
    return a


def intt(values: list[int], omega: int) -> list[int]:
    """Interpolate: the inverse of :func:`ntt` for the same ``omega``."""
    n = len(values)
    n_inv = pow(n, -1, _R)
    return [v * n_inv % _R for v in ntt(values, pow(omega, -1, _R))]


def scale_by_powers(values: list[int], shift: int) -> list[int]:
    """Multiply element i by ``shift^i``."""
    out = []
    power = 1
    for v in values:
        out.append(v * power % _R)
        power = power * shift % _R
    return out
