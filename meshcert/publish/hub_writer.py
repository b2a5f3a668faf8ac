"""What the publish use case asks of the Hub, through the Hub door, over plain LFS.

The Xet decision. huggingface_hub 2.4 uploads through hf_xet whenever the hf_xet package is
importable and `HF_HUB_DISABLE_XET` is not set; it does not ask the Hub first. Xet uploads have
failed inside HF Jobs (mesh-llm's job script sets `HF_HUB_DISABLE_XET=1` for that reason), so
meshcert publishes over LFS only (the LFS batch API, basic transfer: a PUT to the storage
origin, then verify, then a commit). huggingface_hub offers one public switch for it, the
environment variable, read once when huggingface_hub is imported; meshcert does not flip the
library's constants behind its back. So the meshcert command line sets the variable at its
entry point, before anything imports huggingface_hub (a value the user set is kept), HF Jobs get
it in their environment (meshcert.hubjobs.commands.JOB_ENV), and a publish started in a process
where Xet would still be used is refused before anything is certified or uploaded
(`xet_refusal`). The in-repo test Hub refuses Xet, so the tests prove LFS is the path taken.

Every call goes through the Hub door (meshcert.core.hub.api.HubApi): retried on 429, 5xx and
dropped connections with backoff that honours Retry-After, within `PUBLISH_SETTINGS`, and every
failure becomes a HubError whose message never holds the token.
"""

from __future__ import annotations

import importlib.util
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from meshcert.core.errors import MeshcertError
from meshcert.core.hub.api import HubApi
from meshcert.core.hub.errors import HubError
from meshcert.core.hub.retry import Sleep, default_sleep
from meshcert.core.hub.settings import HubSettings
from meshcert.publish.plan import LocalFile, RemoteFile

if TYPE_CHECKING:
    from huggingface_hub import HfApi

RepoType = Literal["model", "dataset"]
T = TypeVar("T")
# mesh-llm's job retries an upload 8 times with 10*2^n s up to 300 s; a publish is as patient
PUBLISH_SETTINGS = HubSettings(max_retries=7, backoff_base_s=2.0, backoff_cap_s=120.0,
                               max_retry_after_s=300.0)


XET_SWITCH = "HF_HUB_DISABLE_XET"


def xet_refusal() -> str | None:
    """Why a publish from this process would go over Xet, if it would (module docstring)."""
    from huggingface_hub import constants

    if constants.HF_HUB_DISABLE_XET or importlib.util.find_spec("hf_xet") is None:
        return None
    return (f"uploads from this process would go over Xet (hf_xet is installed and {XET_SWITCH} "
            f"is not set), which has failed inside HF Jobs; meshcert publishes over LFS: set "
            f"{XET_SWITCH}=1 before huggingface_hub is imported (the meshcert command does)")


@dataclass(frozen=True)
class CommitResult:
    oid: str
    url: str
    pr_revision: str | None = None
    pr_url: str | None = None


Addition = tuple[str, LocalFile | bytes]  # (path in the repo, an artifact or small content)


class StopRetrying(MeshcertError):
    """Raised by a retried call to end it at once, as itself (not a Hub failure)."""


