"""The one error of mesh-llm's package catalog: reading it (catalog certify) or changing an
entry of it (publishing) found it unusable."""

from __future__ import annotations

from meshcert.core.errors import ErrorKind, MeshcertError


class CatalogError(MeshcertError, ValueError):
    """The catalog, or the entry to change, cannot be used as it is (a usage error).
    `incomplete`: the catalog could not be read at all (the Hub failed), so no verdict is
    possible, not a bad catalog (of kind incomplete)."""

    kind = ErrorKind.USAGE

    def __init__(self, message: str, *, incomplete: bool = False) -> None:
        super().__init__(message)
        self.incomplete = incomplete
        if incomplete:
            self.kind = ErrorKind.INCOMPLETE
