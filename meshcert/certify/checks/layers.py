"""layers[]: exactly one entry per index 0..layer_count-1 (package.md, "Manifest")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from meshcert.certify.checks import MANIFEST_READ, register
from meshcert.certify.manifest_model import is_int, layer_count
from meshcert.certify.manifest_parse import MANIFEST_NAME
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding


@register("layers", order=20, codes=[
    "layer_index_out_of_range", "missing_layer", "duplicate_layer", "invalid_manifest_field",
], formats=["v1"], runs_when=[MANIFEST_READ])
def layers(view: PackageView) -> Iterator[Finding]:
    m = view.manifest
    if m is None or not isinstance(m.get("layers"), list):
        return
    total = layer_count(m)
    indexes: list[int] = []
    for i, entry in enumerate(m["layers"]):
        if not isinstance(entry, dict):
            yield finding("invalid_manifest_field", f"layers[{i}] must be an artifact object",
                          path=MANIFEST_NAME)
            continue
        idx = entry.get("layer_index")
        if not is_int(idx):
            yield finding("invalid_manifest_field",
                          f"layers[{i}].layer_index must be an integer, found {idx!r}",
                          path=MANIFEST_NAME)
            continue
        if idx < 0 or (total is not None and idx >= total):
            yield finding("layer_index_out_of_range",
                          f"layers[{i}].layer_index {idx} is outside 0..{(total or 0) - 1}",
                          path=entry.get("path") if isinstance(entry.get("path"), str)
                          else MANIFEST_NAME, layer_index=idx)
        indexes.append(idx)
    for idx, n in sorted(Counter(indexes).items()):
        if n > 1:
            yield finding("duplicate_layer", f"layer_index {idx} has {n} entries",
                          path=MANIFEST_NAME, layer_index=idx)
    if total is not None:
        present = set(indexes)
        for idx in range(total):
            if idx not in present:
                yield finding("missing_layer", f"no layers[] entry for layer_index {idx}",
                              path=MANIFEST_NAME, layer_index=idx)
