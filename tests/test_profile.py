"""Profiles: shipped ones load, `extends` merges, and every kind of bad input is named."""

from __future__ import annotations

import importlib.metadata
import json
import sys
from pathlib import Path

import attrs
import pytest

from cuzk_core.cli import main
from cuzk_core.errors import ProfileError
from cuzk_core.profile import (
    B_G2_ON_DEVICE,
    MAX_EXTENDS_DEPTH,
    MAX_PROFILE_BYTES,
    MAX_SLEEP_MS,
    KeyStorage,
    Pinning,
    Profile,
    load_profile,
    named_profiles,
    plugin_profiles,
    schema_keys,
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
    assert card.msm.b_g2_on == "fastcpu"  # overridden
    assert card.msm.window_bits.b_g2 == gpu.msm.window_bits.b_g2  # inherited inside a sub-table
    assert card.msm.window_bits.a == 15
    assert card.memory.pinning is Pinning.REGISTER
    assert card.memory.key_storage is KeyStorage.STREAM
    assert card.sources[0].endswith("h200.toml")


def test_h100_tables_keeps_b_over_seven_windows_and_the_rest_over_three():
    profile = load_profile("h100-tables")
    assert profile.backend == load_profile("h200").backend
    assert profile.msm.sorts_ahead and profile.msm.share_sorts  # B·G1 takes B·G2's sort
    assert [profile.msm.table_of(m) for m in ("b_g1", "b_g2", "a", "l", "h")] == [
        (20, 7),
        (20, 7),
        (20, 3),
        (20, 3),
        (20, 3),
    ]


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
        ("[msm.table_windows]\nb_g2 = 1", "'msm.table_windows.b_g2' must be an integer from 2"),
        ('extends = "h200"\n[msm.table_windows]\na = 4', "'msm.table_bits.a' sets none"),
        (
            'extends = "h200-tables"\n[msm.table_windows]\nl = 14',
            "from 2 to 13 (a 20-bit table's windows), got 14",
        ),
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


def test_a_table_holds_every_window_unless_told_fewer():
    profile = load_profile("h200-tables", {"msm.table_windows.b_g2": 4})
    assert profile.msm.table_of("b_g2") == (20, 4)
    assert profile.msm.table_of("a") == (20, 13)
    assert load_profile("h200").msm.table_of("a") is None
    assert profile.to_dict()["msm"]["table_windows"] == {"b_g2": 4}
    assert "table_windows" not in load_profile("h200-tables").to_toml()


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
    with pytest.raises(ProfileError, match="shipped: cpu, h100-tables, h200,"):
        load_profile("definitely-not-here")


# ---------------------------------------------------------------- the schema is the attrs classes


def test_an_empty_profile_is_the_classes_defaults(tmp_path):
    path = tmp_path / "empty.toml"
    path.write_text("# nothing set\n")
    assert load_profile(path) == Profile(name="empty", sources=(str(path),))


@pytest.mark.parametrize("name", sorted(shipped_profiles()))
def test_show_output_loads_back_to_the_same_profile(tmp_path, name):
    profile = load_profile(name)
    shown = tmp_path / f"{name}.toml"
    shown.write_text(profile.to_toml())
    again = load_profile(shown)
    assert again.digest() == profile.digest()
    assert attrs.evolve(again, name=name, sources=profile.sources) == profile


def test_show_documents_every_key_with_what_it_allows():
    changes = {"debug.sleep_ms.msm_a": 5, "memory.key_storage": "stream"}
    shown = load_profile("cpu", {**changes, "memory.device_budget_kib": 64}).to_toml()
    # knobs shown only when set, which no one profile can all set at once
    resident = {"memory.key_storage": "device"}
    for name in ("a", "b_g1", "b_g2", "l", "h"):
        resident.update({f"msm.table_bits.{name}": 20, f"msm.table_windows.{name}": 4})
    shown += load_profile("cpu", resident).to_toml()
    for dotted, knob in schema_keys():
        assert f"# {knob.doc}; " in shown, dotted
    assert '"auto" or an integer from 1 to 24' in shown
    assert 'one of "none", "register", "pool"' in shown
    assert "[debug.sleep_ms]\nmsm_a = 5" in shown


def test_every_key_is_documented_in_docs():
    text = (Path(__file__).resolve().parents[1] / "docs" / "profiles.md").read_text()
    for dotted, _ in schema_keys():
        assert f"`{dotted}`" in text, dotted
    assert "presize_synthesis" not in text


def test_knob_that_did_nothing_is_gone(tmp_path):
    path = tmp_path / "old.toml"
    path.write_text("[memory]\npresize_synthesis = true\n")
    with pytest.raises(ProfileError, match=r"unknown key 'memory\.presize_synthesis'"):
        load_profile(path)
    assert "presize_synthesis" not in str(load_profile("h200").to_dict())


@pytest.mark.parametrize("value", ["device", "fastcpu", "cpu", "my-backend.v2"])
def test_b_g2_on_names_a_backend(tmp_path, value):
    path = tmp_path / "p.toml"
    path.write_text(f'[msm]\nb_g2_on = "{value}"\n')
    assert load_profile(path).msm.b_g2_on == value
    assert load_profile(path).to_dict()["msm"]["b_g2_on"] == value
    assert load_profile().msm.b_g2_on == B_G2_ON_DEVICE == "device"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('""', "'msm.b_g2_on' must be \"device\" or a backend name"),
        ('"two words"', "got 'two words'"),
        ('"-x"', "got '-x'"),
        ("3", "'msm.b_g2_on' must be a string"),
        ("true", "'msm.b_g2_on' must be a string"),
    ],
)
def test_b_g2_on_must_look_like_a_backend_name(tmp_path, value, message):
    path = tmp_path / "p.toml"
    path.write_text(f"[msm]\nb_g2_on = {value}\n")
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert str(path) in str(caught.value) and message in str(caught.value)


