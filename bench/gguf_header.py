"""GGUF header reads: meshcert's reader vs gguf.GGUFReader, side by side on the same files.

Files (written to a temp dir with the gguf library):
- small: one layer fragment of a tiny llama package;
- tokenizer: a fragment repeating a Qwen-sized tokenizer (152,064 tokens, their types and
  151,387 merges; `--quick` uses 32,000 / 31,000), as layer-package fragments do;
- package: every fragment of a generated 94-layer llama package (tiny tensors).

meshcert's reader is timed as the best of `--rounds`; GGUFReader once per file on the tokenizer
fragment (it takes tens of seconds) and as the best of `--rounds` elsewhere. Prints times,
the ratio, and how many reads / bytes meshcert's reader asked its ByteSource for.

    python bench/gguf_header.py            # full size (GGUFReader needs ~30 s on the tokenizer)
    python bench/gguf_header.py --quick
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from gguf import GGUFReader, GGUFWriter

from meshcert.core.byte_source import LocalFileSource
from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.reader import read_header
from meshcert.testing import llama_spec, write_package


def best_of(rounds: int, func: Callable[[], object]) -> float:
    """Best wall time of `rounds` calls, in seconds."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - started)
    return best


def write_tokenizer_fragment(path: Path, n_tokens: int, n_merges: int) -> Path:
    writer = GGUFWriter(str(path), "qwen2")
    writer.add_block_count(94)
    writer.add_embedding_length(64)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list([f"\u0120tok{i}" for i in range(n_tokens)])
    writer.add_token_types([1] * n_tokens)
    writer.add_token_merges([f"\u0120t ok{i}" for i in range(n_merges)])
    writer.add_tensor("blk.7.attn_norm.weight", np.ones(64, np.float32))
    writer.add_tensor("blk.7.attn_q.weight", np.zeros((64, 64), np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def ours(paths: list[Path]) -> tuple[int, int]:
    """Read every header; return (reads, bytes read) summed over the files."""
    reads = read_bytes = 0
    for path in paths:
        source = _CountingFile(path)
        header = read_header(source)
        assert isinstance(header, GGUFHeader), header
        reads += source.reads
        read_bytes += source.bytes_read
    return reads, read_bytes


def theirs(paths: list[Path]) -> None:
    for path in paths:
        GGUFReader(path)


class _CountingFile(LocalFileSource):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.reads = 0

    def read(self, offset: int, length: int) -> bytes:
        self.reads += 1
        return super().read(offset, length)


def compare(label: str, paths: list[Path], rounds: int, their_rounds: int) -> None:
    size = sum(p.stat().st_size for p in paths)
    reads, read_bytes = ours(paths)
    mine = best_of(rounds, lambda: ours(paths))
    other = best_of(their_rounds, lambda: theirs(paths))
    print(f"{label:<11} {len(paths):>5} {size / 1e6:>9.2f} {mine * 1e3:>12.2f} "
          f"{other * 1e3:>14.1f} {other / mine:>9.0f}x {reads:>7} {read_bytes / 1e6:>9.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a 32k vocabulary, not 152k")
    parser.add_argument("--layers", type=int, default=94)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    n_tokens, n_merges = (32_000, 31_000) if args.quick else (152_064, 151_387)
    with tempfile.TemporaryDirectory(prefix="meshcert-gguf-bench-") as tmp:
        base = Path(tmp)
        small = write_package(llama_spec(), base / "small").root / "layers/layer-001.gguf"
        tokenizer = write_tokenizer_fragment(base / "tokenizer.gguf", n_tokens, n_merges)
        package = write_package(llama_spec(block_count=args.layers, n_embd=32, n_ff=64),
                                base / "package").root
        fragments = sorted(package.rglob("*.gguf"))
        print(f"tokenizer fragment: {n_tokens} tokens + {n_merges} merges; package: "
              f"{args.layers} layers")
        print(f"{'file(s)':<11} {'files':>5} {'MB':>9} {'meshcert ms':>12} {'GGUFReader ms':>14} "
              f"{'ratio':>10} {'reads':>7} {'MB read':>9}")
        compare("small", [small], args.rounds, args.rounds)
        compare("tokenizer", [tokenizer], args.rounds, 1)
        compare("package", fragments, args.rounds, max(1, args.rounds // 2))


if __name__ == "__main__":
    main()
