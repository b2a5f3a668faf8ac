"""--after-artifact-command: once per artifact, after it is verified, with the artifact's
paths in the environment; a failing hook or one that changes the file aborts the write."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from meshcert.splitter.errors import Aborted
from tests.splitter.builders import tiny_source, write_package

LOGGER = ("import json, os, sys; open(sys.argv[1], 'a').write(json.dumps("
          "[os.environ['SKIPPY_PACKAGE_ARTIFACT_PATH'], "
          "os.environ['SKIPPY_PACKAGE_ARTIFACT_RELATIVE_PATH'], "
          "os.path.getsize(os.environ['SKIPPY_PACKAGE_ARTIFACT_PATH'])]) + '\\n')")


def _python(code: str, *args: str) -> str:
    return shlex.join([sys.executable, "-c", code, *args])


def test_the_hook_sees_each_finished_artifact_once(tmp_path: Path,
                                                   capfd: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "hook.log"
    command = _python(LOGGER, str(log)) + " && echo uploaded"
    result = write_package(tiny_source(tmp_path), tmp_path / "pkg",
                           after_artifact_command=command)
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    planned = {a.path: a.size for a in result.plan.all_artifacts()}
    assert sorted(rel for _, rel, _ in calls) == sorted(planned)  # each one, once
    assert all(path == str(result.root / rel) and size == planned[rel]
               for path, rel, size in calls)  # complete when the hook runs
    assert calls[-1][1] == "shared/metadata.gguf"  # the carrier comes after the parts
    out = capfd.readouterr()
    assert "uploaded" in out.err and "uploaded" not in out.out  # stdout stays the caller's


def test_a_failing_hook_aborts_before_the_manifest(tmp_path: Path) -> None:
    command = _python("import os, sys; sys.exit(7 if 'layer-00001' in "
                      "os.environ['SKIPPY_PACKAGE_ARTIFACT_RELATIVE_PATH'] else 0)")
    with pytest.raises(Aborted, match="exited with status 7 after layers/layer-00001.gguf"
                       ) as err:
        write_package(tiny_source(tmp_path), tmp_path / "pkg", after_artifact_command=command)
    assert err.value.code == "hook_failed"
    assert not (tmp_path / "pkg/model-package.json").exists()


@pytest.mark.parametrize("action", ["append", "remove"])
def test_a_hook_that_changes_the_artifact_aborts(tmp_path: Path, action: str) -> None:
    change = ("open(p, 'ab').write(b'x')" if action == "append" else "os.remove(p)")
    command = _python(f"import os; p = os.environ['SKIPPY_PACKAGE_ARTIFACT_PATH']; {change}")
    with pytest.raises(Aborted, match="changed") as err:
        write_package(tiny_source(tmp_path), tmp_path / "pkg", after_artifact_command=command)
    assert err.value.code == "hook_changed_artifact"
    assert not (tmp_path / "pkg/model-package.json").exists()
