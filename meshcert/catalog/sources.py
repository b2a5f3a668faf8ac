"""Where a catalog's entry files come from: a local checkout, or a dataset repo on the Hub.

Both sources answer `snapshot()` with every `entries/<owner>/<repo>.json` file's bytes (and a
finding for each file that could not be read); what the files say is `entries`' business. A
catalog that cannot be read at all raises CatalogError: `incomplete` when the Hub failed us,
otherwise it is bad input (no such folder, no such dataset, not a catalog).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from meshcert.catalog.entries import MAX_ENTRY_BYTES
from meshcert.catalog.errors import CatalogError
from meshcert.core.findings import Finding, finding
from meshcert.core.refs import RefError, parse_ref

if TYPE_CHECKING:
    from meshcert.core.hub.api import HubApi

T = TypeVar("T")

DEFAULT_CATALOG = "hf://datasets/meshllm/catalog"
DATASETS_PREFIX = "hf://datasets/"
ENTRIES_DIR = "entries"
_DOWNLOAD_WORKERS = 8


@dataclass
class CatalogSnapshot:
    """The entry files of one catalog, as read."""

    input: str
    kind: Literal["local", "hf"]
    location: str  # the checkout's directory, or the dataset repo id
    revision: str | None = None  # the dataset commit the files were read at (hf)
    requested_revision: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)  # entries/o/r.json -> bytes
    findings: list[Finding] = field(default_factory=list)  # files that could not be read


class CatalogSource(Protocol):
    def snapshot(self) -> CatalogSnapshot:
        """Read every entry file (raises CatalogError when the catalog cannot be read)."""


def entry_path_problem(path: str) -> str | None:
    """Why `path` (relative, '/'-separated) is not where an entry lives, or None."""
    parts = path.split("/")
    if len(parts) != 3 or parts[0] != ENTRIES_DIR or not parts[2].endswith(".json") \
            or not parts[1] or parts[2] == ".json":
        return f"{path} is not at entries/<owner>/<repo>.json; it was not read"
    return None


def _misplaced(path: str, why: str) -> Finding:
    return finding("catalog_entry_invalid", why, path=path)


class LocalCatalog:
    """A checkout of a catalog: a directory holding `entries/<owner>/<repo>.json`."""

    def __init__(self, root: str | os.PathLike[str], text: str | None = None) -> None:
        self.root = Path(root)
        self.text = text if text is not None else str(root)

    def snapshot(self) -> CatalogSnapshot:
        entries = self.root / ENTRIES_DIR
        if not self.root.is_dir():
            raise CatalogError(f"{self.text!r} is not a directory (a catalog checkout holds "
                               "entries/<owner>/<repo>.json)")
        if not entries.is_dir():
            raise CatalogError(f"{self.text!r} is not a catalog checkout: it has no entries/ "
                               "folder")
        out = CatalogSnapshot(input=self.text, kind="local", location=str(self.root))
        for file in sorted(entries.rglob("*.json")):
            rel = file.relative_to(self.root).as_posix()
            problem = entry_path_problem(rel)
            if problem is not None:
                out.findings.append(_misplaced(rel, problem))
                continue
            try:
                if not file.is_file():
                    raise OSError("not a regular file")
                size = file.stat().st_size
                if size > MAX_ENTRY_BYTES:
                    raise OSError(f"{size} bytes, over the {MAX_ENTRY_BYTES} byte limit")
                out.files[rel] = file.read_bytes()
            except OSError as exc:
                out.findings.append(_misplaced(rel, f"{rel} could not be read: "
                                               f"{exc.strerror or exc}"))
        return out


def parse_dataset_ref(text: str) -> tuple[str, str | None]:
    """`hf://datasets/ns/name[@rev]` -> (repo id, revision); raises CatalogError."""
    if not text.startswith(DATASETS_PREFIX):
        raise CatalogError(f"{text!r}: a catalog on the Hub is a dataset repo, "
                           "hf://datasets/ns/name[@revision]")
    try:
        ref = parse_ref("hf://" + text[len(DATASETS_PREFIX):])
    except RefError as err:
        raise CatalogError(f"{text!r} is not a dataset ref: {err}") from None
    return ref.repo or "", ref.revision


class HubDatasetCatalog:
    """A catalog dataset on the Hub, read with huggingface_hub at one pinned commit: the
    commit is resolved first, then the tree under entries/ is listed and every entry file is
    downloaded at that commit (a catalog merged meanwhile cannot mix two states)."""

    def __init__(self, text: str, *, endpoint: str) -> None:
        self.text = text
        self.repo, self.revision = parse_dataset_ref(text)
        self.endpoint = endpoint

    def snapshot(self) -> CatalogSnapshot:
        from dataclasses import replace

        from meshcert.core.hub.api import HubApi
        from meshcert.core.hub.settings import HubSettings

        hub = HubApi(replace(HubSettings.from_env(), endpoint=self.endpoint))
        where = f"{self.repo}@{self.revision}" if self.revision else self.repo
        info = self._call(hub, f"dataset_info {where}", lambda api: api.dataset_info(
            self.repo, revision=self.revision))
        commit = str(getattr(info, "sha", "") or "").lower()
        if len(commit) != 40:
            raise CatalogError(f"dataset_info {where}: the Hub gave no commit id",
                               incomplete=True)
        listing = self._call(hub, f"list_repo_tree {self.repo}@{commit} entries/",
                             lambda api: list(api.list_repo_tree(
                                 self.repo, path_in_repo=ENTRIES_DIR, recursive=True,
                                 revision=commit, repo_type="dataset")))
        out = CatalogSnapshot(input=self.text, kind="hf", location=self.repo, revision=commit,
                              requested_revision=self.revision)
        wanted: list[str] = []
        for item in listing:
            path = getattr(item, "path", "")
            if not hasattr(item, "size") or not path.endswith(".json"):
                continue  # a folder, or not JSON
            problem = entry_path_problem(path)
            if problem is not None:
                out.findings.append(_misplaced(path, problem))
            elif (item.size or 0) > MAX_ENTRY_BYTES:
                out.findings.append(_misplaced(path, f"{path} could not be read: {item.size} "
                                               f"bytes, over the {MAX_ENTRY_BYTES} byte limit"))
            else:
                wanted.append(path)
        with tempfile.TemporaryDirectory(prefix="meshcert-catalog-") as cache:
            def fetch(path: str) -> tuple[str, bytes | str]:
                action = f"download {path}"
                try:  # one try: a file that cannot be read is a finding, not the catalog
                    local = hub.call(action, lambda api: api.hf_hub_download(
                        self.repo, path, repo_type="dataset", revision=commit,
                        cache_dir=cache), retry=False)
                    return path, Path(str(local)).read_bytes()
                except Exception as exc:  # classified: one file, not the catalog
                    return path, hub.error(exc, action).message

            with ThreadPoolExecutor(max_workers=_DOWNLOAD_WORKERS,
                                    thread_name_prefix="catalog-entry") as pool:
                for path, data in pool.map(fetch, sorted(wanted)):
                    if isinstance(data, bytes):
                        out.files[path] = data
                    else:
                        out.findings.append(_misplaced(path, f"{path} could not be read: {data}"))
        return out

    @staticmethod
    def _call(hub: HubApi, action: str, fn: Callable[[Any], T]) -> T:
        from meshcert.core.hub.errors import HubError

        try:
            return hub.call(action, fn)
        except HubError as error:
            if error.incomplete and error.status != 404:
                raise CatalogError(f"the catalog could not be read: {error.message}",
                                   incomplete=True) from None
            raise CatalogError(f"the catalog could not be read: {error.message}") from None


def open_catalog(text: str, *, endpoint: str | None = None) -> CatalogSource:
    """The CATALOG argument -> its source: `hf://datasets/ns/name[@rev]` or a local checkout."""
    if text.startswith("hf://"):
        from meshcert.core.hub.settings import HubSettings

        return HubDatasetCatalog(text, endpoint=endpoint or HubSettings.from_env().endpoint)
    if "://" in text:
        raise CatalogError(f"{text!r}: give hf://datasets/ns/name[@revision] or a local "
                           "checkout of a catalog")
    return LocalCatalog(text)
