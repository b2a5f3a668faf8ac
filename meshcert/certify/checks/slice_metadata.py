"""The keys the writers leave in a fragment's metadata: `skippy.slice.*` and stale `split.*`.

v1 (`skippy-model-package write-package`, writer.md): every fragment records the slice it was
cut as, `skippy.slice.stage_index` (i32: 0 metadata, 1 embeddings, 2 output, 1000+i for layer
i), `layer_start`/`layer_end` (i32: layer i is i..i+1, output L..L, metadata and embeddings
0..0) and `include_embeddings`/`include_output` (bool, true only for the embeddings / output
file). When present they must describe the role the manifest gives the file; a key that is
absent is not required (other writers do not write them).

Any format: `split.no`, `split.count`, `split.tensors.count` left in a fragment (older builds
cut from a sharded source kept them) make llama.cpp look for sibling shards when a stage is
composed from it: a warning.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from meshcert.certify.checks import MANIFEST_READ, register
from meshcert.certify.formats.v2_carrier import SPLIT_KEYS
from meshcert.certify.manifest_model import is_int, layer_count
from meshcert.certify.package_gguf.fragments import Fragment, fragments, preview
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding

SLICE_PREFIX = "skippy.slice."
INT32, BOOL = 5, 7
TYPE_NAMES = {0: "u8", 1: "i8", 2: "u16", 3: "i16", 4: "u32", 5: "i32", 6: "f32", 7: "bool",
              8: "string", 9: "array", 10: "u64", 11: "i64", 12: "f64"}
STAGE_INDEX = {"shared.metadata": 0, "shared.embeddings": 1, "shared.output": 2}
LAYER_STAGE_BASE = 1000


def expected_slice(frag: Fragment, total: int | None) -> dict[str, tuple[int, Any]] | None:
    """key -> (GGUF type, value) the v1 writer records for the fragment's manifest role (None
    when the role has no slice, or its layer index is unusable). An output file's range needs
    `layer_count`; without it only its other keys are expected."""
    role, layer = frag.role, frag.layer_index
    start: int | None
    end: int | None
    if role == "layer":
        if layer is None:
            return None
        index, start, end = LAYER_STAGE_BASE + layer, layer, layer + 1
    elif role in STAGE_INDEX:
        index = STAGE_INDEX[role]
        start = end = total if role == "shared.output" else 0
    else:
        return None
    out: dict[str, tuple[int, Any]] = {"stage_index": (INT32, index),
                                       "include_embeddings": (BOOL, role == "shared.embeddings"),
                                       "include_output": (BOOL, role == "shared.output")}
    if start is not None:
        out |= {"layer_start": (INT32, start), "layer_end": (INT32, end)}
    return {SLICE_PREFIX + k: v for k, v in out.items()}


@register("slice_metadata", order=326, codes=["slice_metadata_mismatch"], formats=["v1"])
def check_slice_metadata(view: PackageView) -> Iterator[Finding]:
    total = layer_count(view.manifest) if view.manifest is not None else None
    for frag in fragments(view):  # projectors are copied whole, not sliced
        expected = expected_slice(frag, total if is_int(total) else None)
        if expected is None:
            continue
        kv, types = frag.header.kv, frag.header.kv_types
        for key, (vtype, value) in expected.items():
            if key not in kv:
                continue
            found, found_type = kv[key], types.get(key)
            if found_type != vtype or found != value:
                yield finding("slice_metadata_mismatch", f"{frag.path}: {key} is "
                              f"{_shown(found, found_type)} but the manifest's "
                              f"{_role(frag)} needs {_shown(value, vtype)}", path=frag.path,
                              layer_index=frag.layer_index)


@register("stale_split_metadata", order=327, codes=["stale_split_metadata"],
          runs_when=[MANIFEST_READ])
def check_stale_split_metadata(view: PackageView) -> Iterator[Finding]:
    """One warning per set of split.* values, naming the fragments that carry it (files
    inspected without a package are left alone: a gguf-split shard carries them by right)."""
    if view.manifest is None:
        return
    by_values: dict[tuple[tuple[str, str], ...], list[str]] = defaultdict(list)
    for frag in fragments(view):
        left = tuple((k, repr(frag.header.kv[k])) for k in SPLIT_KEYS if k in frag.header.kv)
        if left:
            by_values[left].append(frag.path)
    for values, paths in by_values.items():
        shown = ", ".join(f"{k} = {v}" for k, v in values)
        yield finding("stale_split_metadata", f"{len(paths)} fragment(s) still carry {shown} "
                      f"from a sharded source ({preview(paths, 3)}): llama.cpp looks for sibling "
                      "shards when a stage is composed from them", path=paths[0])


def _role(frag: Fragment) -> str:
    return f"layer {frag.layer_index}" if frag.role == "layer" else frag.role


def _shown(value: Any, vtype: int | None) -> str:
    text = str(value).lower() if isinstance(value, bool) else repr(value)
    return f"{text} ({TYPE_NAMES.get(vtype, vtype) if vtype is not None else 'absent'})"
