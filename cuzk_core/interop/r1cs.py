"""Reading circom constraint systems (.r1cs, version 1) into cuzk's CSR matrices.

Section 1 (header): field size n8 (u32), the prime (n8 bytes LE), nWires, nPubOut, nPubIn, nPrvIn
(u32), nLabels (u64), nConstraints (u32). Section 2: per constraint the linear combinations A, B
and C, each a term count (u32) then per term a wire (u32) and a coefficient (n8 bytes LE, plain).
Section 3 maps wires to labels (unused here). Wires are ordered 1, outputs, public inputs, private
inputs, internal signals, which is exactly cuzk's ``z = [1, inputs…, aux…]`` with the outputs and
public inputs as the inputs. circom keeps linear constraints as rows whose A and B are empty.
"""

from __future__ import annotations

from array import array
from pathlib import Path

import attrs
import numpy as np

from cuzk_core.cache import R1CS_ROWS, cache_dir, path_tag
from cuzk_core.errors import FormatError, OutputError
from cuzk_core.field.constants import FR_BYTES, FR_MODULUS
from cuzk_core.fileio import atomic_output
from cuzk_core.interop.container import Container, SectionReader
from cuzk_core.interop.fields import describe_prime
from cuzk_core.interop.montgomery import FR
from cuzk_core.interop.sparse import csr_from_triples
from cuzk_core.r1cs import R1CSMatrices

R1CS_MAGIC = b"r1cs"
R1CS_MAX_VERSION = 1
_CUSTOM_GATE_SECTIONS = (4, 5)
_TERM_WORDS = (4 + FR_BYTES) // 4
"""A term's 32-bit words: its wire, then its coefficient."""


@attrs.frozen(eq=False)
class CircomR1CS:
    """A circom circuit: its header counts and its matrices over ``z = [1, public…, private…]``."""

    path: Path
    num_wires: int
    num_outputs: int
    num_public_inputs: int
    num_private_inputs: int
    num_labels: int
    matrices: R1CSMatrices

    @property
    def num_public(self) -> int:
        """Public signals (outputs and public inputs), not counting the constant 1."""
        return self.num_outputs + self.num_public_inputs

    @property
    def num_constraints(self) -> int:
        """Constraints in the file (before Groth16's input rows)."""
        return self.matrices.num_constraints


def _term_words(
    reader: SectionReader, num_constraints: int, path: Path
) -> tuple[np.ndarray, np.ndarray]:
    """Each term's first 32-bit word (its wire; the coefficient's eight follow) and the
    matrix-row it is in. Every field is a whole number of words, so only the rows' starts take
    a walk (one Python step a row: ~10 s at 2^24 constraints); the starts found last time for
    this file are tried first, and kept when array operations show they are this file's."""
    size = reader.remaining
    if size % 4:
        raise reader.error(f"{size} bytes, not a whole number of 32-bit words")
    words = np.frombuffer(np.ascontiguousarray(reader.data), dtype="<u4")
    remembered = _remembered_rows(path)
    if remembered is not None and _rows_fit(words, remembered, 3 * num_constraints):
        rows_at = remembered
    else:
        rows_at = _walk_rows(reader, words, num_constraints)
        _remember_rows(path, rows_at)
    counts = words[rows_at].astype(np.int64)
    lc_of_term = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    first_term = np.cumsum(counts) - counts
    position = np.arange(len(lc_of_term), dtype=np.int64) - first_term[lc_of_term]
    return rows_at[lc_of_term] + 1 + _TERM_WORDS * position, lc_of_term


def _walk_rows(reader: SectionReader, words: np.ndarray, num_constraints: int) -> np.ndarray:
    """The word of each row's term count, by walking the rows (the file's rows are sequential:
    one Python step a row, not a term)."""
    view = words.data.cast("B").cast("I")
    count_at = array("q")
    at, end = 0, len(words)
    for index in range(3 * num_constraints):
        if at >= end:
            constraint, part = divmod(index, 3)
            raise reader.error(f"truncated in constraint {constraint} ({'ABC'[part]})")
        count_at.append(at)
        count = view[at]
        at += 1 + _TERM_WORDS * count
        if at > end:
            constraint, part = divmod(index, 3)
            raise reader.error(
                f"truncated in constraint {constraint} ({'ABC'[part]}): its {count} terms run "
                f"past the section's end ({4 * end} bytes)"
            )
    if at != end:
        raise reader.error(f"{4 * (end - at)} unexpected bytes after the last constraint")
    return np.frombuffer(count_at, dtype=np.int64)


def _rows_fit(words: np.ndarray, rows_at: np.ndarray, rows: int) -> bool:
    """Whether ``rows_at`` are exactly the walk's row starts over ``words``: the first at 0,
    each next one right after the terms its count announces, the last ending the section."""
    if len(rows_at) != rows or (rows and rows_at[0] != 0) or (not rows and len(words)):
        return False
    if not rows:
        return True
    if rows_at[-1] >= len(words) or np.any(np.diff(rows_at) <= 0):
        return False
    after = rows_at + 1 + _TERM_WORDS * words[rows_at].astype(np.int64)
    return bool(np.array_equal(after[:-1], rows_at[1:]) and after[-1] == len(words))


