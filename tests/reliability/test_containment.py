"""Containment through the real CLI: whatever breaks, a report is written and says so.

- a registered check that raises: `internal_error` naming the check, `incomplete`, exit 3,
  every requested report written;
- a bug while loading the package (outside any check): the same, not a traceback;
- Ctrl-C (a real SIGINT) while artifacts are hashed: a partial report, `incomplete`, exit 3;
- report files are replaced atomically: a writer that fails or is killed mid-write leaves the
  previous report intact (or none), never a partial file;
- `--deadline` bounds the runtime gates even when `--timeout` is large and the server trickles.

(The engine-level crash test is tests/certify/test_engine.py; Ctrl-C in-process is
tests/core/test_hashing.py. These go through the command line and real signals.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from meshcert.certify import checks
from meshcert.cli import app
from meshcert.core.atomic import write_atomic
from meshcert.testing import PackageInfo, llama_spec, write_package
from tests.reliability.raw_http import RawServer
from tests.support.fake_openai import FakeOpenAI
from tests.support.interrupt import interrupt_at, start_interruptible

REPO_ROOT = Path(__file__).resolve().parents[2]
OLD = "OLD REPORT: must survive a failed write\n"


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> PackageInfo:
    return write_package(llama_spec(block_count=4), tmp_path_factory.mktemp("contain") / "pkg")


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["models", "certify", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.exception, result.output)
    return result.exit_code, result.output


def _boom(view: object) -> Iterator[Any]:
    raise RuntimeError("check exploded on purpose")
    yield  # a generator, like the real checks


def test_a_crashing_check_via_the_cli_is_incomplete_with_every_report_written(
        package: PackageInfo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        figures: Callable[..., None]) -> None:
    registered = {c.name: c for c in checks.all_checks()}
    monkeypatch.setitem(checks._CHECKS, "artifact_files",
                        replace(registered["artifact_files"], func=_boom))
    out = tmp_path / "out"
    code, _ = cli(str(package.root), "--package-only", "--quiet",
                  "--report-out", str(out / "cert.json"), "--html", str(out / "cert.html"),
                  "--md", str(out / "cert.md"), "--junit", str(out / "cert.xml"))
    figures(faults_injected=1)
    assert code == 3
    report = json.loads((out / "cert.json").read_text())
    assert report["status"] == "incomplete"
    assert report["package_gate"]["status"] == "incomplete"
    crash = [f for f in report["findings"] if f["code"] == "internal_error"]
    assert len(crash) == 1 and crash[0]["check"] == "artifact_files"
    assert "'artifact_files' crashed: RuntimeError: check exploded on purpose" in crash[0][
        "message"]
    run = next(c for c in report["checks"] if c["name"] == "artifact_files")
    assert run["status"] == "error"
    others = [c for c in report["checks"] if c["name"] != "artifact_files"]
    assert others and all(c["status"] != "error" for c in others)  # the rest still ran
    for name in ("cert.html", "cert.md", "cert.xml"):
        text = (out / name).read_text().replace("\\_", "_")  # Markdown escapes "_"
        assert "internal_error" in text and "incomplete" in text, name
    assert sorted(p.name for p in out.iterdir()) == ["cert.html", "cert.json", "cert.md",
                                                      "cert.xml"]


def test_a_crash_while_loading_the_package_is_incomplete_not_a_traceback(
        package: PackageInfo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("loader exploded on purpose")

    monkeypatch.setattr("meshcert.certify.sources.local.read_local_headers", broken)
    out = tmp_path / "cert.json"
    code, _ = cli(str(package.root), "--package-only", "--quiet", "--report-out", str(out))
    assert code == 3
    report = json.loads(out.read_text())
    assert report["status"] == "incomplete"
    assert [f["code"] for f in report["findings"]] == ["internal_error"]
    assert "RuntimeError: loader exploded on purpose" in report["findings"][0]["message"]


def test_a_crash_in_the_runtime_layer_is_incomplete(
        package: PackageInfo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("sk-not-to-be-quoted runtime exploded")

    monkeypatch.setattr("meshcert.certify.runtime.gates.run_runtime_gates", broken)
    out = tmp_path / "cert.json"
    code, _ = cli(str(package.root), "--api-base", "http://127.0.0.1:9", "--quiet",
                  "--report-out", str(out))
    assert code == 3
    text = out.read_text()
    report = json.loads(text)
    assert report["status"] == "incomplete"
    assert {g["status"] for g in report["runtime_gates"]} == {"incomplete"}
    assert "sk-not-to-be-quoted" not in text


# -- Ctrl-C ----------------------------------------------------------------------------------
SIGINT_DRIVER = """
import sys, time
import meshcert.core.hashing as hashing

