"""SHA-256 of a fragment's metadata-role tensors, read through a ByteSource.

The v1 writer copies every metadata-role tensor (rope_freqs.weight, ...) into every fragment,
and `metadata_tensor_copies` checks that the copies are byte-identical, so the sources hash
these tensors while they read the headers. They are small (Llama 3's rope_freqs.weight is 256
bytes) and usually lie right after the header, inside the block the header read already
fetched (`meshcert.core.byte_source.TailCache`), so over HTTP they seldom cost a request. A copy
over the budget, or whose bytes cannot be read, is recorded with the reason, never skipped silently:
the check reports it as not compared.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from meshcert.core.byte_source import ByteSource
from meshcert.core.gguf.model import GGUFHeader, TensorInfo
from meshcert.core.gguf.names import is_metadata_role

MAX_TENSOR_BYTES = 16 << 20  # a metadata-role copy larger than this is not hashed
MAX_FRAGMENT_BYTES = 32 << 20  # nor more than this per fragment
READ_CHUNK = 4 << 20


@dataclass
class FragmentDigests:
    """One fragment's metadata-role tensors: the SHA-256 of each one's data bytes, or why
    they were not hashed."""

    sha256: dict[str, str] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)


def metadata_role_tensors(header: GGUFHeader) -> list[TensorInfo]:
    return [t for t in header.tensors if is_metadata_role(t.name)]


def digest_metadata_tensors(source: ByteSource, header: GGUFHeader, *,
                            errors: tuple[type[BaseException], ...] = (OSError,),
                            budget: int = MAX_FRAGMENT_BYTES) -> FragmentDigests:
    """Hash the data of every metadata-role tensor of `header` from `source`; a read failure
    of one of the `errors` kinds is recorded as the reason, never raised."""
    out = FragmentDigests()
    left = budget
    for t in metadata_role_tensors(header):
        start = header.data_offset + t.offset
        if t.n_bytes <= 0:
            out.unread[t.name] = "its ggml type is unknown, so its size is too"
        elif t.n_bytes > min(MAX_TENSOR_BYTES, left):
            out.unread[t.name] = (f"its {t.n_bytes} bytes are over the "
                                  f"{min(MAX_TENSOR_BYTES, budget)}-byte budget for hashing copies")
        elif header.file_size is not None and start + t.n_bytes > header.file_size:
            out.unread[t.name] = "its data lies beyond the end of the file"
        else:
            left -= t.n_bytes
            try:
                digest = _hash_range(source, start, t.n_bytes)
            except errors as exc:
                out.unread[t.name] = f"reading its bytes failed: {exc}"
                continue
            if digest is None:
                out.unread[t.name] = "the file ends inside its data"
            else:
                out.sha256[t.name] = digest
    return out


def _hash_range(source: ByteSource, start: int, length: int) -> str | None:
    digest = hashlib.sha256()
    position, end = start, start + length
    while position < end:
        data = source.read(position, min(READ_CHUNK, end - position))
        if not data:
            return None
        digest.update(data)
        position += len(data)
    return digest.hexdigest()
