"""Re-open a written artifact and compare it with its plan (writer.md, v2 "Sequence").

Only the header is read back: its raw bytes must be the planned ones (so every metadata entry,
tensor name, type, shape and offset is as planned, and as the source's), the directory must list
exactly the planned tensors, and the file must have the planned size. The payload bytes were
hashed on their way from the source (meshcert.writer.stream), so nothing is read twice.
"""

from __future__ import annotations

import os
from pathlib import Path

from meshcert.core.byte_source import LocalFileSource
from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.reader import read_header_and_bytes
from meshcert.writer.artifact import Artifact
from meshcert.writer.errors import Aborted


def verify_written(path: Path, artifact: Artifact) -> GGUFHeader | None:
    """The re-opened header of a GGUF artifact (None for a verbatim copy: a projector, a
    publisher file);
    raises Aborted naming the first difference from the plan."""
    size = os.path.getsize(path)
    if size != artifact.size:
        raise Aborted("verification_failed", f"{artifact.path} is {size} bytes, the plan says "
                      f"{artifact.size}")
    if artifact.verbatim:
        return None
    header, raw = read_header_and_bytes(LocalFileSource(path))
    if not isinstance(header, GGUFHeader):
        raise Aborted("verification_failed", f"{artifact.path} does not re-open as GGUF: "
                      f"{header.message}")
    planned = b"".join(artifact.header_pieces())  # [0, data_offset)
    if raw[:len(planned)] != planned[:len(raw)] or header.data_offset != artifact.data_offset:
        raise Aborted("verification_failed", f"{artifact.path}: the header read back differs "
                      "from the planned one")
    if artifact.directory is None:
        got = [(t.name, t.ggml_type, t.shape, t.offset) for t in header.tensors]
        want = [(p.name, p.source.info.ggml_type, p.source.info.shape, p.offset)
                for p in artifact.placements]
        if got != want:
            raise Aborted("verification_failed", f"{artifact.path}: its tensor directory "
                          "differs from the plan")
    return header
