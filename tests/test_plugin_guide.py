"""The plugin author's guide (docs/plugins.md) covers every hookspec, required and optional."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuzk_core import hookspecs

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "plugins.md"
HOOKS = sorted(hookspecs.HOOK_NAMES)


def test_there_are_required_and_optional_hooks():
    assert {"cuzk_msm_g1", "cuzk_backend_info", "cuzk_bench_clock"} <= set(HOOKS)


@pytest.mark.parametrize("name", HOOKS)
def test_every_hookspec_is_in_the_guide(name):
    assert f"`{name}`" in GUIDE.read_text(), f"{name} is missing from docs/plugins.md"


def test_the_guide_links_the_contract_and_names_the_block_variable():
    text = GUIDE.read_text()
    assert "(hooks.md)" in text and "CUZK_BLOCK_PLUGINS" in text and "--cuzk-backend" in text
