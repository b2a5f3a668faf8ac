"""GGUF structure of each fragment on its own: readable header, unique names, sane data layout."""

from __future__ import annotations

from collections.abc import Iterator

from meshcert.certify.checks import register
from meshcert.certify.manifest_model import ArtifactEntry
from meshcert.certify.package_gguf.fragments import capped, declared_headers
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.constants import GGML_QUANT_SIZES
from meshcert.core.gguf.model import GGUFHeader, HeaderProblem, TensorInfo

MAX_NAME_BYTES = 63  # GGML_MAX_NAME is 64 including the terminating NUL
INT64_MAX = (1 << 63) - 1  # llama.cpp holds ne[] and element counts in int64_t
SIZE_MAX = (1 << 64) - 1  # ... and byte sizes in size_t (64-bit hosts)
CARRIER_KEY = "skippy.package.metadata_only"  # package-v2 metadata carrier: no data section

HEADER_ERROR_CODES = ("gguf_bad_magic", "gguf_unsupported_version", "gguf_truncated",
                      "gguf_invalid_header", "check_not_run")


@register("gguf_structure", order=300, codes=[
    *HEADER_ERROR_CODES, "gguf_duplicate_key", "gguf_duplicate_tensor",
    "gguf_tensor_out_of_bounds", "gguf_tensor_overlap", "gguf_misaligned_tensor",
    # llama.cpp gguf_init rules (docs/gguf-rules.md)
    "gguf_tensor_data_not_dense", "gguf_trailing_bytes", "gguf_empty_key", "gguf_invalid_utf8",
    "gguf_invalid_bool", "gguf_big_endian",
])
def check_gguf_structure(view: PackageView) -> Iterator[Finding]:
    """Every declared fragment whose header was read, projectors included."""
    for artifact, path, header in declared_headers(view):
        layer = artifact.layer_index
        if isinstance(header, HeaderProblem):
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
        yield from _encoding(header, path, layer)
        invalid = list(_tensor_validity(header, path, layer))
        yield from capped(invalid)
        if invalid or exempt_carrier(view, artifact, header):
            continue  # sizes unknown; or a v2 carrier, whose infos point into other files
        yield from layout_findings(header, path, layer)


def exempt_carrier(view: PackageView, artifact: ArtifactEntry, header: GGUFHeader) -> bool:
    """Only the artifact a v2 manifest names as its carrier (when it names none, the one that
    is the carrier by layout: shared/metadata.gguf without a data section), or a file
    inspected on its own that says it is one, skips the layout rules: a package fragment
    cannot opt out by setting the marker key."""
    if view.package_format == "v2":
        if artifact.role == "shared.metadata":
            return True
        layout = view.unidentified_carrier()
        return layout is not None and layout.path == artifact.path
    return view.standalone and is_metadata_carrier(header)


def is_metadata_carrier(header: GGUFHeader) -> bool:
    """A package-v2 shared/metadata.gguf: a tensor directory without a data section."""
    return header.kv.get(CARRIER_KEY) is True


def layout_findings(header: GGUFHeader, path: str, layer: int | None) -> list[Finding]:
    """Where the tensor data lies: inside the file, aligned, disjoint, dense, nothing after."""
    if (header.tensors and header.file_size is not None
            and header.data_offset > header.file_size):
        return [finding("gguf_truncated", f"{path}: the data section starts at byte "
                        f"{header.data_offset}, past the end of the {header.file_size}-byte "
                        "file", path=path, layer_index=layer)]
    out = capped(list(_out_of_bounds(header, path, layer)))
    overlaps = capped(list(_overlaps(header, path, layer)))
    misaligned = capped(list(_misaligned(header, path, layer)))
    out += overlaps + misaligned
    if not overlaps and not misaligned:  # gaps and reordering: what is left of llama.cpp's rule
        out += _not_dense(header, path, layer)
    if not out:
        out += _trailing(header, path, layer)
    return out


