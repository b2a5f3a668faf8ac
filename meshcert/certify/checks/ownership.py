"""Tensor ownership across the package: each owned tensor in exactly one, the right, artifact.

Owned tensors are the layers', the embeddings', the final norm's and the output head's
(`meshcert.core.gguf.names.tensor_role`). A layer file holds only ``blk.<its index>.*`` among them;
shared files hold no layer tensors; the metadata file holds none at all; embeddings, output and
each layer hold the tensors their role requires. Metadata-role tensors (rope_freqs.weight, ...)
are owned by no artifact: the real v1 writer copies them into every fragment, so they are left
out here and `metadata_tensor_copies` checks that the copies agree. Projectors are not owned
model tensors and are left out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from meshcert.certify.checks import register
from meshcert.certify.package_gguf.fragments import (
    METADATA_ROLE,
    Fragment,
    fragments,
    package_architecture,
    preview,
)
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.names import is_metadata_role, layer_of, required_tensors


@register("tensor_ownership", order=320, codes=[
    "tensor_in_wrong_layer", "tensor_duplicated_across_artifacts", "metadata_has_tensors",
    "missing_required_tensor",
], formats=["v1"])
def check_tensor_ownership(view: PackageView) -> Iterator[Finding]:
    frags = fragments(view)
    for frag in frags:
        yield from _placement(frag)
    yield from _duplicates(frags)
    yield from _required(frags)


def _owned(frag: Fragment) -> list[str]:
    return [n for n in frag.tensor_names() if not is_metadata_role(n)]


def _placement(frag: Fragment) -> Iterator[Finding]:
    names = _owned(frag)
    if frag.role == METADATA_ROLE:
        if names:
            yield finding("metadata_has_tensors", f"{frag.path} holds {len(names)} tensor(s): "
                          f"{preview(names)}", path=frag.path)
        return
    if frag.role == "layer":
        own = frag.layer_index
        if own is None:
            return  # the manifest entry has no usable layer_index; the manifest checks say so
        wrong = [n for n in names if layer_of(n) != own]
        if wrong:
            yield finding("tensor_in_wrong_layer", f"{frag.path} is layer {own} but holds "
                          f"{len(wrong)} tensor(s) that are not blk.{own}.*: {preview(wrong)}",
                          path=frag.path, layer_index=own)
        return
    layer_tensors = [n for n in names if layer_of(n) is not None]
    if layer_tensors:
        yield finding("tensor_in_wrong_layer", f"{frag.path} is a shared file but holds "
                      f"{len(layer_tensors)} layer tensor(s): {preview(layer_tensors)}",
                      path=frag.path)


def _duplicates(frags: list[Fragment]) -> Iterator[Finding]:
    """One finding per set of artifacts sharing tensors, naming the tensors they share."""
    holders: dict[str, list[str]] = defaultdict(list)
    for frag in frags:
        for name in dict.fromkeys(_owned(frag)):
            holders[name].append(frag.path)
    shared_by: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for name, paths in holders.items():
        if len(paths) > 1:
            shared_by[tuple(paths)].append(name)
    for holder_paths, names in shared_by.items():
        layers = {layer_of(n) for n in names}
        yield finding("tensor_duplicated_across_artifacts", f"{len(names)} tensor(s) appear in "
                      f"{len(holder_paths)} artifacts ({', '.join(holder_paths)}): "
                      f"{preview(names)}", path=holder_paths[-1],
                      layer_index=layers.pop() if len(layers) == 1 else None)


def _required(frags: list[Fragment]) -> Iterator[Finding]:
    arch = package_architecture(frags)
    where: dict[str, list[str]] = defaultdict(list)
    for frag in frags:
        for name in frag.tensor_names():
            where[name].append(frag.path)
    for frag in frags:
        present = set(frag.tensor_names())
        for name in required_tensors(frag.header.architecture or arch, frag.role,
                                     frag.layer_index):
            if name in present:
                continue
            elsewhere = f" (found in {', '.join(where[name])})" if where.get(name) else ""
            yield finding("missing_required_tensor", f"{frag.path} lacks {name}{elsewhere}",
                          path=frag.path, layer_index=frag.layer_index)
