"""Shared fixtures: a factory of real layer packages (real GGUF files) and a certify helper;
and the session's own temp dir, checked for leftovers when the session ends."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from meshcert.certify.report import CertReport
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.view import CertOptions
from meshcert.testing import PackageInfo, glm_dsa_spec, llama_spec, write_package

# -- the system temp dir ---------------------------------------------------------------------
# The session runs with a temp dir of its own (TMPDIR, which every child process inherits, and
# the fake Hub gives its jobs): what meshcert or a test leaves behind there is found by name
# when the session ends, without mistaking another suite's files on a shared machine for ours.
# pytest's own tmp_path directories stay where they were (PYTEST_DEBUG_TEMPROOT).
SESSION_TEMP_PREFIX = "meshcert-suite-tmp-"
# What meshcert (and the suite's fakes) name their temp files and directories by.
OURS = ("meshcert-", "fake-hub-jobs-")
_LEFTOVERS = pytest.StashKey[list[str]]()


def pytest_sessionstart(session: pytest.Session) -> None:
    system_temp = tempfile.gettempdir()
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", system_temp)
    private = tempfile.mkdtemp(prefix=SESSION_TEMP_PREFIX, dir=system_temp)
    os.environ["TMPDIR"] = tempfile.tempdir = private


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    private = os.environ.get("TMPDIR", "")
    if not os.path.basename(private).startswith(SESSION_TEMP_PREFIX):
        return
    hub_env = sys.modules.get("tests.support.hub_env")
    if hub_env is not None:  # its HF_HOME would otherwise go only at exit, after this check
        hub_env.remove_process_home()
    left = sorted(name for name in os.listdir(private) if name.startswith(OURS))
    shutil.rmtree(private, ignore_errors=True)
    session.config.stash[_LEFTOVERS] = left
    if left and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int,
                            config: pytest.Config) -> None:
    left = config.stash.get(_LEFTOVERS, [])
    if left:
        terminalreporter.section("files left in the system temp dir", red=True)
        for name in left:
            terminalreporter.line(f"left behind: {name}")


class PackageFactory:
    """Builds real packages under a tmp dir; helpers break them in the ways the codes name."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self._n = 0

    def build(self, kind: str = "llama", *, layers: int = 4, **kwargs: Any) -> PackageInfo:
        self._n += 1
        spec = llama_spec(block_count=layers) if kind == "llama" else glm_dsa_spec(
            block_count=layers, **kwargs.pop("spec_kwargs", {}))
        root = self.base / f"pkg{self._n}-{kind}"
        return write_package(spec, root, source_dir=self.base / f"src{self._n}", **kwargs)

    @staticmethod
    def edit_manifest(info: PackageInfo, edit: Callable[[dict[str, Any]], None]) -> None:
        """Rewrite model-package.json after applying `edit` (files stay as written)."""
        path = info.root / "model-package.json"
        data = json.loads(path.read_text())
        edit(data)
        path.write_text(json.dumps(data, indent=2))
        info.manifest = data

    @staticmethod
    def write_manifest_text(info: PackageInfo, text: str | bytes) -> None:
        path = info.root / "model-package.json"
        path.write_bytes(text.encode() if isinstance(text, str) else text)


@pytest.fixture
def packages(tmp_path: Path) -> PackageFactory:
    return PackageFactory(tmp_path)


def certify_dir(path: str | Path, **options: Any) -> CertReport:
    """Certify a local package directory package-only, in process."""
    verify_cache = options.pop("verify_cache", None)
    source = options.pop("source_gguf", None)
    request = CertRequest(model=str(path), options=CertOptions(**options),
                          verify_cache=verify_cache, source_gguf=source)
    return certify_package(request)


def codes(report: CertReport) -> set[str]:
    return {f.code for f in report.findings}
