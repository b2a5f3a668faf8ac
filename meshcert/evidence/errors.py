"""The evidence errors a user can fix (a setting, a --backend, a --package, a decisions file, a
history source, a run plan): each exits 2 with `error: <message>`, nothing evaluated."""

from __future__ import annotations

from meshcert.core.errors import ErrorKind, MeshcertError


class EvidenceError(MeshcertError, ValueError):
    """An evidence input that cannot be used as given; the message says which and why."""

    kind = ErrorKind.USAGE
