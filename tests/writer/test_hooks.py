"""--after-artifact-command: once per artifact, after it is verified, with the artifact's
paths in the environment; a failing hook or one that changes the file aborts the write."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from meshcert.writer.errors import Aborted
from tests.writer.builders import tiny_source, write_package

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


# the carrier is finished last (after every part): its hook changes one byte of a part that was
# already hashed, in place (same size), from another process
TOUCH_A_FINISHED_PART = (
    "import os\n"
    "if os.environ['SKIPPY_PACKAGE_ARTIFACT_RELATIVE_PATH'] == 'shared/metadata.gguf':\n"
    "    root = os.path.dirname(os.path.dirname(os.environ['SKIPPY_PACKAGE_ARTIFACT_PATH']))\n"
    "    with open(os.path.join(root, 'layers', 'layer-00000.gguf'), 'r+b') as f:\n"
    "        f.seek(-1, 2)\n"
    "        last = f.read(1)\n"
    "        f.seek(-1, 2)\n"
    "        f.write(bytes([last[0] ^ 0xFF]))\n")


def test_a_byte_changed_in_a_part_after_it_was_hashed_aborts_the_write(tmp_path: Path) -> None:
    """The writer reuses the digests it took while writing (no second pass): a part changed
    on disk after its digest was taken is still caught, by its signature."""
    with pytest.raises(Aborted) as err:
        write_package(tiny_source(tmp_path), tmp_path / "pkg",
                      after_artifact_command=_python(TOUCH_A_FINISHED_PART))
    assert err.value.code == "artifact_changed"
    assert "layers/layer-00000.gguf" in err.value.message
    assert not (tmp_path / "pkg/model-package.json").exists()
