"""A Hub source: `org/repo[@rev]:QUANT` or `hf://org/repo[@rev]/path.gguf`, read in place.

The revision is resolved to a commit first (one `model_info(files_metadata=True)`, which also
lists every file with its size and LFS sha256), and every byte is then read at that commit with
HTTP range requests through certify's Hub client (`meshcert.core.hub.files.HubFiles`): the headers
once, the tensor data once, front to back, straight into the artifacts. Nothing is downloaded
whole and no copy of the source lands on disk. `QUANT` selects the GGUF file (or split set)
whose path names it; files whose base name starts with `mmproj` are projectors, never quants.
Every Hub failure becomes a Refused (before writing) or an Aborted write (while streaming).

With `publisher_metadata`, those of mesh-llm's five publisher files (`config.json`, ...) present
at the repo's root at the resolved commit are read whole (capped, checked against the listing's
size and git blob id) into `SourceModel.publisher_files`, as mesh-llm's HF job passes every one
of them present in the pinned snapshot.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from meshcert.certify.formats.publisher import PUBLISHER_FILES
from meshcert.certify.view import MAX_PUBLISHER_FILE_BYTES
from meshcert.core.errors import Refused
from meshcert.core.hub.api import HubApi
from meshcert.core.hub.errors import HubError, Redactor
from meshcert.core.hub.files import HubFiles
from meshcert.core.hub.listing import RemoteFile
from meshcert.core.hub.range_source import HubRangeSource
from meshcert.core.hub.settings import HubSettings
from meshcert.core.hub.stats import TransferCounter
from meshcert.writer.errors import Aborted
from meshcert.writer.publisher import BAD_FILE, PublisherInput
from meshcert.writer.source import (
    SourceFile,
    SourceModel,
    assemble,
    read_file_header,
    read_projector,
    shard_locations,
)

_REPO = r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*"
HF_FILE = re.compile(rf"^hf://(?P<repo>{_REPO})(?:@(?P<rev>[^/]+))?/(?P<path>.+\.gguf)$")
QUANT = re.compile(rf"^(?P<repo>{_REPO})(?:@(?P<rev>[^:@]+))?:(?P<quant>[A-Za-z0-9][\w.-]*)$")
SHARD_SUFFIX = re.compile(r"-\d{5}-of-\d{5}$")


@dataclass(frozen=True)
class Coordinate:
    repo: str
    revision: str | None
    quant: str | None = None
    path: str | None = None


def parse_coordinate(text: str) -> Coordinate | None:
    if (m := HF_FILE.match(text)) is not None:
        return Coordinate(m["repo"], m["rev"], path=m["path"])
    if (m := QUANT.match(text)) is not None:
        return Coordinate(m["repo"], m["rev"], quant=m["quant"])
    return None


def default_model_id(text: str) -> str | None:
    """`org/repo:QUANT` as given, or `org/repo:<file stem>` for an hf:// file."""
    c = parse_coordinate(text)
    if c is None:
        return None
    if c.quant is not None:
        return f"{c.repo}:{c.quant}"
    stem = PurePosixPath(c.path or "").name.removesuffix(".gguf")
    return f"{c.repo}:{SHARD_SUFFIX.sub('', stem)}"


def is_projector(path: str) -> bool:
    name = PurePosixPath(path).name.lower()
    return name.startswith("mmproj") and name.endswith(".gguf")


def pick_quant(listing: list[RemoteFile], quant: str) -> str:
    """The one GGUF (or first shard of the one split set) whose path names `quant`."""
    token = re.compile(rf"(?<![A-Za-z0-9]){re.escape(quant)}(?![A-Za-z0-9])", re.IGNORECASE)
    found = sorted(f.path for f in listing
                   if f.path.lower().endswith(".gguf") and not is_projector(f.path)
                   and token.search(f.path))
    sets: dict[str, list[str]] = {}
    for path in found:
        stem = SHARD_SUFFIX.sub("", path.removesuffix(".gguf"))
        sets.setdefault(stem, []).append(path)
    if not sets:
        raise Refused(f"no GGUF file of the repository names {quant!r}", code="usage")
    if len(sets) > 1:
        raise Refused(f"{quant!r} names more than one model file: "
                      f"{', '.join(sorted(sets))}; give hf://<repo>@<rev>/<file>.gguf",
                      code="usage")
    return next(iter(sets.values()))[0]


class HubReader:
    """Positional reads of one repo file through HTTP ranges (one request per read)."""

    def __init__(self, files: HubFiles, path: str, size: int) -> None:
        self._files, self._path, self._size = files, path, size

    @property
    def size(self) -> int:
        return self._size

    def readinto(self, offset: int, buffer: memoryview) -> int:
        try:
            data = self._files.read_range(self._path, offset, min(len(buffer),
                                                                  self._size - offset))
        except HubError as err:
            raise Aborted("hub_error", f"reading {self._path} from the Hub: "
                          f"{err.message}") from None
        buffer[:len(data)] = data
        return len(data)

    def close(self) -> None:
        return None


def _token() -> str | None:
    try:
        from huggingface_hub.utils import get_token

        return get_token()
    except Exception:  # no token store
        return None


