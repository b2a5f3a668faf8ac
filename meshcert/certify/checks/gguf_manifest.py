"""Each fragment's tensors against its manifest entry (tensor_count, tensor_bytes)."""

from __future__ import annotations

from collections.abc import Iterator

from meshcert.certify.checks import register
from meshcert.certify.package_gguf.fragments import fragments
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding


@register("gguf_manifest_counts", order=310,
          codes=["tensor_count_mismatch", "tensor_bytes_mismatch"], formats=["v1"])
def check_gguf_manifest_counts(view: PackageView) -> Iterator[Finding]:
    """tensor_bytes is the sum of the tensors' data sizes (type and shape), padding excluded."""
    for frag in fragments(view, projectors=True):
        tensors = frag.header.tensors
        declared_count = frag.artifact.declared_int("tensor_count")
        if declared_count is not None and declared_count != len(tensors):
            yield finding("tensor_count_mismatch", f"{frag.path}: the manifest declares "
                          f"tensor_count {declared_count}, the fragment holds {len(tensors)}",
                          path=frag.path, layer_index=frag.layer_index)
        declared_bytes = frag.artifact.declared_int("tensor_bytes")
        sized = all(t.n_bytes > 0 or 0 in t.shape for t in tensors)  # unknown types give 0
        actual = sum(t.n_bytes for t in tensors)
        if declared_bytes is not None and sized and declared_bytes != actual:
            yield finding("tensor_bytes_mismatch", f"{frag.path}: the manifest declares "
                          f"tensor_bytes {declared_bytes}, the fragment's tensors take {actual}",
                          path=frag.path, layer_index=frag.layer_index)
