"""The one loader of CUDA sources: includes inlined with ``#line`` markers, compiled by an adapter.

Every quoted ``#include`` is resolved against backends/kernels and inlined once, each file
behind ``#line 1 "<path>"`` so compiler errors name the real file and line. Because the
assembled text holds every header, the libraries' disk caches (CuPy's key is the source string
and options; PyCUDA's, the preprocessed source, options and nvcc version) cover them all; a
digest of the whole is also put on the first line, so logs can name the build. Importing this
module needs no GPU library; compiling does (NVRTC through CuPy, nvcc through PyCUDA).
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from pathlib import Path
from typing import Any

from .adapter import Adapter, Module

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')
_PRAGMA_ONCE = re.compile(r"^\s*#\s*pragma\s+once\s*$")
COMPILE_OPTIONS = ("-std=c++17",)


def kernel_root() -> Path:
    """The folder holding the kernel sources: the installed package, else the source tree."""
    try:
        import cuzk_kernels

        return Path(cuzk_kernels.__file__).resolve().parent
    except ImportError:
        return Path(__file__).resolve().parent.parent / "kernels"


def kernel_files() -> list[str]:
    """Every kernel file (a ``.cu`` under ``kernel_root()``), named as ``assemble`` takes it."""
    root = kernel_root()
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*.cu"))


def _inline(path: Path, root: Path, seen: set[Path], out: list[str]) -> None:
    path = path.resolve()
    if path in seen:
        return
    seen.add(path)
    shown = path.relative_to(root).as_posix()
    out.append(f'#line 1 "{root.name}/{shown}"')
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        match = _INCLUDE.match(line)
        if match:
            target = (path.parent / match.group(1)).resolve()
            if not target.is_file():
                raise FileNotFoundError(f"{shown}:{number}: include {match.group(1)!r} not found")
            _inline(target, root, seen, out)
            out.append(f'#line {number + 1} "{root.name}/{shown}"')
        elif _PRAGMA_ONCE.match(line):
            out.append("")
        else:
            out.append(line)


def assemble(name: str, defines: dict[str, int] | None = None, root: Path | None = None) -> str:
    """The self-contained source of kernel file ``name`` (e.g. ``"msm/msm.cu"``), from ``root``
    (another checkout's kernel folder) or ``kernel_root()``."""
    root = root or kernel_root()
    lines: list[str] = [f"#define {k} {v}" for k, v in sorted((defines or {}).items())]
    _inline(root / name, root, set(), lines)
    body = "\n".join(lines) + "\n"
    digest = hashlib.sha256(body.encode()).hexdigest()[:16]
    return f"// cuzk kernel {name} digest {digest}\n{body}"


class KernelCache:
    """Compiled modules by (file, defines), built once per process; compile time is recorded."""

    def __init__(self, adapter: Adapter) -> None:
        self._adapter = adapter
        self._modules: dict[tuple[str, tuple[tuple[str, int], ...]], Module] = {}
        self._functions: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.Lock()
        self.compile_ms: dict[str, float] = {}

    def module(self, name: str, defines: dict[str, int] | None = None) -> Module:
        """The compiled module for ``name``, holding every kernel of the file."""
        key = (name, tuple(sorted((defines or {}).items())))
        with self._lock:
            module = self._modules.get(key)
            if module is None:
                start = time.perf_counter()
                module = self._adapter.compile(assemble(name, defines), COMPILE_OPTIONS)
                self.compile_ms.setdefault(name, (time.perf_counter() - start) * 1000.0)
                self._modules[key] = module
            return module

    def kernel(self, name: str, function: str, defines: dict[str, int] | None = None) -> Any:
        """One ``extern "C"`` kernel of file ``name`` (looked up once)."""
        key = (name, function, tuple(sorted((defines or {}).items())))
        found = self._functions.get(key)
        if found is None:
            found = self._functions[key] = self.module(name, defines).get_function(function)
        return found
