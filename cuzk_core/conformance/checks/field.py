"""Checks of the hooks over Fr: synthesis, R1CS evaluation, the NTTs, the quotient step (and H
in one call), and the witness check.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterator

import numpy as np

from cuzk_core.conformance.inputs import (
    SCALAR_KINDS,
    R,
    random_r1cs,
    random_scalars,
)
from cuzk_core.conformance.oracles import (
    quotient_by_definition,
    r1cs_by_definition,
    transform_by_definition,
)
from cuzk_core.domain import BELLPERSON_GENERATOR, SNARKJS_GENERATOR, EvaluationDomain
from cuzk_core.layout import ints_to_limbs, limbs_to_ints
from cuzk_core.r1cs import R1CSMatrices

from .base import (
    NOT_IMPLEMENTED,
    Check,
    CheckFailed,
    Subject,
    expected,
    kind_of,
    same_scalars,
    short,
    unchanged,
)
from .circuits import TinyCircuit
from .msm import check_msm_scalars

# ---------------------------------------------------------------- synthesis


def same_matrices(got: R1CSMatrices, want: R1CSMatrices, what: str) -> None:
    for size in ("num_inputs", "num_aux", "num_constraints"):
        if getattr(got, size) != getattr(want, size):
            raise CheckFailed(f"{what}: {size} is {getattr(got, size)}, not {getattr(want, size)}")
    for name in ("a", "b", "c"):
        mine, theirs = getattr(got, name), getattr(want, name)
        for part in ("indptr", "cols", "coeffs"):
            if not np.array_equal(getattr(mine, part), getattr(theirs, part)):
                raise CheckFailed(f"{what}: matrix {name.upper()} differs in {part}")


def _synthesize(checked: Subject, rng: random.Random) -> None:
    backend = checked.backend()
    for x in (0, 1, R - 1, rng.randrange(R)):
        circuit = TinyCircuit(x, steps=5)
        got, want = backend.synthesize(circuit), checked.reference.synthesize(circuit)
        same_matrices(got.matrices, want.matrices, f"x={short(x)}")
        same_scalars(got.witness, want.witness, f"witness for x={short(x)}")
        z = limbs_to_ints(got.witness)
        a, b, c = r1cs_by_definition(got.matrices, z)
        for row, (ai, bi, ci) in enumerate(zip(a, b, c, strict=True)):
            if ai * bi % R != ci:
                raise CheckFailed(f"x={short(x)}: the witness breaks constraint {row}")


def check_evaluate_r1cs(checked: Subject, matrices: R1CSMatrices, witness: list[int]) -> None:
    """``A·z, B·z, C·z`` are the reference's (the definition's for the reference itself)."""
    z = ints_to_limbs(witness)
    copy = z.copy()
    got = checked.backend().evaluate_r1cs(matrices, z)
    want = expected(
        checked,
        lambda reference: reference.evaluate_r1cs(matrices, z),
        lambda: tuple(ints_to_limbs(v) for v in r1cs_by_definition(matrices, witness)),
    )
    if not isinstance(got, tuple) or len(got) != 3:
        raise CheckFailed(f"returned {kind_of(got)}, expected a tuple (a, b, c)")
    size = f"{matrices.num_constraints}×{matrices.a.num_cols}"
    for name, mine, theirs in zip("abc", got, want, strict=True):
        same_scalars(mine, theirs, f"{size}, {name}")
    unchanged([z], [copy], "evaluate_r1cs")


def _evaluate_r1cs(kind: str, checked: Subject, rng: random.Random) -> None:
    for rows, cols in ((1, 2), (16, 9), (64, 40)):
        witness = [1, *SCALAR_KINDS[kind](rng, cols - 1)]
        check_evaluate_r1cs(checked, random_r1cs(rng, rows, cols), witness)


# ---------------------------------------------------------------- NTT and the quotient step

NTT_HOOKS = ("cuzk_ntt", "cuzk_intt", "cuzk_coset_ntt", "cuzk_coset_intt")
NTT_KINDS = ("random", "zeros", "ones", "r-1", "one-hot")


def check_transform(
    checked: Subject,
    method: str,
    values: list[int],
    domain: EvaluationDomain,
    shift: int | None = None,
    rows: list[int] | None = None,
) -> None:
    """NTT ``method`` is the reference's (the definition's at ``rows`` for the reference itself)."""
    limbs = ints_to_limbs(values)
    copy = limbs.copy()
    args = (limbs, domain) if shift is None else (limbs, domain, shift)
    got = getattr(checked.backend(), method)(*args)
    what = f"{method} n={domain.size}, generator {domain.generator}"
    what += f", shift {short(shift)}" if shift is not None else ""
    if checked.is_reference:
        rows = list(range(domain.size)) if rows is None else rows
        want = ints_to_limbs(transform_by_definition(method, values, domain, shift, rows))
        same_scalars(got[rows] if isinstance(got, np.ndarray) else got, want, what)
    else:
        same_scalars(got, getattr(checked.reference, method)(*args), what)
    if np.shares_memory(got, limbs):
        raise CheckFailed(f"{what}: returned a view of its input, not a new array")
    unchanged([limbs], [copy], method)


def _ntt(hook: str, kind: str, checked: Subject, rng: random.Random) -> None:
    method = hook.removeprefix("cuzk_")
    for log_n in (0, 1, 2, 3, 6):
        for generator in (BELLPERSON_GENERATOR, SNARKJS_GENERATOR):
            domain = EvaluationDomain(log_n, generator)
            values = SCALAR_KINDS[kind](rng, domain.size)
            shifts: tuple[int | None, ...] = (None,)
            if "coset" in hook:  # bellperson's 7, snarkjs's ω_2n, anything else
                omega_2n = EvaluationDomain(log_n + 1, generator).omega
                shifts = (7, omega_2n, rng.randrange(1, R))
            for shift in shifts:
                check_transform(checked, method, values, domain, shift)


def check_quotient(checked: Subject, a: list[int], b: list[int], c: list[int], scale: int) -> None:
    """``(a·b − c)·scale`` is the reference's (the definition's for the reference itself)."""
    a_limbs, b_limbs, c_limbs = limbs = [ints_to_limbs(v) for v in (a, b, c)]
    copies = [v.copy() for v in limbs]
    got = checked.backend().quotient_pointwise(a_limbs, b_limbs, c_limbs, scale)
    want = expected(
        checked,
        lambda reference: reference.quotient_pointwise(a_limbs, b_limbs, c_limbs, scale),
        lambda: ints_to_limbs(quotient_by_definition(a, b, c, scale)),
    )
    same_scalars(got, want, f"n={len(a)}, scale {short(scale)}")
    unchanged(limbs, copies, "quotient_pointwise")


def _quotient(kind: str, checked: Subject, rng: random.Random) -> None:
    for n in (1, 3, 64):
        a, b = SCALAR_KINDS[kind](rng, n), random_scalars(rng, n)
        c = SCALAR_KINDS["mixed"](rng, n)
        for scale in (0, 1, R - 1, rng.randrange(R)):
            check_quotient(checked, a, b, c, scale)


def _quotient_on_coset(coefficients: bool, checked: Subject, rng: random.Random) -> str | None:
    """H in one call equals the reference's composition of the transforms, for short and full
    rows, both root conventions and their cosets; asked for an MSM's scalars, the result (a
    host array or the backend's handle) holds the same values."""
    backend = checked.backend()
    if not backend.implements("cuzk_quotient_on_coset"):
        return NOT_IMPLEMENTED
    for log_n in (1, 2, 6):
        for generator in (BELLPERSON_GENERATOR, SNARKJS_GENERATOR):
            domain = EvaluationDomain(log_n, generator)
            omega_2n = EvaluationDomain(log_n + 1, generator).omega
            for rows in sorted({1, domain.size - 1, domain.size}):
                a, b, c = (
                    ints_to_limbs(SCALAR_KINDS[kind](rng, rows))
                    for kind in ("mixed", "random", "r-1")
                )
                copies = [v.copy() for v in (a, b, c)]
                for shift in (generator, omega_2n):
                    scale = rng.choice([1, rng.randrange(R)])
                    got = backend.quotient_on_coset(a, b, c, domain, shift, scale, coefficients)
                    want = checked.reference.quotient_on_coset(
                        a, b, c, domain, shift, scale, coefficients
                    )
                    what = f"2^{log_n} (generator {generator}), {rows} rows, shift {short(shift)}"
                    same_scalars(got, want, what)
                    handle = backend.quotient_on_coset(
                        a, b, c, domain, shift, scale, coefficients, for_msm=True
                    )
                    check_msm_scalars(checked, backend, handle, want, f"{what}, for an MSM")
                unchanged([a, b, c], copies, "quotient_on_coset")
    return None