def _encoding(header: GGUFHeader, path: str, layer: int | None) -> Iterator[Finding]:
    """Keys present, text UTF-8, bools 0/1, little-endian: what the reader noted on the way."""
    if header.byte_order != "<":
        yield finding("gguf_big_endian", f"{path}: the file is big-endian; llama.cpp on a "
                      "little-endian node reads its version byte-swapped and refuses it",
                      path=path, layer_index=layer)
    if header.empty_keys:
        entries = ", ".join(str(i) for i in header.empty_keys)
        yield finding("gguf_empty_key", f"{path}: metadata entry {entries} has an empty key",
                      path=path, layer_index=layer)
    for where in header.invalid_utf8[:20]:
        yield finding("gguf_invalid_utf8", f"{path}: the {where} is not valid UTF-8",
                      path=path, layer_index=layer)
    for key in header.invalid_bools[:20]:
        yield finding("gguf_invalid_bool", f"{path}: bool metadata {key!r} holds a byte other "
                      "than 0 or 1", path=path, layer_index=layer)


def _tensor_validity(header: GGUFHeader, path: str, layer: int | None) -> Iterator[Finding]:
    """What llama.cpp refuses although the header parses: unknown types, ragged rows, long names."""
    for t in header.tensors:
        sizes = GGML_QUANT_SIZES.get(t.ggml_type)
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
        problem = _shape_overflow(t, sizes)
        if problem:
            yield finding("gguf_invalid_header", f"{path}: tensor {t.name!r} shape {t.shape} "
                          f"{problem}", path=path, layer_index=layer)


def _shape_overflow(t: TensorInfo, sizes: tuple[int, int] | None) -> str | None:
    """llama.cpp's int64 element count and size_t byte size must hold the tensor."""
    if any(dim > INT64_MAX for dim in t.shape):
        return "has a dimension that is negative as a signed 64-bit count"
    n_elements = 1
    for dim in t.shape:
        n_elements *= dim
    if n_elements > INT64_MAX:
        return "has more elements than a signed 64-bit count holds"
    if sizes is not None and n_elements // sizes[0] * sizes[1] > SIZE_MAX:
        return "is larger in bytes than a 64-bit size holds"
    return None


def _pad(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


def _not_dense(header: GGUFHeader, path: str, layer: int | None) -> list[Finding]:
    """llama.cpp: each tensor's offset is the sum of the previous ones' padded sizes, in
    tensor-info order. It stops at the first that is not; so does this (one finding)."""
    if any(GGML_QUANT_SIZES.get(t.ggml_type) is None
           for t in header.tensors):
        return []  # sizes unknown: already an invalid header
    expected = 0
    for index, t in enumerate(header.tensors):
        if t.offset != expected:
            return [finding("gguf_tensor_data_not_dense", f"{path}: tensor {t.name!r} (tensor "
                            f"info {index}) has data offset {t.offset}; llama.cpp requires "
                            f"{expected}, the padded end of the tensors listed before it",
                            path=path, layer_index=layer)]
        expected += _pad(t.n_bytes, header.alignment)
    return []


def _trailing(header: GGUFHeader, path: str, layer: int | None) -> list[Finding]:
    """A fragment is its header plus its tensors: bytes past the last padded end are never
    read by a loader and can carry anything."""
    if header.file_size is None:
        return []
    end = header.data_offset + max((_pad(t.offset + t.n_bytes, header.alignment)
                                    for t in header.tensors), default=0)
    if header.file_size <= end:
        return []
    return [finding("gguf_trailing_bytes", f"{path}: {header.file_size - end} byte(s) follow "
                    f"the end of the tensor data at byte {end}; no loader reads them",
                    path=path, layer_index=layer)]


def _out_of_bounds(header: GGUFHeader, path: str, layer: int | None) -> Iterator[Finding]:
    """One finding per file: a truncated file puts every later tensor past its end, and one
    cause is one finding (the tensors are named in it)."""
    if header.file_size is None:
        return
    past = [(header.data_offset + t.offset + t.n_bytes, t.name) for t in header.tensors
            if header.data_offset + t.offset + t.n_bytes > header.file_size]
    if not past:
        return
    furthest = max(end for end, _ in past)
    names = [repr(name) for _, name in sorted(past)]
    shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
    subject = f"tensor {names[0]} data ends" if len(past) == 1 else \
        f"{len(past)} tensors' data end"
    yield finding("gguf_tensor_out_of_bounds", f"{path}: {subject} past the end of the "
                  f"{header.file_size}-byte file (the header places data up to byte "
                  f"{furthest}; the file is truncated or its header is wrong): {shown}",
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
