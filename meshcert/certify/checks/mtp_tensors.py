"""Native MTP layers named by the manifest must hold NextN/MTP tensors (``blk.N.nextn.*``).

The manifest-only speculative rules (types, depths, ranges) live in checks/speculative.py; this
check adds what only the GGUF headers can tell. Layers out of range, missing or unreadable are
reported by other checks and skipped here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from meshcert.certify.checks import MANIFEST_READ, applicable, register
from meshcert.certify.manifest_model import generation, is_int
from meshcert.certify.package_gguf.fragments import fragments
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.names import is_nextn, layer_of

NATIVE_MTP = "native-mtp"


def native_mtp_layers(manifest: dict[str, Any]) -> dict[int, list[str]]:
    """Layer index -> the proposers/strategies of type native-mtp that name it."""
    owners: dict[int, list[str]] = defaultdict(list)
    spec = (generation(manifest) or {}).get("speculative_decoding")
    if not isinstance(spec, dict):
        return owners
    for section in ("proposers", "strategies"):
        items = spec.get(section)
        if not isinstance(items, dict):
            continue
        for name, item in items.items():
            if not isinstance(item, dict) or item.get("type") != NATIVE_MTP:
                continue
            indices = item.get("layer_indices")
            for index in indices if isinstance(indices, list) else []:
                if is_int(index) and index >= 0:
                    owners[index].append(f"{section}.{name}")
    return owners


@register("native_mtp_tensors", order=340, codes=["native_mtp_layer_missing_tensors"],
          formats=["v1"], runs_when=[MANIFEST_READ, applicable(
              lambda view: bool(native_mtp_layers(view.manifest or {})),
              "the manifest declares no native-mtp layers")])
def check_native_mtp_tensors(view: PackageView) -> Iterator[Finding]:
    if view.manifest is None:
        return
    owners = native_mtp_layers(view.manifest)
    if not owners:
        return
    by_layer = {f.layer_index: f for f in fragments(view) if f.role == "layer"}
    for index in sorted(owners):
        frag = by_layer.get(index)
        if frag is None:
            continue
        if not any(is_nextn(n) and layer_of(n) == index for n in frag.tensor_names()):
            yield finding("native_mtp_layer_missing_tensors", f"{', '.join(owners[index])} "
                          f"name(s) layer {index} for native MTP, but {frag.path} has no "
                          f"blk.{index}.nextn.* tensors", path=frag.path, layer_index=index)