FIRST_UNSATISFIED_CASES: dict[str, Callable[[random.Random, int], list[int]]] = {
    "all-hold": lambda rng, n: [],
    "first-row": lambda rng, n: [0],
    "last-row": lambda rng, n: [n - 1],
    "one-random-row": lambda rng, n: [rng.randrange(n)],
    "many-rows": lambda rng, n: rng.sample(range(n), max(1, n // 3)),
}
"""Which rows of a satisfied ``(a, b, c)`` a witness-check case breaks."""


def _first_unsatisfied(case: str, checked: Subject, rng: random.Random) -> str | None:
    """The backend's witness check names the first row with a·b ≠ c, or none."""
    backend = checked.backend()
    if not backend.implements("cuzk_first_unsatisfied"):
        return NOT_IMPLEMENTED
    for n in (1, 3, 64, 1000):
        a, b = SCALAR_KINDS["mixed"](rng, n), random_scalars(rng, n)
        c = [x * y % R for x, y in zip(a, b, strict=True)]
        broken = FIRST_UNSATISFIED_CASES[case](rng, n)
        for row in broken:
            c[row] = (c[row] + rng.randrange(1, R)) % R
        limbs = [ints_to_limbs(v) for v in (a, b, c)]
        copies = [v.copy() for v in limbs]
        got = backend.first_unsatisfied(*limbs)
        want = min(broken) if broken else None
        if got != want:
            raise CheckFailed(f"n={n}, rows {sorted(broken)[:4]} broken: got {got}, want {want}")
        unchanged(limbs, copies, "first_unsatisfied")
    return None


def checks() -> Iterator[Check]:
    """Synthesis, R1CS evaluation, the NTTs, the quotient step and the witness check."""
    partial = functools.partial
    yield Check("cuzk_synthesize", "tiny-circuit", _synthesize)
    for kind in ("random", "ones", "r-1", "bits", "mixed"):
        yield Check("cuzk_evaluate_r1cs", f"witness={kind}", partial(_evaluate_r1cs, kind))
    for hook in NTT_HOOKS:
        for kind in NTT_KINDS:
            yield Check(hook, kind, partial(_ntt, hook, kind))
    for kind in ("random", "zeros", "ones", "r-1", "mixed"):
        yield Check("cuzk_quotient_pointwise", kind, partial(_quotient, kind))
    for case in FIRST_UNSATISFIED_CASES:
        yield Check("cuzk_first_unsatisfied", case, partial(_first_unsatisfied, case))
    for coefficients in (True, False):
        case = "coefficients" if coefficients else "evaluations"
        yield Check("cuzk_quotient_on_coset", case, partial(_quotient_on_coset, coefficients))
