"""The huggingface_hub client calls: resolve the ref once, list refs, list files.

Every call goes through `call_with_retries` and `from_exception`, so whatever the client raises
(its HfHubHTTPError family or a leaked httpx2 transport error) becomes a HubError.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from meshcert.core.hub.errors import UNREACHABLE, HubError, Redact, from_exception
from meshcert.core.hub.gate import RequestGate
from meshcert.core.hub.listing import RemoteFile, from_siblings, from_tree
from meshcert.core.hub.retry import Sleep, call_with_retries, default_sleep
from meshcert.core.hub.revision import RepoRefs
from meshcert.core.hub.settings import HubSettings
from meshcert.core.hub.stats import TransferCounter
from meshcert.core.refs import FULL_SHA

T = TypeVar("T")


@dataclass(frozen=True)
class ResolvedRepo:
    commit: str  # the 40-hex commit every later call uses
    files: list[RemoteFile] | None  # None: model_info gave no usable listing


def run_with_deadline(fn: Callable[[], T], seconds: float) -> T:
    """Run a client call that takes no timeout argument, giving up after `seconds`.

    The call runs on a daemon thread, so a Hub that accepts a connection and then stalls cannot
    hang the certification (nor keep the process alive at exit).
    """
    box: dict[str, Any] = {}
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=target, name="meshcert-hub-call", daemon=True).start()
    if not done.wait(seconds):
        raise TimeoutError(f"no answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


class HubApi:
    def __init__(self, settings: HubSettings, *, counter: TransferCounter, redact: Redact,
                 sleep: Sleep = default_sleep, gate: RequestGate | None = None) -> None:
        from huggingface_hub import HfApi

        from meshcert.core.version import __version__

        self._settings = settings
        self._counter = counter
        self._redact = redact
        self._sleep = sleep
        self._gate = gate or RequestGate(settings.max_parallel_requests)
        self._api = HfApi(endpoint=settings.endpoint, library_name="meshcert",
                          library_version=__version__)

    def _call(self, action: str, fn: Callable[[], T]) -> T:
        def attempt() -> T:
            with self._gate.slot():
                self._counter.request()
                return fn()

        return call_with_retries(
            attempt, settings=self._settings, sleep=self._sleep,
            classify=lambda exc: from_exception(exc, action=action, redact=self._redact))

    def resolve(self, repo: str, revision: str | None) -> ResolvedRepo:
        """One `model_info(files_metadata=True)`: the commit and the whole file listing."""
        where = f"{repo}@{revision}" if revision else repo
        deadline = self._settings.timeout_s * 2  # the client's timeout is per read, not per call

        def call() -> Any:
            return run_with_deadline(lambda: self._api.model_info(
                repo, revision=revision, files_metadata=True, timeout=self._settings.timeout_s),
                deadline)

        info = self._call(f"model_info {where}", call)
        commit = info.sha if isinstance(info.sha, str) else ""
        if not FULL_SHA.match(commit.lower()):
            raise HubError(UNREACHABLE, f"model_info {where}: the Hub gave no commit id "
                           f"(sha={info.sha!r})")
        return ResolvedRepo(commit.lower(), from_siblings(info.siblings))

    def commit_of(self, repo: str, revision: str | None = None) -> str:
        """The commit `revision` (default: the default branch) points at now: one
        `model_info` asking for the sha only, no file listing."""
        where = f"{repo}@{revision}" if revision else repo
        deadline = self._settings.timeout_s * 2

        def call() -> Any:
            return run_with_deadline(lambda: self._api.model_info(
                repo, revision=revision, expand=["sha"], timeout=self._settings.timeout_s),
                deadline)

        info = self._call(f"model_info {where}", call)
        commit = info.sha if isinstance(info.sha, str) else ""
        if not FULL_SHA.match(commit.lower()):
            raise HubError(UNREACHABLE, f"model_info {where}: the Hub gave no commit id "
                           f"(sha={info.sha!r})")
        return commit.lower()

    def refs(self, repo: str) -> RepoRefs:
        """Branch, tag and convert names (`list_repo_refs`), to say why a revision moves."""
        deadline = self._settings.timeout_s * 2

        def call() -> Any:
            return run_with_deadline(lambda: self._api.list_repo_refs(repo), deadline)

        refs = self._call(f"list_repo_refs {repo}", call)
        return RepoRefs(
            branches=frozenset(b.name for b in refs.branches),
            tags=frozenset(t.name for t in refs.tags),
            converts=frozenset(c.name for c in refs.converts))

    def tree(self, repo: str, commit: str) -> list[RemoteFile]:
        """Fallback listing (`list_repo_tree`, paged by the client) at the resolved commit."""
        deadline = self._settings.timeout_s * 4

        def call() -> list[Any]:
            return run_with_deadline(lambda: list(self._api.list_repo_tree(
                repo, revision=commit, recursive=True, expand=False)), deadline)

        return from_tree(self._call(f"list_repo_tree {repo}@{commit}", call))
