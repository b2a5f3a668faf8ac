"""The one error of mesh-llm's package catalog: reading it (catalog certify) or changing an
entry of it (publishing) found it unusable."""

from __future__ import annotations


class CatalogError(ValueError):
    """The catalog, or the entry to change, cannot be used as it is. `incomplete`: the catalog
    could not be read at all (the Hub failed), so no verdict is possible, not a bad catalog."""

    def __init__(self, message: str, *, incomplete: bool = False) -> None:
        super().__init__(message)
        self.incomplete = incomplete
