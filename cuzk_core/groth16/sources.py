"""What :func:`~cuzk_core.groth16.prover.prove` proves and with which key.

A witness source gives the prover an :class:`Assignment` (constraint rows with Groth16's input
rows, the full witness, whether C rows exist); a key source gives the proving key and says how H
is computed for it. The prover does the bookkeeping between them, so callers only choose:
``prove(backend, NativeCircuit(circuit), ParamsFile(path))`` (the file-backed key sources, which
go through the key cache, live in :mod:`cuzk_core.groth16.key_sources`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import attrs
import numpy as np

from cuzk_core.groth16.keys import ProvingKey
from cuzk_core.groth16.qap import BELLPERSON, QuotientConvention, with_input_rows
from cuzk_core.r1cs import R1CSMatrices

if TYPE_CHECKING:
    from cuzk_core.backend import Backend


@attrs.frozen(eq=False)
class Assignment:
    """Constraint rows (Groth16's input rows included) and the witness ``z = [1, inputs…, aux…]``
    (a host array, or the backend's handle where it kept z: ``cuzk_witness``'s ``for_prover``).

    ``has_c=False``: the rows carry no C (a snarkjs zkey stores none); the prover then takes c
    as a ⊙ b, which a satisfying witness makes equal, and cannot check the witness.
    ``products``: A·z, B·z, C·z made (and the witness checked) already, by
    :func:`~cuzk_core.groth16.prover.evaluated` (the daemon does it in its synthesis stage):
    host arrays, or handles the backend kept on its device (``cuzk_evaluate_r1cs``'s
    ``for_quotient``).
    ``queries``: the witness entries a sparse (bellperson) key's A and B queries hold points
    for, gathered already by :func:`~cuzk_core.groth16.prover.with_queries` (the daemon's
    synthesis stage too); a dense key takes the whole witness and ignores them.
    """

    matrices: R1CSMatrices
    witness: np.ndarray | Any
    has_c: bool = True
    products: tuple[Any, Any, Any] | None = None
    queries: tuple[np.ndarray, np.ndarray] | None = None


class WitnessSource(Protocol):
    """Anything that can give the prover an assignment on a backend."""

    def assign(self, backend: Backend) -> Assignment:
        """The rows and witness to prove (runs inside the ``synthesis`` phase)."""
        ...


class KeySource(Protocol):
    """A proving key to load (inside the ``load_params`` phase) and its H convention."""

    @property
    def convention(self) -> QuotientConvention:
        """How H is computed for this key (the convention it was made for)."""
        ...

    def load(self, backend: Backend) -> ProvingKey:
        """The proving key, its buffers allocated as the backend's profile says."""
        ...


@attrs.frozen
class NativeCircuit:
    """A circuit written with the gadget DSL: through its compiled witness program (compiled
    once per shape, cached; :mod:`cuzk_core.witness.compiled`), or with ``compiled=False`` by
    the backend's synthesis hook running its gadgets every time."""

    circuit: Any
    compiled: bool = True

    def assign(self, backend: Backend) -> Assignment:
        """Synthesize on ``backend`` and add the input rows."""
        if self.compiled:
            from cuzk_core.witness.compiled import compiled_assignment

            return compiled_assignment(backend, self.circuit)
        synthesized = backend.synthesize(self.circuit)
        return Assignment(with_input_rows(synthesized.matrices), synthesized.witness)


@attrs.frozen(eq=False)
class R1CSWitness:
    """Constraint matrices without the input rows (a circom .r1cs) and a full witness."""

    matrices: R1CSMatrices
    witness: np.ndarray

    def assign(self, backend: Backend) -> Assignment:
        """The matrices with the input rows added."""
        return Assignment(with_input_rows(self.matrices), self.witness)


@attrs.frozen(eq=False)
class LoadedKey:
    """A proving key already in memory (made by setup in this process, or kept resident)."""

    key: ProvingKey
    convention: QuotientConvention = BELLPERSON

    def load(self, backend: Backend) -> ProvingKey:
        """The key itself."""
        return self.key
