"""Profiles: shipped ones load, `extends` merges, and every kind of bad input is named."""

from __future__ import annotations

import pytest

from cuzk_core.errors import ProfileError
from cuzk_core.profile import (
    KeyStorage,
    Pinning,
    load_profile,
    shipped_profiles,
)


def test_shipped_profiles_load_and_render():
    assert {"cpu", "h200", "rtx5070ti"} <= set(shipped_profiles())
    for name in shipped_profiles():
        profile = load_profile(name)
        assert profile.to_toml().startswith(f"# profile {name}")


def test_default_is_cpu():
    assert load_profile().backend == "cpu"


def test_extends_merges_tables_key_by_key():
    gpu = load_profile("h200")
    card = load_profile("rtx5070ti")
    assert card.backend == "cupy"  # inherited
    assert card.msm.b_g2_on == "cpu"  # overridden
    assert card.msm.window_bits.b_g2 == gpu.msm.window_bits.b_g2  # inherited inside a sub-table
    assert card.msm.window_bits.a == 15
    assert card.memory.pinning is Pinning.REGISTER
    assert card.memory.key_storage is KeyStorage.STREAM
    assert card.sources[0].endswith("h200.toml")


def test_one_line_variant_by_path(tmp_path):
    variant = tmp_path / "split.toml"
    variant.write_text('extends = "h200"\n[msm]\nsplit_01 = false\n')
    profile = load_profile(variant)
    assert profile.msm.split_01 is False
    assert profile.digest() != load_profile("h200").digest()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("backend = [", "malformed TOML"),
        ('backnd = "cpu"', "unknown key 'backnd'"),
        ("[msm]\nsplit01 = true", "unknown key 'msm.split01'"),
        ("[msm.window_bits]\na = 0", "'msm.window_bits.a' must be \"auto\" or an integer from 1"),
        ("[msm.window_bits]\nh = 40", "got 40"),
        ('[msm.window_bits]\nh = "big"', "got 'big'"),
        ('[msm]\nsplit_01 = "yes"', "'msm.split_01' must be true or false"),
        ('[memory]\npinning = "always"', "'memory.pinning' must be one of \"none\""),
        ("[memory]\npool_mib = -1", "positive integer"),
        ('[memory]\nkey_storage = "stream"\ndevice_budget_kib = 0', "positive integer"),
        ("[memory]\ndevice_budget_kib = 64", 'applies to key_storage "stream" or "mmap"'),
        ("backend = 3", "'backend' must be a string"),
        ("msm = 3", "'msm' must be a table"),
        ('extends = "no-such-profile"', "not found"),
    ],
)
def test_bad_profiles_are_named(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text + "\n")
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_device_budget_caps_a_streamed_key_and_only_shows_when_set(tmp_path):
    path = tmp_path / "tight.toml"
    path.write_text('extends = "h200"\n[memory]\nkey_storage = "stream"\ndevice_budget_kib = 64\n')
    profile = load_profile(path)
    assert profile.memory.device_budget_kib == 64
    assert "device_budget_kib = 64" in profile.to_toml()
    unset = load_profile("h200", {"memory.key_storage": "stream"})
    assert unset.memory.device_budget_kib is None and "device_budget" not in unset.to_toml()
    assert profile.digest() != unset.digest()


def test_extends_cycle_is_an_error(tmp_path):
    (tmp_path / "a.toml").write_text('extends = "b.toml"\n')
    (tmp_path / "b.toml").write_text('extends = "a.toml"\n')
    with pytest.raises(ProfileError, match="cycle"):
        load_profile(tmp_path / "a.toml")


def test_missing_profile_lists_shipped_ones():
    with pytest.raises(ProfileError, match="shipped: cpu, h200"):
        load_profile("definitely-not-here")
