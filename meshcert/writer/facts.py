"""The digests the writer computed, in the shapes certification reads, so certifying the
package just written hashes nothing again:

- the package files' SHA-256 as a `meshcert.core.hashing.VerifyCache` file (keyed on path, size,
  mtime, ctime and inode: a file touched since is hashed again), given as `verify_cache`;
- the `--source` facts (`meshcert.certify.package_gguf.source_facts.SourceFacts`): each source
  file's size and SHA-256, and every tensor's xxh3-128 on both sides (the source side taken as
  the bytes were read, the package side as they were handed to the artifacts: see
  meshcert.writer.stream), given as `CertRequest.source_facts`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from meshcert.certify.manifest_parse import MANIFEST_NAME
from meshcert.certify.package_gguf.source_facts import SourceFacts, SourceShard, SourceTensor
from meshcert.core.hashing import VerifyCache
from meshcert.writer.artifact import PackagePlan
from meshcert.writer.stream import TENSOR_DIGEST, StreamState


def source_facts(plan: PackagePlan, state: StreamState, given: str) -> SourceFacts:
    facts = SourceFacts(given_path=given, tensor_digest=TENSOR_DIGEST)
    for i, f in enumerate(plan.source.files):
        facts.shards.append(SourceShard(f.location, f.header, size=f.size,
                                        sha256=state.source_sha256[i]))
    for t in plan.source.tensors:
        info = t.info
        facts.tensors[t.name] = SourceTensor(t.name, t.shard, info.ggml_type, info.shape,
                                             info.n_bytes, state.tensor_digest[t.name])
    for a in plan.artifacts:
        for p in a.placements:
            facts.package_tensor_digest[(a.path, p.name)] = state.package_tensor_digest[p.name]
    facts.package_data_hashed = True
    return facts


def write_verify_cache(cache_file: Path, root: Path, state: StreamState) -> None:
    """The digests the writer took, for the package as written (its manifest is its identity,
    as the certifier's cache lookups key it: meshcert.certify.sources.local)."""
    manifest = (root / MANIFEST_NAME).read_bytes()
    cache = VerifyCache(str(cache_file), package=hashlib.sha256(manifest).hexdigest())
    for path, result in state.artifacts.items():
        cache.put(str(root / path), result.sha256)
    cache.save()
