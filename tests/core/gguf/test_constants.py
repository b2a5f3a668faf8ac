"""The plain gguf tables meshcert reads (meshcert.core.gguf.constants, generated into the
repository by scripts/generate_gguf_tables.py) are the installed gguf-py's own, and reading
them neither imports gguf nor writes anything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gguf

from meshcert.core.gguf import constants, gguf_tables

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "generate_gguf_tables.py"
REGENERATE = "the generated tables differ from the installed gguf's: run " \
             "python3 scripts/generate_gguf_tables.py"


def test_the_tables_equal_the_installed_gguf_pys() -> None:
    assert {int(k): v for k, v in gguf.GGML_QUANT_SIZES.items()} == constants.GGML_QUANT_SIZES, \
        REGENERATE
    assert {int(t): t.name for t in gguf.GGMLQuantizationType} == constants.GGML_TYPE_NAMES, \
        REGENERATE
    assert {int(k): v for k, v in gguf.MODEL_ARCH_NAMES.items()} == constants.MODEL_ARCH_NAMES, \
        REGENERATE
    arch_tensors = {int(k): frozenset(int(t) for t in v) for k, v in gguf.MODEL_TENSORS.items()}
    assert arch_tensors == constants.MODEL_TENSORS, REGENERATE
    assert {int(k): v for k, v in gguf.TENSOR_NAMES.items()} == constants.TENSOR_NAMES, REGENERATE
    assert {t.name: int(t) for t in gguf.MODEL_TENSOR} == constants.MODEL_TENSOR_IDS, REGENERATE
    assert constants.GGML_QUANT_SIZES[gguf.GGMLQuantizationType.Q4_K] == (256, 144)


def test_the_generated_file_is_what_the_script_writes_today(tmp_path: Path) -> None:
    out = tmp_path / "gguf_tables.py"
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], check=True,
                   capture_output=True, timeout=120)
    assert out.read_text() == Path(gguf_tables.__file__).read_text(), REGENERATE


def test_reading_the_tables_imports_no_gguf_and_writes_nothing(tmp_path: Path) -> None:
    code = ("import sys\nimport meshcert.core.gguf.constants as c\n"
            "print(len(c.TENSOR_NAMES) > 0, 'gguf' in sys.modules, 'numpy' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env=env, cwd=ROOT, timeout=60)
    assert done.stdout.split() == ["True", "False", "False"], done.stderr
    assert not (tmp_path / "cache").exists() and not (tmp_path / "home").exists()
