"""A parameters folder as ``cuzk setup`` writes it: params.bin, vk.bin and circuit.json.

circuit.json records which circuit (name and knobs) the parameters were made for, so that
``cuzk prove --params DIR`` can synthesize the same circuit.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from cuzk_core.errors import FormatError
from cuzk_core.fileio import write_json_atomic
from cuzk_core.groth16 import files
from cuzk_core.groth16.key_cache import beside
from cuzk_core.groth16.key_convert import PARAMS, key_to_cache
from cuzk_core.groth16.keys import ProvingKey

PARAMS_FILE = "params.bin"
VK_FILE = "vk.bin"
CIRCUIT_FILE = "circuit.json"


def write_params_dir(folder: Path, pk: ProvingKey, circuit: dict[str, Any]) -> None:
    """Write the three files and the key cache beside params.bin (so the first proof need not
    convert it); each appears complete or not at all."""
    files.write_params(folder / PARAMS_FILE, pk)
    key_to_cache(pk, folder / PARAMS_FILE, PARAMS, beside(folder / PARAMS_FILE))
    files.write_vk(folder / VK_FILE, pk.vk)
    write_json_atomic(folder / CIRCUIT_FILE, circuit)


def publish_params_dir(target: Path, pk: ProvingKey, circuit: dict[str, Any]) -> None:
    """Write a whole folder beside ``target`` and rename it into place (for the cache)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        write_params_dir(staging, pk, circuit)
        staging.rename(target)
    except OSError:
        if target.is_dir():  # another process published it first: theirs is as good
            return
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def read_circuit_spec(folder: Path) -> dict[str, Any]:
    """The circuit name and knobs recorded by ``cuzk setup``."""
    path = folder / CIRCUIT_FILE
    try:
        spec = json.loads(path.read_text())
    except FileNotFoundError:
        raise FormatError(
            f"{path}: missing (a folder made by `cuzk setup` records its circuit there)"
        ) from None
    except (OSError, json.JSONDecodeError) as exc:
        raise FormatError(f"{path}: unreadable: {exc}") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("circuit"), str):
        raise FormatError(f'{path}: must be an object with a "circuit" name and its knobs')
    return spec
