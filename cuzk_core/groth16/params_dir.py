"""A parameters folder as ``cuzk setup`` writes it: params.bin, vk.bin and circuit.json.

circuit.json records which circuit (name and knobs) the parameters were made for, so that
``cuzk prove --params DIR`` can synthesize the same circuit. vk.bin repeats the verifying key
params.bin starts with; :func:`read_vk` checks that it does.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from cuzk_core.errors import FormatError, OutputError
from cuzk_core.fileio import json_bytes, map_input, read_json, write_together
from cuzk_core.groth16 import files
from cuzk_core.groth16.key_cache import beside
from cuzk_core.groth16.key_convert import PARAMS, key_to_cache
from cuzk_core.groth16.keys import ProvingKey, VerifyingKey

PARAMS_FILE = "params.bin"
VK_FILE = "vk.bin"
CIRCUIT_FILE = "circuit.json"
MAX_CIRCUIT_JSON_BYTES = 1 << 20
"""circuit.json holds a name, a few knobs and a digest: a few hundred bytes."""


def params_files(pk: ProvingKey, circuit: dict[str, Any]) -> dict[str, bytes]:
    """The three files of a parameters folder, encoded (for :func:`write_together`)."""
    return {
        PARAMS_FILE: pk.to_bytes(),
        VK_FILE: pk.vk.to_bytes(),
        CIRCUIT_FILE: json_bytes(circuit),
    }


def write_params_dir(
    folder: Path, pk: ProvingKey, circuit: dict[str, Any], extra: Mapping[str, bytes] | None = None
) -> None:
    """Write the three files (and ``extra`` ones), all together or none, then the key cache
    beside params.bin (so the first proof need not convert it; a proof rebuilds it if missing)."""
    write_together(folder, {**params_files(pk, circuit), **(extra or {})})
    key_to_cache(pk, folder / PARAMS_FILE, PARAMS, beside(folder / PARAMS_FILE))


def publish_params_dir(target: Path, pk: ProvingKey, circuit: dict[str, Any]) -> None:
    """Write a whole folder beside ``target`` and rename it into place (for the cache)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        write_params_dir(staging, pk, circuit)
        staging.rename(target)
    except OSError as exc:
        if (target / PARAMS_FILE).is_file():  # another process published it first: as good
            return
        raise OutputError(
            f"{target}: cannot put the parameters there ({exc.strerror or exc}); remove it "
            "(or run `cuzk cache clear`)"
        ) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def read_circuit_spec(folder: Path) -> dict[str, Any]:
    """The circuit name and knobs recorded by ``cuzk setup``."""
    path = folder / CIRCUIT_FILE
    if not path.exists():
        raise FormatError(
            f"{path}: missing (a folder made by `cuzk setup` records its circuit there)"
        )
    spec = read_json(path, MAX_CIRCUIT_JSON_BYTES, "circuit.json")
    if not isinstance(spec, dict) or not isinstance(spec.get("circuit"), str):
        raise FormatError(f'{path}: must be an object with a "circuit" name and its knobs')
    return spec


def read_vk(folder: Path) -> VerifyingKey:
    """vk.bin, checked to be the verifying key params.bin holds (a folder mixing two keys would
    make proofs that no verifier accepts)."""
    vk_path, params_path = folder / VK_FILE, folder / PARAMS_FILE
    vk = files.read_vk(vk_path)
    raw, params = map_input(vk_path), map_input(params_path)
    if len(params) < len(raw):  # params.bin starts with its verifying key
        raise FormatError(
            f"{params_path}: truncated: {len(params)} bytes, shorter than its verifying key "
            f"({len(raw)} bytes in {vk_path})"
        )
    if not np.array_equal(params[: len(raw)], raw):
        raise FormatError(
            f"{vk_path}: not the verifying key of {params_path} (the folder mixes two keys: "
            "run `cuzk setup` again)"
        )
    return vk