marker = sys.argv[1]

def stuck(path, on_bytes=None, cancel=None):
    open(marker, "a").close()  # hashing has started: the test may press Ctrl-C now
    while cancel is None or not cancel.is_set():
        time.sleep(0.01)
    raise InterruptedError("cancelled")

hashing.sha256_file = stuck
from meshcert.cli import main
sys.argv = ["meshcert", *sys.argv[2:]]
main()
"""


@pytest.mark.timeout(300)
def test_ctrl_c_while_hashing_writes_a_partial_incomplete_report(
        package: PackageInfo, tmp_path: Path, figures: Callable[..., None]) -> None:
    marker, out = tmp_path / "hashing-started", tmp_path / "out" / "cert.json"
    process = start_interruptible(
        [sys.executable, "-c", SIGINT_DRIVER, str(marker), "models", "certify",
         str(package.root), "--package-only", "--quiet", "--report-out", str(out)],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # the child's marker says it is inside the hashing (which waits for the cancel)
    stderr = interrupt_at(process, marker)
    figures(faults_injected=1)
    assert process.returncode == 3, stderr.decode()
    report = json.loads(out.read_text())
    assert report["status"] == "incomplete"
    note = next(f for f in report["findings"] if f["code"] == "check_not_run")
    assert "interrupted" in note["message"]
    codes = {f["code"] for f in report["findings"]}
    assert not codes & {"artifact_sha256_mismatch", "artifact_sha256_unreadable"}
    assert b"Traceback" not in stderr


# -- atomic report files ---------------------------------------------------------------------
Writer = Callable[[Path, str], object]


class _DyingHandle:
    """A file handle that writes half of what it is given, then fails like `error`."""

    def __init__(self, real: Any, error: BaseException) -> None:
        self._real = real
        self._error = error

    def __enter__(self) -> _DyingHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self._real.close()

    def write(self, text: str) -> int:
        self._real.write(text[: len(text) // 2])
        self._real.flush()
        raise self._error


def _break_writes(monkeypatch: pytest.MonkeyPatch, writer: str, error: BaseException) -> None:
    import builtins

    real_open = builtins.open
    monkeypatch.setattr("meshcert.core.atomic.open",
                        lambda *a, **k: _DyingHandle(real_open(*a, **k), error), raising=False)


# Every report file (cert.json, HTML, Markdown, JUnit, decisions.json) goes through this one.
WRITERS: dict[str, Writer] = {"atomic": write_atomic}


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()],
                         ids=["disk-full", "ctrl-c"])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_write_failing_midway_leaves_the_old_report(
        writer: str, error: BaseException, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "cert.json"
    target.write_text(OLD)
    _break_writes(monkeypatch, writer, error)
    with pytest.raises(type(error)):
        WRITERS[writer](target, "NEW " * 50_000)
    assert target.read_text() == OLD
    assert [p.name for p in tmp_path.iterdir()] == ["cert.json"]  # no temp file left behind


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_failing_rename_leaves_the_old_report(writer: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "cert.json"
    target.write_text(OLD)

    def refuse(src: object, dst: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        WRITERS[writer](target, "NEW")
    assert target.read_text() == OLD
    assert [p.name for p in tmp_path.iterdir()] == ["cert.json"]


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_failed_first_write_leaves_no_file(writer: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _break_writes(monkeypatch, writer, OSError(28, "No space left on device"))
    with pytest.raises(OSError):
        WRITERS[writer](tmp_path / "cert.json", "NEW " * 50_000)
    assert list(tmp_path.iterdir()) == []


KILL_DRIVER = """
import builtins, os, signal, sys
writer, target = sys.argv[1], sys.argv[2]

