"""The header reader walks and validates a big vocabulary without loading numpy: `models certify`
pays for what it reads, not for numpy's import (60-130 ms, more than the walk itself)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bench.gguf_header import write_tokenizer_fragment

ROOT = Path(__file__).resolve().parents[3]


def test_a_152k_token_vocabulary_is_read_without_numpy(tmp_path: Path) -> None:
    fragment = write_tokenizer_fragment(tmp_path / "fragment.gguf", 152_064, 151_387)
    code = ("import sys\nfrom meshcert.core.gguf.reader import read_header_file\n"
            f"header = read_header_file({str(fragment)!r})\n"
            "print(type(header).__name__, header.invalid_utf8, 'numpy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=120)
    assert done.stdout.split() == ["GGUFHeader", "[]", "False"], done.stderr
