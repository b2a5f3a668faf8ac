"""Fragments against each other, the manifest and the gguf library's architecture tables.

The package's architecture is shared/metadata.gguf's ``general.architecture`` (the most common
one when that file is unreadable). Findings are grouped (one per distinct wrong value or per
unexpected name pattern) so a 94-layer package with one mistake repeated stays readable.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from meshcert.certify.checks import register
from meshcert.certify.manifest_model import is_int, layer_count
from meshcert.certify.package_gguf.fragments import (
    Fragment,
    capped,
    fragments,
    package_architecture,
    preview,
)
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.names import is_known_tensor, layer_of, name_pattern


@register("gguf_architecture", order=330, codes=[
    "architecture_mismatch", "layer_count_mismatch", "activation_width_mismatch",
    "unexpected_tensor_for_architecture",
])
def check_gguf_architecture(view: PackageView) -> Iterator[Finding]:
    frags = fragments(view)
    arch = package_architecture(frags)
    if arch is None:
        return
    yield from _architecture_mismatch(frags, arch)
    manifest = view.manifest
    if manifest is not None:
        yield from _manifest_value(frags, f"{arch}.block_count", layer_count(manifest),
                                   "layer_count", "layer_count_mismatch")
        width = manifest.get("activation_width")
        if is_int(width) and width > 0:
            yield from _manifest_value(frags, f"{arch}.embedding_length", width,
                                       "activation_width", "activation_width_mismatch")
    yield from capped(list(_unexpected_tensors(frags, arch)))


def _architecture_mismatch(frags: list[Fragment], arch: str) -> Iterator[Finding]:
    for frag in frags:
        found = frag.header.architecture
        if found != arch:
            said = f"says {found!r}" if found is not None else "has no general.architecture"
            yield finding("architecture_mismatch", f"{frag.path} {said}; the package's "
                          f"architecture is {arch!r}", path=frag.path,
                          layer_index=frag.layer_index)


def _manifest_value(frags: list[Fragment], key: str, declared: int | None, field: str,
                    code: str) -> Iterator[Finding]:
    """One finding per distinct value of `key` that differs from the manifest's `field`."""
    if declared is None:
        return
    by_value: dict[str, list[str]] = defaultdict(list)
    for frag in frags:
        if key in frag.header.kv:
            value = frag.header.kv[key]
            if not (is_int(value) and value == declared):
                by_value[repr(value)].append(frag.path)
    for value, paths in by_value.items():
        yield finding(code, f"manifest {field} is {declared} but {key} is {value} in "
                      f"{len(paths)} fragment(s): {preview(paths, 3)}", path=paths[0])


def _unexpected_tensors(frags: list[Fragment], package_arch: str) -> Iterator[Finding]:
    """Names the gguf library does not list for the fragment's architecture, by name pattern."""
    by_pattern: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for frag in frags:
        arch = frag.header.architecture or package_arch
        for name in frag.tensor_names():
            if is_known_tensor(arch, name) is False:
                by_pattern[(arch, name_pattern(name))].append((name, frag.path))
    for (arch, pattern), hits in by_pattern.items():
        names = sorted({n for n, _ in hits})
        layers = {layer_of(n) for n in names}
        yield finding("unexpected_tensor_for_architecture", f"{pattern} ({len(hits)} tensor(s): "
                      f"{preview(names, 3)}) is not a tensor name the gguf library lists for "
                      f"architecture {arch!r}", path=hits[0][1],
                      layer_index=layers.pop() if len(layers) == 1 else None)
