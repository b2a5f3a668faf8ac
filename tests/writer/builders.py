"""Sources and packages for the writer tests: tiny synthetic models written with the gguf
library (one file, or a split set the way gguf-py splits), and a one-call write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.reader import read_header_file
from meshcert.testing import (
    ModelSpec,
    llama_spec,
    mmproj_spec,
    moe_mtp_spec,
    write_source_gguf,
)
from meshcert.writer.write import WriteRequest, WriteResult, prepare, write

MODEL_ID = "meshcert/tiny-llama-GGUF:F16"


def tiny_source(base: Path, spec: ModelSpec | None = None, *, split: int = 0) -> Path:
    spec = spec or llama_spec()
    return write_source_gguf(spec, base / "source" / spec.source_file, split_max_tensors=split)


def moe_sources(base: Path) -> tuple[Path, Path]:
    """The MoE + NextN/MTP + rope_freqs model, and an mmproj projector beside it."""
    model = write_source_gguf(moe_mtp_spec(), base / "source" / moe_mtp_spec().source_file)
    projector = write_source_gguf(mmproj_spec(), base / "source" / "mmproj-tiny-F16.gguf")
    return model, projector


def write_package(source: Path | str, out: Path, **options: Any) -> WriteResult:
    """prepare + write (the source audit is off unless asked: these sources are our own)."""
    options.setdefault("model_id", MODEL_ID)
    options.setdefault("inspect", False)
    prepared = prepare(WriteRequest(str(source), str(out), **options))
    try:
        return write(prepared)
    finally:
        prepared.source.close()


def header(path: Path) -> GGUFHeader:
    result = read_header_file(path)
    assert isinstance(result, GGUFHeader), result
    return result