# ---------------------------------------------------------------- profiles shipped by plugins


def _install_profile_plugin(site: Path, dist: str, entry_points: dict[str, str], files: dict):
    """A real distribution in ``site``: ``cuzk.profiles`` entry points, packages of TOML files."""
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    listed = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[cuzk.profiles]\n{listed}")
    for package, tomls in files.items():
        (site / package).mkdir()
        (site / package / "__init__.py").write_text('"""Profiles of a throwaway plugin."""\n')
        for name, text in tomls.items():
            (site / package / f"{name}.toml").write_text(text)


@pytest.fixture
def profile_plugins(tmp_path, monkeypatch):
    """Two throwaway plugins: one shipping ``cpu`` (a clash) and ``demo``, one whose entry
    point names no package."""
    site = tmp_path / "site"
    site.mkdir()
    demo = 'extends = "cpu"\ndescription = "demo"\n[msm]\nsplit_01 = true\n'
    clash = 'backend = "cpu"\ndescription = "a plugin cpu that must lose"\n'
    _install_profile_plugin(
        site,
        "cuzkt-demo",
        {"demo": "cuzkt_demo_profiles"},
        {"cuzkt_demo_profiles": {"demo": demo, "cpu": clash}},
    )
    _install_profile_plugin(site, "cuzkt-gone", {"gone": "cuzkt_no_such_package"}, {})
    monkeypatch.syspath_prepend(str(site))
    yield site
    for module in [m for m in sys.modules if m.startswith("cuzkt_")]:
        del sys.modules[module]


def test_plugin_profiles_resolve_by_name_and_shipped_wins(profile_plugins, tmp_path):
    demo = load_profile("demo")
    assert demo.description == "demo" and demo.msm.split_01 is True
    assert demo.sources[-1].endswith("demo.toml")
    assert load_profile("cpu").description != "a plugin cpu that must lose"
    child = tmp_path / "child.toml"
    child.write_text('extends = "demo"\n[memory]\npool_mib = 8\n')
    assert load_profile(child).msm.split_01 is True


def test_named_profiles_say_where_each_comes_from(profile_plugins):
    named = {(p.name, p.origin): p for p in named_profiles()}
    assert named["cpu", "shipped"].shadowed_by is None
    assert named["cpu", "cuzkt-demo 0.1"].shadowed_by == "shipped"
    assert named["demo", "cuzkt-demo 0.1"].path.name == "demo.toml"
    broken = plugin_profiles()[1]
    assert [b.origin for b in broken] == ["cuzkt-gone 0.1 (gone)"]
    assert "cuzkt_no_such_package" in broken[0].reason


