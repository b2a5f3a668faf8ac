"""GGUF structure of each fragment on its own: readable header, unique names, sane data layout."""

from __future__ import annotations

from collections.abc import Iterator

from certify.checks import register
from certify.findings import Finding, finding
from certify.gguf.constants import GGML_QUANT_SIZES
from certify.gguf.fragments import capped, declared_headers
from certify.gguf.model import GGUFHeader, HeaderError, TensorInfo
from certify.view import PackageView

MAX_NAME_BYTES = 63  # GGML_MAX_NAME is 64 including the terminating NUL

HEADER_ERROR_CODES = ("gguf_bad_magic", "gguf_unsupported_version", "gguf_truncated",
                      "gguf_invalid_header", "check_not_run")


@register("gguf_structure", order=300, codes=[
    *HEADER_ERROR_CODES, "gguf_duplicate_key", "gguf_duplicate_tensor",
    "gguf_tensor_out_of_bounds", "gguf_tensor_overlap", "gguf_misaligned_tensor",
])
def check_gguf_structure(view: PackageView) -> Iterator[Finding]:
    """Every declared fragment whose header was read, projectors included."""
    for artifact, path, header in declared_headers(view):
        layer = artifact.layer_index
        if isinstance(header, HeaderError):
            where = f" (offset {header.offset})" if header.offset is not None else ""
            yield finding(header.code, f"{path}: {header.message}{where}", path=path,
                          layer_index=layer)
            continue
        yield from capped([finding("gguf_duplicate_key", f"{path}: metadata key {key!r} appears "
                                   "more than once (the first value is used)", path=path,
                                   layer_index=layer)
                           for key in dict.fromkeys(header.duplicate_keys)])
        yield from capped([finding("gguf_duplicate_tensor", f"{path}: tensor {name!r} appears "
                                   "more than once", path=path, layer_index=layer)
                           for name in dict.fromkeys(header.duplicate_tensors)])
        yield from capped(list(_tensor_validity(header, path, layer)))
        yield from capped(list(_out_of_bounds(header, path, layer)))
        yield from capped(list(_overlaps(header, path, layer)))
        yield from capped(list(_misaligned(header, path, layer)))


def _tensor_validity(header: GGUFHeader, path: str, layer: int | None) -> Iterator[Finding]:
    """What llama.cpp refuses although the header parses: unknown types, ragged rows, long names."""
    for t in header.tensors:
        sizes = GGML_QUANT_SIZES.get(t.ggml_type)  # type: ignore[call-overload]
        if sizes is None:
            yield finding("gguf_invalid_header", f"{path}: tensor {t.name!r} has unknown ggml "
                          f"type {t.ggml_type}; its size cannot be checked", path=path,
                          layer_index=layer)
        elif t.shape and t.shape[0] % sizes[0]:
            yield finding("gguf_invalid_header", f"{path}: tensor {t.name!r} has {t.shape[0]} "
                          f"elements per row, not a multiple of its type's block size "
                          f"{sizes[0]}", path=path, layer_index=layer)
        if len(t.name.encode()) > MAX_NAME_BYTES:
            yield finding("gguf_invalid_header", f"{path}: tensor name {t.name[:40]!r}... is "
                          f"longer than {MAX_NAME_BYTES} bytes", path=path, layer_index=layer)


def _out_of_bounds(header: GGUFHeader, path: str, layer: int | None) -> Iterator[Finding]:
    if header.file_size is None:
        return
    for t in header.tensors:
        end = header.data_offset + t.offset + t.n_bytes
        if end > header.file_size:
            yield finding("gguf_tensor_out_of_bounds", f"{path}: tensor {t.name!r} data ends at "
                          f"byte {end}, past the end of the {header.file_size}-byte file",
                          path=path, layer_index=layer)


def _overlaps(header: GGUFHeader, path: str, layer: int | None) -> Iterator[Finding]:
    """Sweep tensors by offset; each one starting before the furthest end so far overlaps."""
    ordered = sorted((t for t in header.tensors if t.n_bytes > 0),
                     key=lambda t: (t.offset, -t.n_bytes))
    widest: TensorInfo | None = None
    for t in ordered:
        if widest is not None and t.offset < widest.offset + widest.n_bytes:
            yield finding("gguf_tensor_overlap", f"{path}: tensor {t.name!r} (bytes {t.offset}.."
                          f"{t.offset + t.n_bytes} of the data section) overlaps {widest.name!r} "
                          f"({widest.offset}..{widest.offset + widest.n_bytes})", path=path,
                          layer_index=layer)
        if widest is None or t.offset + t.n_bytes > widest.offset + widest.n_bytes:
            widest = t


def _misaligned(header: GGUFHeader, path: str, layer: int | None) -> Iterator[Finding]:
    for t in header.tensors:
        if t.offset % header.alignment:
            yield finding("gguf_misaligned_tensor", f"{path}: tensor {t.name!r} starts at data "
                          f"offset {t.offset}, not a multiple of the alignment "
                          f"{header.alignment}", path=path, layer_index=layer)
