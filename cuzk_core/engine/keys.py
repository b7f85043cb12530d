"""The proving keys an engine serves: checked when the engine starts, loaded when a job needs one.

A key is a ``cuzk setup`` folder (params.bin, vk.bin, circuit.json: jobs name an instance of its
embedded circuit by seed) or a snarkjs ``.zkey`` (jobs bring a witness). Clients name keys by
their configured id only; the engine never opens a key path a client sends.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from cuzk_core.backend import Backend
from cuzk_core.errors import FormatError
from cuzk_core.groth16 import files, params_dir
from cuzk_core.groth16.assembly import keep_delta_tables
from cuzk_core.groth16.key_cache import beside
from cuzk_core.groth16.key_sources import ParamsFile, ZkeyFile, in_cache_dir
from cuzk_core.groth16.keys import ProvingKey, VerifyingKey
from cuzk_core.groth16.qap import QuotientConvention
from cuzk_core.interop.zkey import Zkey
from cuzk_core.profile import MSM_NAMES, KeyStorage, Profile
from cuzk_core.r1cs import R1CSMatrices


class KeyKind(enum.Enum):
    """How a key is stored, and so what its jobs bring."""

    PARAMS = "params"
    ZKEY = "zkey"


@attrs.frozen
class KeySpec:
    """A configured key, checked: where it is and what stage 1 of a job needs to know about it."""

    key_id: str
    kind: KeyKind
    path: Path
    disk_bytes: int
    """The key's size on disk: the estimate of its size in memory before it is loaded."""
    circuit: dict[str, Any] | None = None
    """PARAMS: the circuit name and knobs from circuit.json."""
    num_vars: int | None = None
    """ZKEY: the witness length the key expects."""

    @property
    def key_file(self) -> Path:
        """The file whose bytes are the bulk of the key."""
        return self.path / params_dir.PARAMS_FILE if self.kind is KeyKind.PARAMS else self.path

    def loaded_file(self) -> Path:
        """The file a load reads: the key's cache (beside it, else in the cache folder) once
        one exists, else the key file itself."""
        for cache in (beside(self.key_file), in_cache_dir(self.key_file)):
            if cache.is_file():
                return cache
        return self.key_file


@attrs.define(eq=False)
class ResidentKey:
    """A key in memory: the proving key, its H convention, and (zkey) the constraint matrices."""

    spec: KeySpec
    pk: ProvingKey
    vk: VerifyingKey
    convention: QuotientConvention
    matrices: R1CSMatrices | None = None
    """ZKEY: the A and B rows with input rows, stored in the key itself."""
    table_bytes: int = 0
    """Device bytes of the window tables its proofs build (see :func:`window_table_bytes`)."""

    @property
    def nbytes(self) -> int:
        """Bytes its point arrays hold, and its window tables on the device."""
        batches = (self.pk.h, self.pk.l, self.pk.a, self.pk.b_g1, self.pk.b_g2)
        return sum(b.coords.nbytes + b.infinity.nbytes for b in batches) + self.table_bytes


def window_table_bytes(pk: ProvingKey, profile: Profile, msms: Iterable[str] = MSM_NAMES) -> int:
    """Device bytes a resident key's window tables (``msm.table_bits``) for ``msms`` hold beyond
    its bases: a batch whose table holds k windows (``msm.table_windows``, else all
    TableBits.windows(c) of c bits) keeps k multiples of each base, the base one of them. With
    20 bits and every window that is 12 more copies of the batch, so a key counts 13x."""
    if profile.memory.key_storage is not KeyStorage.DEVICE:
        return 0
    total = 0
    for name in msms:
        table = profile.msm.table_of(name)
        if table is not None:
            total += (table[1] - 1) * getattr(pk, name).coords.nbytes
    return total


def check_key(key_id: str, kind: KeyKind, path: Path) -> KeySpec:
    """The key's spec after a cheap check of its files (headers, vk), or a one-line error."""
    if kind is KeyKind.PARAMS:
        if not path.is_dir():
            raise FormatError(f"key {key_id!r}: {path} is not a folder made by `cuzk setup`")
        circuit = params_dir.read_circuit_spec(path)
        files.read_vk(path / params_dir.VK_FILE)
        params = path / params_dir.PARAMS_FILE
        if not params.is_file():
            raise FormatError(f"key {key_id!r}: {params}: missing")
        return KeySpec(key_id, kind, path, params.stat().st_size, circuit=circuit)
    if not path.is_file():
        raise FormatError(f"key {key_id!r}: {path}: missing (a snarkjs .zkey)")
    zkey = Zkey(path)
    return KeySpec(key_id, kind, path, path.stat().st_size, num_vars=zkey.header.num_vars)


def load_key(spec: KeySpec, backend: Backend) -> ResidentKey:
    """The whole key, through the key cache (converted once on first use) and placed as the
    profile's ``key_storage`` says; a corrupt file is a :class:`FormatError` naming it."""
    if spec.kind is KeyKind.PARAMS:
        params = ParamsFile(spec.key_file)
        vk = files.read_vk(spec.path / params_dir.VK_FILE)
        key = ResidentKey(spec, params.load(backend), vk, params.convention)
    else:
        zkey = Zkey(spec.path)
        source = ZkeyFile(zkey)
        pk = source.load(backend)
        key = ResidentKey(spec, pk, pk.vk, source.convention, matrices=zkey.matrices())
    keep_delta_tables(key.pk.vk)  # resident: its proofs' blinding terms from tables
    # Only an accelerated backend builds window tables (B·G2 may run on another backend).
    msms = [m for m in MSM_NAMES if (backend.b_g2 if m == "b_g2" else backend).accelerated]
    key.table_bytes = window_table_bytes(key.pk, backend.ctx.profile, msms)
    return key


def read_verifying_key(spec: KeySpec) -> VerifyingKey:
    """The key's verifying key alone (for clients that verify what the engine proved)."""
    if spec.kind is KeyKind.PARAMS:
        return files.read_vk(spec.path / params_dir.VK_FILE)
    return Zkey(spec.path).verifying_key()
