"""Every copy of every ``tokenizer.*`` key must be byte-identical to metadata.gguf's.

v1 writers repeat the tokenizer and chat templates in fragments, and a node may read any copy,
so a fragment whose copy differs (another template, a patched vocabulary) is what some node
loads although the audited metadata.gguf is clean. The reference is metadata.gguf (else the
first file carrying a ``tokenizer.*`` key: a split set's first shard). A key the reference does
not have is a difference too. Projectors carry their own metadata and are not compared.

Values are compared with their GGUF value types (a u32 ``1`` is not an i32 ``1``) and Python
types (``1`` is not ``1.0`` nor ``True``; floats by their bits, so a NaN equals itself); the
element types of short arrays are not known to the reader, only their values. Long arrays are
compared by element type, length and the reader's digest of their encoded bytes. A key
repeated inside one file is ``gguf_duplicate_key``.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from meshcert.certify.checks import register
from meshcert.certify.package_gguf.carriers import carriers
from meshcert.certify.package_gguf.fragments import capped, preview
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.model import ArraySummary

PREFIX = "tokenizer."


def canonical(value: Any, value_type: int | None = None) -> Any:
    """A hashable form of a header value (and its GGUF value type) that differs whenever the
    encoded values differ."""
    if value_type is not None:
        return (value_type, canonical(value))
    if isinstance(value, ArraySummary):
        return ("array", value.element_type, value.length, value.digest)
    if isinstance(value, list):
        return _canonical_list(value)
    if isinstance(value, float):
        return ("float", struct.pack("<d", value))
    return (type(value).__name__, value)


def _canonical_list(values: list[Any]) -> Any:
    """A list whose items are all of one plain type (a short vocabulary, its scores or token
    types: the common case) in one C-level pass; any other list item by item. Both forms are
    tagged, so a list can only equal a list of the same element type and values."""
    kinds = set(map(type, values))
    if len(kinds) == 1:
        kind = kinds.pop()
        if kind is float:  # by their bits, as single floats are
            return ("floats", struct.pack(f"<{len(values)}d", *values))
        if kind in (str, int, bool, bytes):
            return ("list of", kind.__name__, tuple(values))
    return ("list", tuple(canonical(v) for v in values))


def describe(value: Any) -> str:
    if isinstance(value, ArraySummary):
        return f"an array of {value.length} items (type {value.element_type})"
    if isinstance(value, list):
        return f"an array of {len(value)} items"
    if isinstance(value, str):
        return f"a {len(value)}-character string"
    return repr(value)


@register("tokenizer_copies", order=345, codes=["tokenizer_copies_differ"])
def check_tokenizer_copies(view: PackageView) -> Iterator[Finding]:
    cs = carriers(view, projectors=False)
    ref = next((c for c in cs if c.is_metadata), None) or next(
        (c for c in cs if any(k.startswith(PREFIX) for k in c.header.kv)), None)
    if ref is None:
        return
    reference = {k: v for k, v in ref.header.kv.items() if k.startswith(PREFIX)}
    types = ref.header.kv_types
    wanted = {k: canonical(v, types.get(k)) for k, v in reference.items()}
    differ: dict[str, list[tuple[str, Any]]] = defaultdict(list)  # key -> (path, value)
    for carrier in cs:
        if carrier is ref:
            continue
        for key, value in carrier.header.kv.items():
            if key.startswith(PREFIX) and (
                    key not in wanted
                    or canonical(value, carrier.header.kv_types.get(key)) != wanted[key]):
                differ[key].append((carrier.path, value))
    out: list[Finding] = []
    for key, hits in differ.items():
        paths = [p for p, _ in hits]
        theirs = describe(hits[0][1])
        ours = f"{describe(reference[key])} in {ref.path}" if key in reference else \
            f"absent from {ref.path}"
        out.append(finding("tokenizer_copies_differ", f"{key} differs from the reference copy "
                           f"({ours}) in {len(paths)} file(s): {preview(paths, 3)} (e.g. "
                           f"{theirs})", path=paths[0]))
    yield from capped(out)
