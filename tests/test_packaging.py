"""A regular (non-editable) install ships every package: pyproject's list names each one."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the tomli backport below 3.11
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent


def test_every_package_with_an_init_is_listed_and_every_listed_one_exists():
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {name: Path(path) for name, path in setuptools["package-dir"].items()}
    folders.setdefault("cuzk_core", Path("cuzk_core"))
    listed = set(setuptools["packages"])
    found = set()
    for top, folder in folders.items():
        for init in (REPO / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(REPO / folder).parts
            found.add(".".join((top, *relative)))
    assert found - listed == set(), "packages a wheel would leave out"
    for name in listed:
        top, *rest = name.split(".")
        assert (REPO / folders[top] / Path(*rest)).is_dir(), f"{name} is listed but absent"
