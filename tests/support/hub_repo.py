"""The fake Hub's content: model and dataset repos at commits, branches, tags and PR refs,
discussions, LFS and git blobs.

Kept apart from the HTTP side (hub_server.py). Files whose name matches `lfs` (by default
`*.gguf`) are stored as LFS: listed with their sha256, served from a storage origin. Every commit
is kept with its whole file list, so a test can look at each state a reader could have seen.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

LFS_POINTER = "version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {size}\n"
RepoType = Literal["model", "dataset"]
URL_PREFIX: dict[str, str] = {"model": "", "dataset": "datasets/"}
# what the Hub writes as the first commit of a new repo (abridged: the LFS rules that matter here)
GITATTRIBUTES = "".join(f"{pattern} filter=lfs diff=lfs merge=lfs -text\n" for pattern in (
    "*.bin", "*.gguf", "*.h5", "*.npy", "*.onnx", "*.parquet", "*.pt", "*.safetensors",
    "*.tar.*", "*.zip")).encode()


def git_blob_id(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@dataclass
class StoredFile:
    """A file at one commit, as listed; `key` names the bytes actually served."""

    path: str
    size: int
    blob_id: str
    key: str
    lfs_sha256: str | None = None
    pointer_size: int | None = None

    def sibling(self, blobs: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"rfilename": self.path}
        if blobs:
            out |= {"size": self.size, "blobId": self.blob_id}
            if self.lfs_sha256:
                out["lfs"] = {"sha256": self.lfs_sha256, "size": self.size,
                              "pointerSize": self.pointer_size}
        return out

    def tree_entry(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "file", "oid": self.blob_id, "size": self.size,
                               "path": self.path}
        if self.lfs_sha256:
            out["lfs"] = {"oid": self.lfs_sha256, "size": self.size,
                          "pointerSize": self.pointer_size}
        return out


@dataclass
class Commit:
    sha: str
    files: dict[str, StoredFile]
    parent: str | None = None
    title: str = ""
    description: str = ""
    author: str | None = None
    created_at: float = field(default_factory=time.time)


@dataclass
class Discussion:
    """A discussion or pull request; the Hub numbers both in one sequence."""

    num: int
    title: str
    author: str
    is_pull_request: bool
    description: str = ""
    status: str = "open"
    base: str = "refs/heads/main"  # the branch a pull request targets
    created_at: float = field(default_factory=time.time)
    comments: list[dict[str, Any]] = field(default_factory=list)  # hub_discussions.py
    merge_commit: str | None = None  # a merged pull request's commit on its base
    merge_base: str | None = None  # the base's head when it was merged (for its diff)


@dataclass
class FakeRepo:
    repo_id: str
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    pulls: dict[int, str] = field(default_factory=dict)  # refs/pr/<n> -> commit
    converts: dict[str, str] = field(default_factory=dict)
    gated: Literal[False, "auto", "manual"] = False
    disabled: bool = False
    required_token: str | None = None  # requests without "Bearer <token>" get a bare 401
    gated_access: set[str] = field(default_factory=set)  # tokens that may read a gated repo
    model_info_siblings: bool = True  # False: model_info omits siblings (tree fallback)
    repo_type: RepoType = "model"
    private: bool = False  # readable only with a token of its namespace (hub_auth)
    discussions: list[Discussion] = field(default_factory=list)
    lfs_objects: set[str] = field(default_factory=set)  # sha256 of LFS objects stored for it

    @property
    def namespace(self) -> str:
        return self.repo_id.split("/")[0]

    @property
    def url_path(self) -> str:
        """How the repo appears in web URLs: `ns/name` or `datasets/ns/name`."""
        return URL_PREFIX[self.repo_type] + self.repo_id

    def next_discussion_num(self) -> int:
        return len(self.discussions) + 1

    def history(self, sha: str) -> list[Commit]:
        """The commit and its ancestors, newest first."""
        out: list[Commit] = []
        current: str | None = sha
        while current is not None:
            out.append(self.commits[current])
            current = self.commits[current].parent
        return out

    def resolve(self, rev: str | None) -> str | None:
        """Branch, tag, refs/heads|tags/..., refs/pr/N, refs/convert/X, full or short SHA."""
        if rev is None:
            return self.branches.get("main")
        if rev in self.branches:
            return self.branches[rev]
        if rev in self.tags:
            return self.tags[rev]
        for prefix, names in (("refs/heads/", self.branches), ("refs/tags/", self.tags),
                              ("refs/convert/", self.converts)):
            if rev.startswith(prefix) and rev[len(prefix):] in names:
                return names[rev[len(prefix):]]
        if rev.startswith("refs/pr/") and rev[8:].isdigit():
            return self.pulls.get(int(rev[8:]))
        low = rev.lower()
        if low in self.commits:
            return low
        if len(low) >= 7 and all(c in "0123456789abcdef" for c in low):
            matches = [sha for sha in self.commits if sha.startswith(low)]
            if len(matches) == 1:
                return matches[0]
        return None


class HubStore:
    """Repos and the blobs behind them; thread-safe."""

    def __init__(self) -> None:
        self.repos: dict[str, FakeRepo] = {}  # model repos
        self.datasets: dict[str, FakeRepo] = {}  # dataset repos
        self.blobs: dict[str, bytes] = {}  # git blobs by blob id, LFS objects by sha256
        self._lock = threading.RLock()
        self._counter = 0

    @property
    def lock(self) -> threading.RLock:
        """Held while content changes; route handlers take it to read and write atomically."""
        return self._lock

    def table(self, repo_type: RepoType = "model") -> dict[str, FakeRepo]:
        return self.datasets if repo_type == "dataset" else self.repos

    def get_repo(self, repo_id: str, repo_type: RepoType = "model") -> FakeRepo | None:
        with self._lock:
            return self.table(repo_type).get(repo_id)

    def create_repo(self, repo_id: str, *, repo_type: RepoType = "model",
                    private: bool = False) -> FakeRepo:
        with self._lock:
            table = self.table(repo_type)
            if repo_id not in table:
                table[repo_id] = FakeRepo(repo_id, repo_type=repo_type, private=private)
            return table[repo_id]

    def commit(self, repo_id: str, files: Mapping[str, bytes], *, branch: str | None = "main",
               lfs: Callable[[str], bool] | None = None, replace_all: bool = True,
               repo_type: RepoType = "model", title: str = "") -> str:
        """Store `files` as a new commit (on `branch`, created or moved); return its SHA."""
        is_lfs = lfs or (lambda path: path.lower().endswith(".gguf"))
        with self._lock:
            repo = self.create_repo(repo_id, repo_type=repo_type)
            parent = repo.branches.get(branch) if branch else None
            stored = {} if replace_all or parent is None else dict(repo.commits[parent].files)
            for path, content in files.items():
                stored[path] = self.store_file(path, content, is_lfs(path))
                if stored[path].lfs_sha256:
                    repo.lfs_objects.add(stored[path].key)
            sha = self.add_commit(repo, parent, stored, title=title or "Upload files")
            if branch:
                repo.branches[branch] = sha
        if branch:
            self.ref_moved(repo, f"refs/heads/{branch}", parent, sha)
        return sha

    # --- events (the fake Hub delivers them as webhooks; a bare store ignores them) -------
    def ref_moved(self, repo: FakeRepo, ref: str, old: str | None, new: str | None) -> None:
        """A branch or pull-request ref now points at `new` (None: deleted)."""

    def discussion_changed(self, repo: FakeRepo, discussion: Discussion, action: str) -> None:
        """A discussion or pull request was opened (`create`) or changed (`update`)."""

    def add_commit(self, repo: FakeRepo, parent: str | None, files: dict[str, StoredFile], *,
                   title: str, description: str = "", author: str | None = None) -> str:
        """Record a commit holding exactly `files` on top of `parent`; move no ref."""
        with self._lock:
            self._counter += 1
            digest = hashlib.sha1(f"{repo.repo_id}\0{parent}\0{self._counter}".encode())
            for path in sorted(files):
                digest.update(f"{path}\0{files[path].blob_id}\n".encode())
            sha = digest.hexdigest()
            repo.commits[sha] = Commit(sha, files, parent, title, description, author)
            return sha

    def store_file(self, path: str, content: bytes, lfs: bool) -> StoredFile:
        """Keep `content` and describe it as a regular git file or an LFS file."""
        if lfs:
            sha256 = hashlib.sha256(content).hexdigest()
            with self._lock:
                self.blobs[sha256] = content
            return self.lfs_file(path, sha256, len(content))
        blob_id = git_blob_id(content)
        with self._lock:
            self.blobs[blob_id] = content
        return StoredFile(path, len(content), blob_id, blob_id)

    @staticmethod
    def lfs_file(path: str, sha256: str, size: int) -> StoredFile:
        """An LFS file whose object (keyed by its sha256) is already stored."""
        pointer = LFS_POINTER.format(oid=sha256, size=size).encode()
        return StoredFile(path, size, git_blob_id(pointer), sha256, sha256, len(pointer))

    def publish_dir(self, repo_id: str, root: str | os.PathLike[str], *,
                    branch: str | None = "main", lfs: Callable[[str], bool] | None = None,
                    repo_type: RepoType = "model") -> str:
        """Commit every file under `root` (a generated package) and return the commit SHA."""
        base = Path(root)
        files = {p.relative_to(base).as_posix(): p.read_bytes()
                 for p in sorted(base.rglob("*")) if p.is_file()}
        return self.commit(repo_id, files, branch=branch, lfs=lfs, repo_type=repo_type)

    def tag(self, repo_id: str, name: str, sha: str, repo_type: RepoType = "model") -> None:
        with self._lock:
            self.table(repo_type)[repo_id].tags[name] = sha

    def open_pull_request(self, repo_id: str, sha: str, *, title: str = "Pull request",
                          author: str = "contributor", base: str = "main",
                          repo_type: RepoType = "model") -> str:
        """A pull request (discussion) whose ref points at `sha`; returns `refs/pr/<n>`."""
        with self._lock:
            repo = self.table(repo_type)[repo_id]
            num = repo.next_discussion_num()
            discussion = Discussion(num, title, author, True, base=f"refs/heads/{base}")
            repo.discussions.append(discussion)
            repo.pulls[num] = sha
        self.ref_moved(repo, f"refs/pr/{num}", None, sha)
        self.discussion_changed(repo, discussion, "create")
        return f"refs/pr/{num}"

    def push_to_pull_request(self, repo_id: str, num: int, files: Mapping[str, bytes], *,
                             repo_type: RepoType = "model", title: str = "Update") -> str:
        """A new commit on pull request `num` (its files replaced by `files`, kept
        otherwise); the commit's SHA."""
        with self._lock:
            repo = self.table(repo_type)[repo_id]
            parent = repo.pulls[num]
            stored = dict(repo.commits[parent].files)
            for path, content in files.items():
                stored[path] = self.store_file(path, content, path.lower().endswith(".gguf"))
                if stored[path].lfs_sha256:
                    repo.lfs_objects.add(stored[path].key)
            sha = self.add_commit(repo, parent, stored, title=title)
            repo.pulls[num] = sha
        self.ref_moved(repo, f"refs/pr/{num}", parent, sha)
        return sha

    def merge_pull_request(self, repo_id: str, num: int, *, repo_type: RepoType = "model"
                           ) -> str:
        """Merge pull request `num` into its base: a commit with the PR head's files."""
        with self._lock:
            repo = self.table(repo_type)[repo_id]
            found = next(d for d in repo.discussions if d.num == num)
            branch = found.base.removeprefix("refs/heads/")
            parent = repo.branches[branch]
            files = dict(repo.commits[repo.pulls[num]].files)
            sha = self.add_commit(repo, parent, files, title=f"Merge #{num}")
            repo.branches[branch] = sha
            found.status, found.merge_commit, found.merge_base = "merged", sha, parent
        self.ref_moved(repo, found.base, parent, sha)
        self.discussion_changed(repo, found, "update")
        return sha

    def all_commits(self, repo_id: str, repo_type: RepoType = "model") -> list[Commit]:
        """Every commit the repo ever recorded, oldest first (branches, PRs, orphans)."""
        with self._lock:
            return list(self.table(repo_type)[repo_id].commits.values())  # insertion order

    def paths_at(self, repo_id: str, rev: str, repo_type: RepoType = "model") -> set[str]:
        with self._lock:
            repo = self.table(repo_type)[repo_id]
            sha = repo.resolve(rev)
            assert sha is not None, f"{rev} is not a revision of {repo_id}"
            return set(repo.commits[sha].files)

    def has_objects(self, keys: Iterable[str]) -> bool:
        with self._lock:
            return all(k in self.blobs for k in keys)

    def tamper(self, repo_id: str, rev: str, path: str, *, offset: int = -1,
               repo_type: RepoType = "model") -> None:
        """Flip one byte of the content served for `path`; the listing (size, LFS sha256, blob
        id) stays as it was, as if storage had been corrupted behind the Hub's metadata."""
        with self._lock:
            repo = self.table(repo_type)[repo_id]
            sha = repo.resolve(rev)
            assert sha is not None
            stored = repo.commits[sha].files[path]
            data = bytearray(self.blobs[stored.key])
            data[offset] ^= 0xFF
            self._counter += 1
            key = f"tampered-{self._counter}"
            self.blobs[key] = bytes(data)
            stored.key = key

    def file_bytes(self, repo_id: str, rev: str, path: str,
                   repo_type: RepoType = "model") -> bytes:
        repo = self.table(repo_type)[repo_id]
        sha = repo.resolve(rev)
        assert sha is not None
        return self.blobs[repo.commits[sha].files[path].key]
