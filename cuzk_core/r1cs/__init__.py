"""Rank-1 constraint systems: variables, linear combinations, synthesis and CSR matrices."""

from .constraint_system import ConstraintSystem, LCLike
from .gadget import gadget
from .lc import ONE, LinearCombination, Variable, VariableKind
from .matrices import ConstraintNames, R1CSMatrices, SparseMatrix

__all__ = [
    "ONE",
    "ConstraintNames",
    "ConstraintSystem",
    "LCLike",
    "LinearCombination",
    "R1CSMatrices",
    "SparseMatrix",
    "Variable",
    "VariableKind",
    "gadget",
]
