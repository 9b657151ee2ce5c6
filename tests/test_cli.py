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


def test_the_shell_completes_subcommands_and_their_choices(tmp_path) -> None:
    """argcomplete's protocol, as bash's completion function drives it: the line so far in
    COMP_LINE, the answer in the file the test names (else fd 8)."""
    import os
    import subprocess

    from t2hx import ROOT

    def complete(line: str) -> list[str]:
        out = tmp_path / "out"
        env = {**os.environ, "_ARGCOMPLETE": "1", "COMP_LINE": line,
               "COMP_POINT": str(len(line)), "_ARGCOMPLETE_STDOUT_FILENAME": str(out)}
        run = subprocess.run([str(ROOT / ".venv" / "bin" / "t2hx")], env=env,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        return out.read_text().replace("\v", " ").split()

    assert complete("t2hx con") == ["conf"]
    assert {"schema", "check"} <= set(complete("t2hx conf "))
    assert {"system", "study", "--out"} <= set(complete("t2hx conf schema "))
