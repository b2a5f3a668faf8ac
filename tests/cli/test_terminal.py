"""meshcert.cli.terminal answers as rich would, without importing it: whether a stream is a
terminal (TTY_COMPATIBLE, FORCE_COLOR, isatty) and how wide plain output is (COLUMNS, the
first standard stream that is a terminal, else 80). Each case asks rich too."""

from __future__ import annotations

import io
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from meshcert.cli.terminal import plain_stream, plain_width

ROOT = Path(__file__).resolve().parents[2]


class Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


ENV_CASES = list(itertools.product([None, "", "0", "1", "2"], [None, "", "1", "0"]))


@pytest.mark.parametrize("tty", [True, False], ids=["tty", "pipe"])
@pytest.mark.parametrize(("tty_compatible", "force_color"), ENV_CASES)
def test_a_plain_stream_is_exactly_what_rich_does_not_treat_as_a_terminal(
        tty: bool, tty_compatible: str | None, force_color: str | None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in (("TTY_COMPATIBLE", tty_compatible), ("FORCE_COLOR", force_color)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    stream = Stream(tty)
    assert plain_stream(stream) == (not Console(file=stream).is_terminal)


def test_a_closed_stream_is_plain() -> None:
    stream = Stream(False)
    stream.close()
    assert plain_stream(stream) and not Console(file=stream).is_terminal


@pytest.mark.parametrize("columns", [None, "", "0", "57", "120", "abc", "-5", " 90"])
def test_the_plain_width_is_rich_s(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert plain_width() == Console(file=io.StringIO()).width


WIDTHS = (
    "import io, json\n"
    "from rich.console import Console\n"
    "from meshcert.cli.terminal import plain_width\n"
    "print(json.dumps([plain_width(), Console(file=io.StringIO()).width]))\n")


@pytest.mark.parametrize("columns", [None, "132"])
def test_output_piped_from_a_terminal_takes_the_terminal_s_width(columns: str | None) -> None:
    """`meshcert ... | tee log` in a 101-column terminal: stdout is a pipe, stdin the terminal."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    try:
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 101, 0, 0))
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        env["PYTHONPATH"] = str(ROOT)
        if columns:
            env["COLUMNS"] = columns
        out = subprocess.run([sys.executable, "-c", WIDTHS], stdin=follower,
                             capture_output=True, text=True, env=env, check=True, timeout=60)
    finally:
        os.close(leader)
        os.close(follower)
    ours, rich_s = json.loads(out.stdout)
    assert ours == rich_s == (int(columns) if columns else 101)


def test_phase_lines_are_plain_lines_on_a_stderr_that_is_no_terminal(
        capsys: pytest.CaptureFixture[str]) -> None:
    from meshcert.cli.console import RichProgress

    progress = RichProgress()
    progress.begin("materialize cert-stage-0", 100)  # no bar: stderr is captured, no TTY
    progress.phase("materialize cert-stage-0 (layers 0..15): assembling")
    progress.advance(100)
    progress.end()
    progress.phase("parity: loading the source model in llama.cpp")
    lines = capsys.readouterr().err.splitlines()  # the task as a start and an end line
    assert lines[:2] == ["materialize cert-stage-0: started, 100 B to do",
                         "materialize cert-stage-0 (layers 0..15): assembling"]
    assert lines[2].startswith("materialize cert-stage-0: done, 100 B in ")
    assert lines[3:] == ["parity: loading the source model in llama.cpp"]
