"""The plain gguf tables meshcert reads (meshcert.core.gguf.constants) are gguf-py's own, whether
they
come from the cached snapshot, from executing gguf/constants.py, or from gguf itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gguf

from meshcert.core.gguf import constants

ROOT = Path(__file__).resolve().parents[3]
NAMES = ("GGML_QUANT_SIZES", "GGML_TYPE_NAMES", "MODEL_ARCH_NAMES", "MODEL_TENSORS",
         "TENSOR_NAMES", "MODEL_TENSOR_IDS")


def test_the_tables_equal_gguf_pys() -> None:
    assert {int(k): v for k, v in gguf.GGML_QUANT_SIZES.items()} == constants.GGML_QUANT_SIZES
    assert {int(t): t.name for t in gguf.GGMLQuantizationType} == constants.GGML_TYPE_NAMES
    assert {int(k): v for k, v in gguf.MODEL_ARCH_NAMES.items()} == constants.MODEL_ARCH_NAMES
    arch_tensors = {int(k): frozenset(int(t) for t in v) for k, v in gguf.MODEL_TENSORS.items()}
    assert arch_tensors == constants.MODEL_TENSORS
    assert {int(k): v for k, v in gguf.TENSOR_NAMES.items()} == constants.TENSOR_NAMES
    assert {t.name: int(t) for t in gguf.MODEL_TENSOR} == constants.MODEL_TENSOR_IDS
    assert constants.GGML_QUANT_SIZES[gguf.GGMLQuantizationType.Q4_K] == (256, 144)


def tables_in_a_fresh_process(cache: Path) -> dict[str, object]:
    code = ("import json, sys\nimport meshcert.core.gguf.constants as c\n"
            f"print(json.dumps({{n: repr(sorted(getattr(c, n).items())) for n in {NAMES!r}}}))\n"
            "print('gguf' in sys.modules, 'meshcert.core.gguf._gguf_py_constants' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(cache)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env, cwd=ROOT, timeout=60).stdout.splitlines()
    return {"tables": json.loads(out[0]), "loaded": out[1]}


def test_a_snapshot_is_written_once_then_read_and_gives_the_same_tables(
        tmp_path: Path) -> None:
    first = tables_in_a_fresh_process(tmp_path)
    snapshot = constants.snapshot_path(constants.constants_file().read_bytes())
    written = tmp_path / snapshot.relative_to(snapshot.parents[2])
    assert written.is_file()
    assert first["loaded"] == "False True"  # the file was executed, gguf never imported
    second = tables_in_a_fresh_process(tmp_path)
    assert second["loaded"] == "False False"  # read from the snapshot, nothing executed
    assert second["tables"] == first["tables"]


def test_a_damaged_snapshot_is_ignored_and_rewritten(tmp_path: Path) -> None:
    tables_in_a_fresh_process(tmp_path)
    snapshot = next((tmp_path / "meshcert" / "gguf-tables").glob("*.json"))
    snapshot.write_text('{"quant_sizes": "junk"')
    again = tables_in_a_fresh_process(tmp_path)
    assert again["loaded"] == "False True"
    assert json.loads(snapshot.read_text())["quant_sizes"]
