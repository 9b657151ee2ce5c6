"""Every subcommand answers --help, and errors are one line."""

import subprocess
import sys

import pytest

from t2hx.cli import build_parser, main


def subcommands() -> list[str]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return sorted(action.choices)


def test_top_level_help() -> None:
    out = subprocess.run([sys.executable, "-m", "t2hx.cli", "--help"], capture_output=True,
                         text=True, check=True).stdout
    assert "usage: t2hx" in out


@pytest.mark.parametrize("name", subcommands())
def test_every_subcommand_has_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([name, "--help"])
    assert exc.value.code == 0
    assert "usage:" in capsys.readouterr().out