def _rows_file(path: Path) -> Path:
    return cache_dir() / R1CS_ROWS / f"{path.name}-{path_tag(path)}.npy"


def _remembered_rows(path: Path) -> np.ndarray | None:
    """The row starts last found for the file at ``path`` (kept as uint32 words), if any."""
    try:
        rows = np.load(_rows_file(path), allow_pickle=False)
    except (OSError, ValueError):
        return None
    return rows.astype(np.int64) if rows.dtype == np.uint32 and rows.ndim == 1 else None


def _remember_rows(path: Path, rows_at: np.ndarray) -> None:
    """Keep the row starts for the next read of ``path`` (4 bytes a row); a cache that cannot
    be written costs only the next walk."""
    if len(rows_at) and rows_at[-1] >= 1 << 32:
        return  # beyond uint32 words (a 16 GiB section): walked every time
    target = _rows_file(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(target) as f:
            np.save(f, rows_at.astype(np.uint32), allow_pickle=False)
    except (OSError, OutputError):
        pass


_WIRE_LABELS = 3
"""The section mapping each wire to its label (u64 each)."""


def read_r1cs(path: str | Path) -> CircomR1CS:
    """Read and check a .r1cs file for bls12381: field, wire indices and coefficient range."""
    container = Container(path, R1CS_MAGIC, R1CS_MAX_VERSION, ".r1cs")
    header = container.reader(1, "header")
    n8 = header.u32("the field size")
    prime = header.integer(n8, "the prime")
    if n8 != FR_BYTES or prime != FR_MODULUS:
        raise header.error(
            f"a circuit over {describe_prime(prime)}; cuzk proves Groth16 over bls12381 "
            "(compile with `circom --prime bls12381`)"
        )
    num_wires = header.u32("nWires")
    num_outputs = header.u32("nPubOut")
    num_public_inputs = header.u32("nPubIn")
    num_private_inputs = header.u32("nPrvIn")
    num_labels = header.u64("nLabels")
    num_constraints = header.u32("nConstraints")
    header.finish()
    num_inputs = 1 + num_outputs + num_public_inputs
    # nPrvIn counts the private inputs declared; circom's optimizer drops the unused ones from
    # the wires (it says "private inputs: 3 (2 belong to witness)"), so only these must fit.
    if num_inputs > num_wires:
        raise header.error(
            f"{num_wires} wires cannot hold 1 + {num_outputs} outputs + {num_public_inputs} "
            "public inputs"
        )
    if container.has(_WIRE_LABELS):  # circom writes it, 8 bytes a wire: what backs nWires
        labels = container.reader(_WIRE_LABELS, "wire labels")
        if labels.remaining != num_wires * 8:
            raise labels.error(
                f"holds {labels.remaining} bytes; nWires {num_wires} needs {num_wires * 8}"
            )
    for section_id in _CUSTOM_GATE_SECTIONS:
        if container.has(section_id):
            raise FormatError(
                f"{container.path}: uses custom gates (section {section_id}), a PLONK feature; "
                "Groth16 cannot prove it"
            )

    reader = container.reader(2, "constraints")
    term_at, lc_of_term = _term_words(reader, num_constraints, container.path)
    words = reader.data.view("<u4")
    wires = words[term_at].astype(np.int64)
    # The coefficient's eight words one at a time: an index of all 36 bytes a term was 288
    # bytes a term (a 2^20-constraint file read in 1.56 GB).
    coeff_words = np.empty((len(term_at), _TERM_WORDS - 1), dtype="<u4")
    for k in range(_TERM_WORDS - 1):
        coeff_words[:, k] = words[term_at + 1 + k]
    coeffs = coeff_words.view("<u8").astype(np.uint64)
    del coeff_words
    bad_wire = np.nonzero(wires >= num_wires)[0]
    if len(bad_wire):
        i = int(bad_wire[0])
        raise reader.error(
            f"constraint {int(lc_of_term[i]) // 3} names wire {int(wires[i])}, "
            f"the circuit has {num_wires}"
        )
    bad_value = np.nonzero(~FR.below_modulus(coeffs))[0]
    if len(bad_value):
        raise reader.error(
            f"constraint {int(lc_of_term[bad_value[0]]) // 3} has a coefficient not below r"
        )
    constraint, part = np.divmod(lc_of_term, 3)
    a, b, c = (
        csr_from_triples(
            constraint[part == k], wires[part == k], coeffs[part == k], num_constraints, num_wires
        )
        for k in range(3)
    )
    matrices = R1CSMatrices(
        num_inputs=num_inputs,
        num_aux=num_wires - num_inputs,
        num_constraints=num_constraints,
        a=a,
        b=b,
        c=c,
    )
    return CircomR1CS(
        container.path,
        num_wires,
        num_outputs,
        num_public_inputs,
        num_private_inputs,
        num_labels,
        matrices,
    )