def test_missing_profile_lists_plugin_profiles_too(profile_plugins):
    with pytest.raises(ProfileError, match=r"from plugins: .*demo \(cuzkt-demo 0\.1\)"):
        load_profile("definitely-not-here")


def test_fastcpu_ships_its_profile_by_name():
    pytest.importorskip("cuzk_fastcpu")
    profile = load_profile("fastcpu")
    assert profile.backend == "fastcpu"
    origin = f"cuzk-fastcpu {importlib.metadata.version('cuzk-fastcpu')}"
    assert any(p.name == "fastcpu" and p.origin == origin for p in named_profiles())


# ---------------------------------------------------------------- hostile files (issue 18)


def _one_line_error(path: Path) -> str:
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message


def test_non_utf8_byte_even_in_a_comment(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'backend = "cpu"\n# caf\xe9\n')
    message = _one_line_error(path)
    assert "not UTF-8" in message and "0xe9" in message and "line 2" in message


def test_integer_beyond_pythons_digit_limit(tmp_path):
    path = tmp_path / "huge.toml"
    path.write_text("[memory]\npool_mib = " + "9" * 5000 + "\n")
    assert "more than 4300 digits" in _one_line_error(path)


def test_big_integer_within_the_digit_limit_is_out_of_range_and_shown_short(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text("[memory]\npool_mib = " + "9" * 4000 + "\n")
    message = _one_line_error(path)
    assert "'memory.pool_mib' must be a positive integer up to 1048576" in message
    assert len(message) < 300


@pytest.mark.parametrize("spelling", ["²", "٦", "６", '"٦"', '"６"'])
def test_unicode_digits_are_not_numbers(tmp_path, spelling):
    path = tmp_path / "digits.toml"
    path.write_text(f"[memory]\npool_mib = {spelling}\n", encoding="utf-8")
    message = _one_line_error(path)
    assert "malformed TOML" in message or "'memory.pool_mib' must be a positive integer" in message


def test_unicode_digit_in_a_change_is_not_a_number():
    with pytest.raises(ProfileError, match=r"'msm\.window_bits\.h' must be \"auto\" or an integer"):
        load_profile("cpu", {"msm.window_bits.h": "１６"})


def test_extends_chain_of_1200_files_stops_at_the_depth_limit(tmp_path):
    for k in range(1200):
        parent = f'extends = "p{k + 1}.toml"\n' if k < 1199 else ""
        (tmp_path / f"p{k}.toml").write_text(parent)
    message = _one_line_error(tmp_path / "p0.toml")
    assert f"longer than {MAX_EXTENDS_DEPTH} files" in message
    assert MAX_EXTENDS_DEPTH == 32


def test_extends_chain_at_the_depth_limit_loads(tmp_path):
    for k in range(MAX_EXTENDS_DEPTH):
        parent = f'extends = "p{k + 1}.toml"\n' if k < MAX_EXTENDS_DEPTH - 1 else ""
        (tmp_path / f"p{k}.toml").write_text(parent + f'description = "p{k}"\n')
    profile = load_profile(tmp_path / "p0.toml")
    assert profile.description == "p0" and len(profile.sources) == MAX_EXTENDS_DEPTH


@pytest.mark.parametrize("ms", [10**20, MAX_SLEEP_MS + 1, 0])
def test_sleep_ms_is_bounded_by_an_hour(tmp_path, ms):
    path = tmp_path / "sleepy.toml"
    path.write_text(f"[debug.sleep_ms]\nmsm_a = {ms}\n")
    message = _one_line_error(path)
    assert "'debug.sleep_ms.msm_a' must be a positive integer up to 3600000" in message
    with pytest.raises(ProfileError, match="up to 3600000"):
        load_profile("cpu", {"debug.sleep_ms.msm_a": ms})


def test_deeply_nested_toml_is_one_line(tmp_path):
    path = tmp_path / "deep.toml"
    depth = sys.getrecursionlimit() + 100  # py_ecc raises the limit to 100,000 when imported
    path.write_text("description = " + "[" * depth + "]" * depth + "\n")
    assert "nested too deeply" in _one_line_error(path)


def test_oversized_file_is_refused_before_parsing(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text("#" * (MAX_PROFILE_BYTES + 1))
    assert "larger than" in _one_line_error(path)


# ---------------------------------------------------------------- the command line


def test_profile_list_shows_origin_path_and_who_wins(profile_plugins, capsys):
    assert main(["profile", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    shipped_cpu = next(line for line in lines if line.startswith("cpu ") and "shipped" in line)
    assert shipped_cpu.endswith(str(shipped_profiles()["cpu"]))
    plugin_cpu = next(line for line in lines if line.startswith("cpu ") and "cuzkt-demo" in line)
    assert "hidden: the shipped one wins" in plugin_cpu
    demo = next(line for line in lines if line.startswith("demo "))
    assert "cuzkt-demo 0.1" in demo and str(profile_plugins / "cuzkt_demo_profiles") in demo
    gone = next(line for line in lines if "cuzkt-gone" in line)
    assert "broken: ModuleNotFoundError" in gone


SMALL = ["--circuit", "porep-lite", "--challenges", "1", "--depth", "3", "--seed", "7"]


@pytest.fixture(scope="module")
def key_cache(tmp_path_factory) -> Path:
    """One parameter cache for this module's proofs, so the small key is made once."""
    return tmp_path_factory.mktemp("cache")


def _prove(profile: str, out: Path, key_cache: Path, monkeypatch) -> dict:
    """Prove the small circuit under ``profile`` and check the proof; its spans by name."""
    monkeypatch.setenv("CUZK_CACHE_DIR", str(key_cache))
    assert main(["--profile", profile, "-q", "prove", *SMALL, "--out", str(out)]) == 0
    files = {"vk": "vk.bin", "proof": "proof.bin", "public": "public.json"}
    assert main(["verify", *(a for k, f in files.items() for a in (f"--{k}", str(out / f)))]) == 0
    spans = json.loads((out / "timings.json").read_text())["spans"]
    return {span["name"]: span for span in spans if span["parent"] is None}


def test_prove_with_the_fastcpu_profile_by_name(tmp_path, monkeypatch, key_cache, capsys):
    pytest.importorskip("cuzk_fastcpu")
    phases = _prove("fastcpu", tmp_path / "out", key_cache, monkeypatch)
    assert capsys.readouterr().out.strip().endswith("valid")
    assert phases["msm_a"]["backend"] == phases["msm_b_g2"]["backend"] == "fastcpu"


def test_b_g2_on_runs_b_g2_on_the_named_backend(tmp_path, monkeypatch, key_cache):
    pytest.importorskip("cuzk_fastcpu")
    beside = tmp_path / "beside.toml"
    beside.write_text('extends = "cpu"\n[msm]\nb_g2_on = "fastcpu"\n')
    phases = _prove(str(beside), tmp_path / "beside", key_cache, monkeypatch)
    assert phases["msm_b_g2"]["backend"] == "fastcpu" and phases["msm_a"]["backend"] == "cpu"
    _prove("cpu", tmp_path / "alone", key_cache, monkeypatch)
    proof = (tmp_path / "beside" / "proof.bin").read_bytes()
    assert proof == (tmp_path / "alone" / "proof.bin").read_bytes()  # same seed, same bytes


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"# \xff\n", "not UTF-8"),
        (b"[memory]\npool_mib = " + b"1" * 4400 + b"\n", "more than 4300 digits"),
        ("[memory]\npool_mib = ６\n".encode(), "malformed TOML"),
        (b"[debug.sleep_ms]\nmsm_a = 100000000000000000000\n", "up to 3600000"),
        (b'extends = "bad.toml"\n', "cycle"),
    ],
)
def test_hostile_profiles_exit_2_with_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "bad.toml"
    path.write_bytes(content)
    assert main(["profile", "show", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("cuzk: error: ")
    assert captured.err.count("\n") == 1 and message in captured.err
