"""Gather facts about `--source SRC.gguf` (all the I/O; checks/source_parity.py compares).

The source is one GGUF file or a split set named by any of its shards
(``name-00001-of-00003.gguf``: every shard is read). For each source file this hashes the whole
file and, in the same sequential pass, the data bytes of every tensor; for each package fragment
it hashes every tensor's bytes the same way, so the check compares digests, never bytes.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping

from meshcert.certify.package_gguf.fragments import fragments
from meshcert.certify.package_gguf.source_facts import (
    SOURCE_FACTS_KEY,
    SourceFacts,
    SourceShard,
    SourceTensor,
)
from meshcert.certify.view import PackageView
from meshcert.core.gguf.model import GGUFHeader, HeaderProblem
from meshcert.core.gguf.reader import read_header_file
from meshcert.core.hashing import CHUNK

SPLIT_NAME = re.compile(r"^(?P<stem>.+)-(?P<index>\d{5})-of-(?P<count>\d{5})\.gguf$")

Ranges = Mapping[str, tuple[int, int]]  # key -> (absolute start, length)


def attach_source(view: PackageView, path: str, known: SourceFacts | None = None) -> None:
    """Read and hash the source model (and the package's tensor bytes); never raises.
    `known`: facts a writer gathered while streaming the source into this package (the
    source files' sizes and digests, every tensor's digest on both sides), used as they are."""
    facts = known if known is not None else collect_source_facts(path, view)
    view.source_facts[SOURCE_FACTS_KEY] = facts
    if facts.shards:
        view.source_header = facts.shards[0].header
    else:
        view.source_header = HeaderProblem("check_not_run", facts.error or "no source file", None)


def shard_paths(path: str) -> tuple[list[str], str | None]:
    """Every file of the set `path` belongs to, and an error naming missing shards."""
    directory, name = os.path.split(path)
    match = SPLIT_NAME.match(name)
    if match is None:
        return [path], None
    count = int(match.group("count"))
    if count < 1 or int(match.group("index")) > count:
        return [path], f"{name}: shard index outside 1..{count}"
    paths = [os.path.join(directory, f"{match.group('stem')}-{i:05d}-of-{count:05d}.gguf")
             for i in range(1, count + 1)]
    missing = [os.path.basename(p) for p in paths if not os.path.isfile(p)]
    return paths, f"missing source shard(s): {', '.join(missing)}" if missing else None


def collect_source_facts(path: str, view: PackageView) -> SourceFacts:
    facts = SourceFacts(given_path=path)
    if not os.path.isfile(path):
        facts.error = f"{path} is not a readable file"
        return facts
    paths, error = shard_paths(path)
    if error is not None:
        facts.error = error
        return facts
    for index, shard_path in enumerate(paths):
        facts.shards.append(_read_shard(shard_path, index, facts))
    if view.local_dir is not None:
        _hash_package_tensors(view, view.local_dir, facts)
    return facts


def _read_shard(path: str, index: int, facts: SourceFacts) -> SourceShard:
    header = read_header_file(path)
    if not isinstance(header, GGUFHeader):
        return SourceShard(path, header, error=header.message)
    new = [t for t in header.tensors if t.name not in facts.tensors]
    ranges = {t.name: (header.data_offset + t.offset, t.n_bytes) for t in new}
    try:
        size, file_sha, digests = hash_file_and_ranges(path, ranges)
    except OSError as exc:
        return SourceShard(path, header, error=f"cannot hash {path}: {exc.strerror or exc}")
    for t in new:
        facts.tensors[t.name] = SourceTensor(t.name, index, t.ggml_type, t.shape, t.n_bytes,
                                             digests.get(t.name))
    return SourceShard(path, header, size=size, sha256=file_sha)


def package_tensor_ranges(view: PackageView) -> dict[str, dict[str, tuple[int, int]]]:
    """artifact path -> {tensor name: (absolute start, length)} of every tensor the package
    stores: v1 from each fragment's own directory, v2 through the carrier's locators (plus
    every tensor a payload artifact's own directory lists, so a foreign one is seen too)."""
    out: dict[str, dict[str, tuple[int, int]]] = {}
    tensor_catalog = view.tensor_catalog()
    for frag in fragments(view):
        if view.package_format == "v2" and frag.role == "shared.metadata":
            continue  # the carrier's directory points at the payload artifacts, not at itself
        out[frag.path] = {t.name: (frag.header.data_offset + t.offset, t.n_bytes)
                          for t in frag.header.tensors}
    if tensor_catalog is not None:
        for t in tensor_catalog.tensors:
            if t.artifact is not None and isinstance(t.artifact.path, str):
                out.setdefault(t.artifact.path, {})[t.name] = (t.offset, t.size)
    return out


def _hash_package_tensors(view: PackageView, root: str, facts: SourceFacts) -> None:
    for path, ranges in package_tensor_ranges(view).items():
        try:
            _, _, digests = hash_file_and_ranges(os.path.join(root, *path.split("/")), ranges)
        except OSError as exc:
            facts.problems.append(f"cannot hash package file {path}: {exc.strerror or exc}")
            continue
        for name, digest in digests.items():
            facts.package_tensor_digest[(path, name)] = digest
    facts.package_data_hashed = True


def hash_file_and_ranges(path: str, ranges: Ranges) -> tuple[int, str, dict[str, str | None]]:
    """(size, sha256 of the file, sha256 of each byte range) in one sequential read.

    A range that does not lie wholly inside the file gets None. Ranges may overlap. Memory is
    one CHUNK buffer plus one hash object per range, whatever the file size.
    """
    ordered = sorted(ranges.items(), key=lambda item: item[1][0])
    digests = {key: hashlib.sha256() for key in ranges}
    whole = hashlib.sha256()
    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    active: list[tuple[str, int, int]] = []
    upcoming = 0
    position = 0
    with open(path, "rb", buffering=0) as handle:
        while True:
            n = handle.readinto(buffer)
            if not n:
                break
            chunk = view[:n]
            whole.update(chunk)
            end = position + n
            while upcoming < len(ordered) and ordered[upcoming][1][0] < end:
                key, (start, length) = ordered[upcoming]
                active.append((key, start, start + length))
                upcoming += 1
            still: list[tuple[str, int, int]] = []
            for key, start, stop in active:
                low, high = max(start, position), min(stop, end)
                if high > low:
                    digests[key].update(chunk[low - position:high - position])
                if stop > end:
                    still.append((key, start, stop))
            active = still
            position = end
    size = position
    out = {key: (digests[key].hexdigest() if start >= 0 and start + length <= size else None)
           for key, (start, length) in ranges.items()}
    return size, whole.hexdigest(), out