class Dying:
    def __init__(self, real):
        self.real = real
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.real.close()
    def write(self, text):
        self.real.write(text[: len(text) // 2])
        self.real.flush()
        os.fsync(self.real.fileno())
        os.kill(os.getpid(), signal.SIGKILL)  # killed mid-write: no cleanup can run

from meshcert.core import atomic
real_open = builtins.open
atomic.open = lambda *a, **k: Dying(real_open(*a, **k))
atomic.write_atomic(target, "NEW " * 50000)
"""


@pytest.mark.timeout(60)
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_killed_mid_write_the_old_report_survives(writer: str, tmp_path: Path) -> None:
    target = tmp_path / "cert.json"
    target.write_text(OLD)
    done = subprocess.run([sys.executable, "-c", KILL_DRIVER, writer, str(target)],
                          cwd=REPO_ROOT, capture_output=True, timeout=30)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()
    assert target.read_text() == OLD
    leftovers = [p for p in tmp_path.iterdir() if p.name != "cert.json"]
    assert len(leftovers) == 1 and leftovers[0].name.startswith(".cert.json.")
    assert leftovers[0].stat().st_size > 0  # the write really was cut midway


def test_an_unwritable_report_path_never_exits_0(package: PackageInfo, tmp_path: Path) -> None:
    """--report-out naming a directory: the run cannot claim success, nothing is clobbered."""
    taken = tmp_path / "cert.json"
    taken.mkdir()
    (taken / "keep").write_text("x")
    result = CliRunner().invoke(app, ["models", "certify", str(package.root), "--package-only",
                                      "--quiet", "--report-out", str(taken)])
    assert result.exit_code == 3  # incomplete: the verdict could not be delivered
    assert "error: cannot write" in result.output and "Traceback" not in result.output
    assert [p.name for p in taken.iterdir()] == ["keep"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cert.json"]


# -- --deadline ------------------------------------------------------------------------------
@pytest.mark.timeout(60)
@pytest.mark.parametrize("server", ["slow-first-byte", "slow-loris-headers"])
def test_deadline_bounds_the_runtime_gates_via_the_cli(
        server: str, package: PackageInfo, tmp_path: Path) -> None:
    out = tmp_path / "cert.json"
    started = time.monotonic()
    if server == "slow-first-byte":
        with FakeOpenAI(faults=["slow_first_byte"], slow_s=30.0) as fake:
            code, _ = cli(str(package.root), "--api-base", fake.base_url, "--served-model",
                          fake.model_id, "--timeout", "60", "--deadline", "1.5", "--quiet",
                          "--report-out", str(out))
    else:
        with RawServer("slow_headers") as raw:
            code, _ = cli(str(package.root), "--api-base", raw.base_url, "--timeout", "60",
                          "--deadline", "1.5", "--quiet", "--report-out", str(out))
    elapsed = time.monotonic() - started
    assert elapsed < 20, f"HANG: --deadline 1.5 took {elapsed:.1f} s"
    assert code == 3
    report = json.loads(out.read_text())
    assert report["status"] == "incomplete"
    gates = {g["name"]: g for g in report["runtime_gates"]}
    late = [g for g in gates.values() if g["status"] == "incomplete"]
    assert late and all("deadline" in (g["details"] or "") for g in late), late
    assert gates["v1_chat_completions"]["status"] == "incomplete"
