"""Rank-1 constraint systems: variables, linear combinations, synthesis and CSR matrices."""

from .constraint_system import ConstraintSystem, LCLike
from .lc import ONE, LinearCombination, Variable, VariableKind
from .matrices import R1CSMatrices, SparseMatrix

__all__ = [
    "ONE",
    "ConstraintSystem",
    "LCLike",
    "LinearCombination",
    "R1CSMatrices",
    "SparseMatrix",
    "Variable",
    "VariableKind",
]
