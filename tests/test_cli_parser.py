"""The `cuzk` parser: a light start-up, global options after the command, help that tells, one
version."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys

import pytest

import cuzk_core
from cuzk_core.cli import main
from cuzk_core.cli.parser import COMMANDS, build_parser, command_in

HEAVY_PACKAGES = ("numpy", "attrs", "cuzk_backend_cpu", "cuzk_backend_cupy", "cuzk_fastcpu")
CHECKS = "cuzk_core.conformance.checks"


def modules_after(argv: list[str]) -> set[str]:
    """Every module a fresh interpreter holds after ``cuzk ARGV`` (a --help or --version)."""
    code = (
        "import json, sys\n"
        "from cuzk_core.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in HEAVY_PACKAGES or m.startswith(CHECKS)}


@pytest.mark.parametrize(
    "argv", [["--help"], ["--version"], ["verify", "--help"], ["profile", "list", "--help"]]
)
def test_help_imports_no_numpy_no_backend_no_check(argv):
    modules = modules_after(argv)
    assert heavy(modules) == set()
    assert "cuzk_core.cli.commands" not in modules and "cuzk_core.cli.bench_commands" not in modules


@pytest.mark.parametrize("argv", [["prove", "--help"], ["setup", "--help"], ["bench", "--help"]])
def test_command_help_imports_no_conformance_check(argv):
    assert CHECKS not in modules_after(argv)


def test_the_lazy_listing_is_the_full_one():
    # The shallow entries (name and help line) must read as the fully built commands do.
    assert build_parser([]).format_help() == build_parser().format_help()


def test_command_in_skips_global_options_and_their_values():
    assert command_in(["--profile", "prove", "setup", "--out", "x"]) == "setup"
    assert command_in(["--profile=verify", "-q", "check"]) == "check"
    assert command_in(["--prof", "prove", "backends"]) == "backends"
    assert command_in(["-q", "--quiet", "trace", "show", "t.jsonl"]) == "trace"
    assert command_in(["--", "profile"]) == "profile"
    assert command_in(["--help"]) is None and command_in([]) is None


def parsed(argv: list[str]) -> dict[str, object]:
    """What ``cuzk ARGV`` parses to, less the handler (a fresh closure per parser; the command
    names in the namespace say which one runs)."""
    namespace = vars(build_parser(argv).parse_args(argv))
    assert callable(namespace.pop("handler"))
    return namespace


COMMAND_ARGS = {
    "prove": ["prove", "--out", "o", "--seed", "7"],
    "setup": ["setup", "--out", "p"],
    "verify": ["verify", "--vk", "v", "--proof", "p", "--public", "j"],
    "check": ["check", "--r1cs", "c.r1cs", "--wtns", "w.wtns"],
    "backends": ["backends", "--check", "fastcpu"],
    "profile": ["profile", "show"],
    "bench": ["bench", "msm", "--size", "2^8"],
    "trace": ["trace", "show", "t.jsonl"],
    "cache": ["cache", "list"],
    "serve": ["serve", "--key", "k=params", "--pipeline", "off"],
    "client": ["client", "status", "--addr", "unix:///tmp/cuzk.sock"],
    "fleet": ["fleet", "--key", "k=params", "--workers", "2", "--ray", "auto"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_global_options_after_the_command_parse_as_before_it(command, monkeypatch):
    monkeypatch.delenv("CUZK_PROFILE", raising=False)
    args = COMMAND_ARGS[command]
    before = parsed(["--profile", "h200", "-q", *args])
    assert before["profile"] == "h200" and before["quiet"] is True
    assert parsed([*args, "--profile", "h200", "-q"]) == before
    assert parsed([*args, "--profile=h200", "--quiet"]) == before
    assert parsed(["-q", *args, "--profile", "h200"]) == before
    plain = parsed(args)
    assert plain["profile"] is None and plain["quiet"] is False


def test_options_between_nested_commands_and_the_last_profile_wins(monkeypatch):
    monkeypatch.setenv("CUZK_PROFILE", "cpu")
    assert parsed(["bench", "-q", "msm", "--size", "8"])["quiet"] is True
    assert parsed(["profile", "show"])["profile"] == "cpu"  # $CUZK_PROFILE still the default
    assert parsed(["--profile", "h200", "profile", "show", "--profile", "x.toml"])["profile"] == (
        "x.toml"
    )


def test_a_profile_after_the_command_is_the_one_used(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("colour = 1\n")
    assert main(["profile", "show", "--profile", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cuzk: error: ") and "bad.toml" in err and "colour" in err
    assert main(["--profile", str(bad), "profile", "show", "--profile", "cpu"]) == 0
    assert capsys.readouterr().out.startswith("# profile cpu")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["prove", "--profile"], "argument --profile: expected one argument"),
        (["nosuch"], "invalid choice: 'nosuch'"),
        (["--profile", "cpu"], "the following arguments are required: COMMAND"),
        (["prove", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_usage_errors_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2 and message in capsys.readouterr().err


def help_text(capsys, *command: str) -> str:
    with pytest.raises(SystemExit) as done:
        main([*command, "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


def test_global_options_show_in_every_command_help(capsys):
    text = help_text(capsys, "bench", "msm")
    assert "global options (also accepted before the command):" in text
    assert "--profile PROFILE" in text and "-q, --quiet" in text
    assert "may also follow the command" in help_text(capsys)


def test_version_is_cuzk_core_version_everywhere(capsys):
    for argv in (["--version"], ["prove", "--version"]):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 0
        assert capsys.readouterr().out == f"cuzk {cuzk_core.__version__}\n"
    reinstall = "the installed metadata is stale: reinstall (pip install -e .)"
    assert importlib.metadata.version("cuzk") == cuzk_core.__version__, reinstall


def test_fastcpu_version_is_its_package_version():
    fastcpu = pytest.importorskip("cuzk_fastcpu")
    reinstall = "the installed metadata is stale: reinstall ./plugins/cuzk-fastcpu"
    assert importlib.metadata.version("cuzk-fastcpu") == fastcpu.__version__, reinstall
