"""The header reader walks and validates a big vocabulary without loading numpy: `models certify`
pays for what it reads, not for numpy's import (60-130 ms, more than the walk itself)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from gguf import GGUFWriter

ROOT = Path(__file__).resolve().parents[3]


def write_tokenizer_fragment(path: Path, n_tokens: int, n_merges: int) -> Path:
    """A layer fragment carrying a Qwen2-sized BPE tokenizer, written by gguf-py."""
    writer = GGUFWriter(str(path), "qwen2")
    writer.add_block_count(94)
    writer.add_embedding_length(64)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list([f"\u0120tok{i}" for i in range(n_tokens)])
    writer.add_token_types([1] * n_tokens)
    writer.add_token_merges([f"\u0120t ok{i}" for i in range(n_merges)])
    writer.add_tensor("blk.7.attn_norm.weight", np.ones(64, np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_152k_token_vocabulary_is_read_without_numpy(tmp_path: Path) -> None:
    fragment = write_tokenizer_fragment(tmp_path / "fragment.gguf", 152_064, 151_387)
    code = ("import sys\nfrom meshcert.core.gguf.reader import read_header_file\n"
            f"header = read_header_file({str(fragment)!r})\n"
            "print(type(header).__name__, header.invalid_utf8, 'numpy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=120)
    assert done.stdout.split() == ["GGUFHeader", "[]", "False"], done.stderr
