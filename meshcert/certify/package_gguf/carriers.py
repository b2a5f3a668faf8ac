"""Every readable GGUF header in a view, in the order findings should name them.

Unlike `meshcert.certify.package_gguf.fragments` this does not need a manifest: a single file
audited on its own
(``headers={path: header}``, no manifest) is one carrier. The metadata fragment comes first,
then manifest order, then any other header by path.
"""

from __future__ import annotations

from dataclasses import dataclass

from meshcert.certify.package_gguf.fragments import METADATA_ROLE, PROJECTOR_ROLE
from meshcert.certify.view import PackageView
from meshcert.core.gguf.model import GGUFHeader


@dataclass(frozen=True)
class Carrier:
    path: str
    header: GGUFHeader
    role: str | None  # the manifest role (shared.metadata, layer, ...), None without a manifest
    layer_index: int | None

    @property
    def is_metadata(self) -> bool:
        return self.role == METADATA_ROLE

    @property
    def is_projector(self) -> bool:
        return self.role == PROJECTOR_ROLE


def carriers(view: PackageView, *, projectors: bool = True) -> list[Carrier]:
    roles: dict[str, tuple[str, int | None]] = {}
    for artifact in view.artifacts():
        if isinstance(artifact.path, str):
            roles.setdefault(artifact.path, (artifact.role, artifact.layer_index))
    order = {path: i for i, path in enumerate(roles)}
    out = [Carrier(path, header, *roles.get(path, (None, None)))
           for path, header in view.headers.items() if isinstance(header, GGUFHeader)]
    out.sort(key=lambda c: (not c.is_metadata, order.get(c.path, len(order)), c.path))
    return [c for c in out if projectors or not c.is_projector]