def _git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def read_publisher_files(files: HubFiles, by_path: dict[str, RemoteFile], repo: str,
                         commit: str) -> list[PublisherInput]:
    """The publisher files at the repo root, in mesh-llm's order of the five basenames."""
    out = []
    for known in PUBLISHER_FILES:
        remote = by_path.get(known.basename)
        if remote is None:
            continue
        if remote.size is not None and remote.size > MAX_PUBLISHER_FILE_BYTES:
            raise Refused(f"{repo}@{commit}/{known.basename} is {remote.size} bytes, "
                          f"over the {MAX_PUBLISHER_FILE_BYTES} byte limit for a publisher "
                          "file (--no-publisher-metadata leaves it out)", code=BAD_FILE)

        def check(data: bytes, remote: RemoteFile = remote) -> str | None:
            if remote.size is not None and len(data) != remote.size:
                return f"got {len(data)} bytes, the listing says {remote.size}"
            if remote.lfs_sha256 is not None:
                if hashlib.sha256(data).hexdigest() != remote.lfs_sha256:
                    return "its sha256 is not the one the listing gives"
            elif remote.blob_id and _git_blob_id(data) != remote.blob_id:
                return "its git blob id is not the one the listing gives"
            return None

        try:
            data = files.read_all(known.basename, MAX_PUBLISHER_FILE_BYTES, check=check)
        except HubError as err:
            raise Refused(f"reading {known.basename}: {err.message}", code="hub_error") from None
        if len(data) > MAX_PUBLISHER_FILE_BYTES:
            raise Refused(f"{repo}@{commit}/{known.basename} is over the "
                          f"{MAX_PUBLISHER_FILE_BYTES} byte limit for a publisher file",
                          code=BAD_FILE)
        out.append(PublisherInput(known.basename, f"hf://{repo}@{commit}/{known.basename}",
                                  data, picked_up=True))
    return out


def load_hub(text: str, projectors: list[str] | None = None,
             settings: HubSettings | None = None, *,
             publisher_metadata: bool = False) -> SourceModel:
    coordinate = parse_coordinate(text)
    if coordinate is None:
        raise Refused(f"{text!r} is not org/repo[@rev]:QUANT nor "
                      "hf://org/repo@rev/path.gguf", code="usage")
    settings = settings or HubSettings.from_env()
    counter = TransferCounter()
    redact = Redactor([_token()])
    api = HubApi(settings, counter=counter, redact=redact)
    try:
        resolved = api.resolve(coordinate.repo, coordinate.revision)
        listing = resolved.files if resolved.files is not None else api.tree(coordinate.repo,
                                                                             resolved.commit)
    except HubError as err:
        raise Refused(f"{coordinate.repo}: {err.message}", code="hub_error") from None
    by_path = {f.path: f for f in listing}
    first = coordinate.path or pick_quant(listing, coordinate.quant or "")
    if first not in by_path:
        raise Refused(f"{first} is not in {coordinate.repo} at {resolved.commit}", code="usage")
    folder = str(PurePosixPath(first).parent)
    shards = shard_locations(PurePosixPath(first).name)
    names = shards[0] if shards else [PurePosixPath(first).name]
    paths = [n if folder == "." else f"{folder}/{n}" for n in names]
    missing = [p for p in paths if p not in by_path]
    if missing:
        raise Refused(f"missing sibling shard(s) of {first} in "
                      f"{coordinate.repo}@{resolved.commit}: {', '.join(missing)}",
                      code="missing_sibling")
    files = HubFiles(settings, repo=coordinate.repo, commit=resolved.commit, counter=counter,
                     redact=redact)
    try:
        shard_files: list[SourceFile] = []
        for path in paths:
            remote = by_path[path]
            size = remote.size or 0
            source = HubRangeSource(files, path, size)
            try:
                shard_files.append(read_file_header(PurePosixPath(path).name, path, source,
                                                    size, remote.lfs_sha256))
            except HubError as err:
                raise Refused(f"reading the header of {path}: {err.message}", code="hub_error"
                              ) from None
        wanted = projectors if projectors else sorted(p for p in by_path if is_projector(p))
        extra = []
        for path in wanted:
            if path not in by_path:
                raise Refused(f"projector {path} is not in {coordinate.repo}", code="usage")
            remote = by_path[path]
            try:
                extra.append(read_projector(PurePosixPath(path).name, path,
                                            HubRangeSource(files, path, remote.size),
                                            remote.size or 0, remote.lfs_sha256))
            except HubError as err:
                raise Refused(f"reading the header of {path}: {err.message}", code="hub_error"
                              ) from None
        model = assemble("hub", shard_files,
                         lambda location: HubReader(files, location,
                                                    by_path[location].size or 0),
                         extra, repo=coordinate.repo, revision=resolved.commit,
                         requested_revision=coordinate.revision)
        if publisher_metadata:
            model.publisher_files = read_publisher_files(files, by_path, coordinate.repo,
                                                         resolved.commit)
    except BaseException:
        files.close()
        raise
    model.closer = files.close
    model.transfer = counter
    return model
