"""Scalar field Fr arithmetic on plain Python ints (canonical values in [0, r))."""

from __future__ import annotations

from .constants import FR_MODULUS, FR_TWO_ADICITY


def fr_inv(a: int) -> int:
    """Return a⁻¹ mod r; raise ZeroDivisionError for a ≡ 0."""
    a %= FR_MODULUS
    if a == 0:
        raise ZeroDivisionError("inverse of zero in Fr")
    return pow(a, -1, FR_MODULUS)


def fr_batch_inverse(values: list[int]) -> list[int]:
    """Invert every value with one field inversion (Montgomery's trick); zeros map to 0."""
    r = FR_MODULUS
    prefix = []
    acc = 1
    for v in values:
        prefix.append(acc)
        v %= r
        if v:
            acc = acc * v % r
    inv = pow(acc, -1, r)
    out = [0] * len(values)
    for i in range(len(values) - 1, -1, -1):
        v = values[i] % r
        if v:
            out[i] = inv * prefix[i] % r
            inv = inv * v % r
    return out


def fr_root_of_unity(log_n: int, generator: int = 7) -> int:
    """Return the primitive 2^log_n-th root of unity derived from `generator`.

    The root is g^((r−1)/2^32) squared 32 − log_n times, so roots for different sizes are
    consistent (ω_{2n}² = ω_n). bellperson uses g = 7, snarkjs g = 5; the results differ.
    """
    if not 0 <= log_n <= FR_TWO_ADICITY:
        raise ValueError(f"log_n must be in 0..{FR_TWO_ADICITY}, got {log_n}")
    r = FR_MODULUS
    root = pow(generator, (r - 1) >> FR_TWO_ADICITY, r)
    if pow(root, 1 << (FR_TWO_ADICITY - 1), r) != r - 1:
        raise ValueError(f"{generator} is not a quadratic non-residue mod r")
    for _ in range(FR_TWO_ADICITY - log_n):
        root = root * root % r
    return root
