"""Re-open a GGUF with llama.cpp's own parser, in a worker process, as a node would.

`gguf_init_from_file(path, {no_alloc=true})` parses the header, KV and tensor directory the
way llama.cpp does before loading, without allocating tensor memory. On top, every tensor's
data range must lie inside the file (the parser leaves that to the loader). It runs in the GGUF
parser's worker (`llama_gguf_worker.py`), never in this process: a parser that crashes on the
file is a `LlamaCppCrashed` carrying how it died, not a dead certifier.
"""

from __future__ import annotations

import os
from pathlib import Path

from meshcert.certify.processes.death import WorkerDeath
from meshcert.certify.workers.llama_gguf import LlamaCppGGUF
from meshcert.core.errors import ErrorKind, MeshcertError


class LlamaParserUnavailable(MeshcertError, RuntimeError):
    """llama-cpp-python is missing or its library cannot be loaded (not a package fault)."""

    kind = ErrorKind.INCOMPLETE


class LlamaCppCrashed(MeshcertError, RuntimeError):
    """llama.cpp's worker died on the file (not a verdict on the file)."""

    kind = ErrorKind.INCOMPLETE

    def __init__(self, death: WorkerDeath) -> None:
        super().__init__(death.describe())
        self.death = death


def reopen(path: str, timeout_s: float = 120.0) -> tuple[int, int]:
    """(tensor count, KV count) as llama.cpp parses `path`; raises ValueError when it does
    not parse or a tensor's data lies past the end of the file."""
    facts = LlamaCppGGUF(split=False, bounds=True, timeout_s=timeout_s).check(
        {path: Path(path)})
    if facts.unavailable:
        raise LlamaParserUnavailable(facts.unavailable)
    verdict = facts.verdicts[path]
    if verdict.death is not None:
        raise LlamaCppCrashed(verdict.death)
    if not verdict.accepted:
        detail = "; ".join(line.strip() for line in verdict.log.splitlines() if line.strip())
        raise ValueError(f"llama.cpp's GGUF parser rejects {path}"
                         + (f": {detail[:300]}" if detail else ""))
    size = os.path.getsize(path)
    if verdict.tensor_end is not None and verdict.tensor_end > size:
        raise ValueError(f"{path}: a tensor ends at byte {verdict.tensor_end}, past the "
                         f"file's {size} bytes")
    return verdict.n_tensors or 0, verdict.n_kv or 0
