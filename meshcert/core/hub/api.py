"""The one door to the Hub's API: every huggingface_hub client call of meshcert goes through
`HubApi`, and no module outside meshcert.core.hub builds a client of its own
(tests/core/hub/test_one_door.py reads every module to hold that).

A `HubApi` wires, for every call, what each part used to wire by hand:
- one attempt holds a slot of the `RequestGate` (at most `max_parallel_requests` at once) and is
  counted in the `TransferCounter`;
- `call` retries 429, 5xx and dropped connections with the bounded backoff of its `HubSettings`
  (`call_with_retries`, Retry-After honoured), `retry=False` tries once;
- whatever the client raises (its HfHubHTTPError family or a leaked httpx2 transport error)
  becomes a HubError carrying a finding code, its text passed through the token redactor;
- `deadline_s` cuts a call that takes no timeout argument off after that many seconds;
- `identify` and `check_write` ask the access questions with their own short budget
  (meshcert.core.hub.access).
File content at a commit is read by `HubFiles` (meshcert.core.hub.files), not through here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from meshcert.core.hub.access import check_write, find_token, identify
from meshcert.core.hub.deadline import run_with_deadline
from meshcert.core.hub.errors import (
    UNREACHABLE,
    HubError,
    Redact,
    Redactor,
    from_exception,
    upload_cause,
)
from meshcert.core.hub.gate import RequestGate
from meshcert.core.hub.listing import RemoteFile, from_siblings, from_tree
from meshcert.core.hub.retry import Sleep, call_with_retries, default_sleep
from meshcert.core.hub.revision import RepoRefs
from meshcert.core.hub.settings import HubSettings
from meshcert.core.hub.stats import TransferCounter
from meshcert.core.hub.token import token_redactor
from meshcert.core.refs import FULL_SHA

if TYPE_CHECKING:
    from huggingface_hub import HfApi

__all__ = ["HubApi", "Identity", "ResolvedRepo", "run_with_deadline"]

T = TypeVar("T")
RepoType = Literal["model", "dataset"]


@dataclass(frozen=True)
class ResolvedRepo:
    commit: str  # the 40-hex commit every later call uses
    files: list[RemoteFile] | None  # None: no listing asked for, or model_info gave no usable one


@dataclass(frozen=True)
class Identity:
    """Who the token is (`whoami`), asked before any work."""

    token: str = field(repr=False)
    whoami: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.whoami.get("name"))


class HubApi:
    """huggingface_hub's client for one Hub (`settings.endpoint`) and one token (None:
    huggingface_hub's own lookup, HF_TOKEN then the stored login).

    `redact` defaults to hiding that token; `follow_causes` classifies an error by the HTTP or
    transport error it wraps (huggingface_hub wraps a failed LFS upload in a RuntimeError).
    """

    def __init__(self, settings: HubSettings, *, token: str | None = None,
                 counter: TransferCounter | None = None, redact: Redact | None = None,
                 sleep: Sleep = default_sleep, gate: RequestGate | None = None,
                 follow_causes: bool = False) -> None:
        from huggingface_hub import HfApi

        from meshcert.core.version import __version__

        self.settings = settings
        self.counter = counter or TransferCounter()
        self._token = token
        self._redact: Redact = redact or token_redactor(token)
        self._sleep = sleep
        self._gate = gate or RequestGate(settings.max_parallel_requests)
        self._follow_causes = follow_causes
        self._api = HfApi(endpoint=settings.endpoint, token=token, library_name="meshcert",
                          library_version=__version__)

    @property
    def endpoint(self) -> str:
        return self.settings.endpoint

    @property
    def redact(self) -> Redact:
        return self._redact

    # --- the wiring -----------------------------------------------------------------------
    def error(self, exc: BaseException, action: str) -> HubError:
        """`exc` as a HubError whose message says `action` and holds no token."""
        cause = upload_cause(exc) if self._follow_causes else exc
        return from_exception(cause, action=action, redact=self._redact)

    def send(self, fn: Callable[[HfApi], T], *, deadline_s: float | None = None) -> T:
        """One attempt of `fn` with the client: gated and counted; errors raised as they are."""
        with self._gate.slot():
            self.counter.request()
            if deadline_s is None:
                return fn(self._api)
            return run_with_deadline(lambda: fn(self._api), deadline_s)

    def retry(self, action: str, attempt: Callable[[], T], *,
              passthrough: type[BaseException] | tuple[type[BaseException], ...] = ()) -> T:
        """`attempt` until it succeeds or fails for good (a HubError naming `action`). An
        exception of a `passthrough` type ends it at once and is raised as itself."""
        stopped: list[BaseException] = []

        def guarded() -> T:
            try:
                return attempt()
            except passthrough as exc:
                stopped.append(exc)
                raise

        def classify(exc: BaseException) -> HubError:
            return HubError("stopped", str(exc)) if stopped else self.error(exc, action)

        try:
            return call_with_retries(guarded, classify=classify, settings=self.settings,
                                     sleep=self._sleep)
        except HubError:
            if stopped:
                raise stopped[0] from None
            raise

    def call(self, action: str, fn: Callable[[HfApi], T], *, retry: bool = True,
             deadline_s: float | None = None) -> T:
        """One Hub request (`fn` given the client), retried unless `retry` is False; any
        failure is a HubError naming `action`."""
        if retry:
            return self.retry(action, lambda: self.send(fn, deadline_s=deadline_s))
        try:
            return self.send(fn, deadline_s=deadline_s)
        except Exception as exc:  # classified: the message never holds the token
            raise self.error(exc, action) from None

    def stream(self, action: str, fn: Callable[[HfApi], Iterable[T]]) -> Iterator[T]:
        """What `fn` yields, as it arrives (one request, not retried, not gated: it may last
        as long as the stream); a failure is a HubError naming `action`."""
        self.counter.request()
        try:
            yield from fn(self._api)
        except HubError:
            raise
        except Exception as exc:  # classified: the message never holds the token
            raise self.error(exc, action) from None

    # --- access, before any work ----------------------------------------------------------
    def identify(self) -> Identity:
        """Who the token is, asked with a bounded retry budget; Refused
        (meshcert.core.errors) without a usable token or when the Hub cannot be reached.
        From here on the token found is what the redactor hides."""
        token = find_token(self._token)
        self._redact = Redactor([token])
        whoami = identify(self._api, token, endpoint=self.endpoint, redact=self._redact,
                          sleep=self._sleep)
        return Identity(token, whoami)

    def check_write(self, identity: Identity, repo_id: str, *, repo_type: RepoType = "model",
                    pull_request: bool = False) -> None:
        """Refused unless `identity` may write (or create; with `pull_request`, read)
        `repo_id`."""
        check_write(self._api, identity.token, identity.whoami, repo_id, endpoint=self.endpoint,
                    redact=self._redact, repo_type=repo_type, pull_request=pull_request,
                    sleep=self._sleep)

    # --- reads a certification makes -------------------------------------------------------
    def resolve(self, repo: str, revision: str | None, *, listing: bool = True) -> ResolvedRepo:
        """One `model_info`: the commit `revision` (None: the default branch) points at now,
        and with `listing` the whole file listing (`files_metadata=True`); without it, the sha
        only is asked for."""
        where = f"{repo}@{revision}" if revision else repo
        timeout = self.settings.timeout_s
        ask: dict[str, Any] = {"files_metadata": True} if listing else {"expand": ["sha"]}
        info = self.call(f"model_info {where}", lambda api: api.model_info(
            repo, revision=revision, timeout=timeout, **ask),
            deadline_s=timeout * 2)  # the client's timeout is per read, not per call
        commit = info.sha if isinstance(info.sha, str) else ""
        if not FULL_SHA.match(commit.lower()):
            raise HubError(UNREACHABLE, f"model_info {where}: the Hub gave no commit id "
                           f"(sha={info.sha!r})")
        return ResolvedRepo(commit.lower(), from_siblings(info.siblings) if listing else None)

    def refs(self, repo: str) -> RepoRefs:
        """Branch, tag and convert names (`list_repo_refs`), to say why a revision moves."""
        refs = self.call(f"list_repo_refs {repo}", lambda api: api.list_repo_refs(repo),
                         deadline_s=self.settings.timeout_s * 2)
        return RepoRefs(
            branches=frozenset(b.name for b in refs.branches),
            tags=frozenset(t.name for t in refs.tags),
            converts=frozenset(c.name for c in refs.converts))

    def tree(self, repo: str, commit: str) -> list[RemoteFile]:
        """Fallback listing (`list_repo_tree`, paged by the client) at the resolved commit."""
        entries = self.call(f"list_repo_tree {repo}@{commit}", lambda api: list(
            api.list_repo_tree(repo, revision=commit, recursive=True, expand=False)),
            deadline_s=self.settings.timeout_s * 4)
        return from_tree(entries)