class HubWriter:
    """Writes to one Hub (endpoint) with one token (None: huggingface_hub's own lookup)."""

    def __init__(self, *, endpoint: str, token: str | None = None,
                 settings: HubSettings = PUBLISH_SETTINGS, sleep: Sleep = default_sleep
                 ) -> None:
        self.endpoint = endpoint
        self._hub = HubApi(replace(settings, endpoint=endpoint), token=token, sleep=sleep,
                           follow_causes=True)

    @property
    def redact(self) -> Callable[[str], str]:
        return self._hub.redact

    def classify(self, exc: BaseException, action: str) -> HubError:
        return self._hub.error(exc, action)

    def retry(self, action: str, call: Callable[[], T]) -> T:
        """`call` until it succeeds or fails for good; a StopRetrying passes through as is."""
        return self._hub.retry(action, call, passthrough=StopRetrying)

    def check_access(self, repo_id: str, *, pull_request: bool = False,
                     repo_type: RepoType = "model") -> str:
        """Before any work: a token, a Hub that answers, and the right to write `repo_id` (or
        to create it; with `pull_request`, to read it). Refused (meshcert.core.errors)
        otherwise, after a few seconds at most. The token's user name."""
        identity = self._hub.identify()
        self._hub.check_write(identity, repo_id, repo_type=repo_type, pull_request=pull_request)
        return identity.name

    # --- reads ----------------------------------------------------------------------------
    def head(self, repo_id: str, revision: str, repo_type: RepoType = "model") -> str | None:
        """The commit `revision` points at, None when the repo has no such revision."""
        from huggingface_hub.errors import RevisionNotFoundError

        def ask(api: HfApi) -> str | None:
            try:
                info = api.repo_info(repo_id, revision=revision, repo_type=repo_type)
            except RevisionNotFoundError:
                return None
            return info.sha

        return self._hub.call(f"repo_info {repo_id}@{revision}", ask)

    def listing(self, repo_id: str, revision: str, repo_type: RepoType = "model"
                ) -> dict[str, RemoteFile]:
        """Every file at `revision` with the Hub's size, git oid and LFS sha256."""
        from huggingface_hub.hf_api import RepoFile

        def ask(api: HfApi) -> dict[str, RemoteFile]:
            out: dict[str, RemoteFile] = {}
            for entry in api.list_repo_tree(repo_id, revision=revision, recursive=True,
                                            expand=False, repo_type=repo_type):
                if isinstance(entry, RepoFile):
                    out[entry.path] = RemoteFile(entry.path, entry.size, entry.blob_id,
                                                 entry.lfs.sha256 if entry.lfs else None)
            return out

        return self._hub.call(f"list {repo_id}@{revision}", ask)

    def read(self, repo_id: str, path: str, revision: str, repo_type: RepoType = "model"
             ) -> bytes | None:
        from huggingface_hub.errors import EntryNotFoundError

        def ask(api: HfApi) -> bytes | None:
            with tempfile.TemporaryDirectory(prefix="meshcert-publish-") as cache:
                try:
                    local = api.hf_hub_download(repo_id, path, revision=revision,
                                                repo_type=repo_type, cache_dir=cache)
                except EntryNotFoundError:
                    return None
                return Path(str(local)).read_bytes()

        return self._hub.call(f"read {repo_id}/{path}", ask)

    def can_write(self, repo_id: str, repo_type: RepoType = "model") -> bool:
        """Whether this token may push to the repo (the Hub's auth-check); False on 401/403."""
        def ask(api: HfApi) -> bool:
            try:
                api.auth_check(repo_id, repo_type=repo_type, write=True)
            except Exception as exc:
                error = self.classify(exc, f"auth-check {repo_id}")
                if error.code == "hub_unauthorized":
                    return False
                raise
            return True

        return self._hub.call(f"auth-check {repo_id}", ask)

    # --- writes ---------------------------------------------------------------------------
    def ensure_repo(self, repo_id: str, *, private: bool, repo_type: RepoType = "model") -> None:
        self._hub.call(f"create_repo {repo_id}", lambda api: api.create_repo(
            repo_id, private=private or None, repo_type=repo_type, exist_ok=True))

    def ensure_branch(self, repo_id: str, branch: str, repo_type: RepoType = "model") -> None:
        self._hub.call(f"create_branch {repo_id}@{branch}", lambda api: api.create_branch(
            repo_id, branch=branch, repo_type=repo_type, exist_ok=True))

    def commit(self, repo_id: str, *, additions: Sequence[Addition],
               deletions: Sequence[str] = (), message: str, description: str = "",
               revision: str, create_pr: bool = False, parent: str | None = None,
               repo_type: RepoType = "model") -> CommitResult:
        """One commit (no retry here: the caller re-plans against the Hub before retrying).
        Artifacts reuse their certified sha256, so nothing is hashed again."""
        from huggingface_hub import CommitOperation, CommitOperationAdd, CommitOperationDelete

        operations: list[CommitOperation] = [CommitOperationDelete(p) for p in deletions]
        for path, content in additions:
            if isinstance(content, LocalFile):
                op = CommitOperationAdd(path, content.local_path)
                op.upload_info.sha256 = bytes.fromhex(content.sha256)
            else:
                op = CommitOperationAdd(path, content)
            operations.append(op)
        info = self._hub.send(lambda api: api.create_commit(
            repo_id, operations, commit_message=message, commit_description=description,
            revision=revision, create_pr=create_pr, parent_commit=parent, repo_type=repo_type))
        return CommitResult(info.oid, info.commit_url, info.pr_revision, info.pr_url)
