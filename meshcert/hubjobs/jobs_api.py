"""The launcher's one door to HF Jobs: huggingface_hub's HfApi, retried and redacted.

Every call goes through certify's retry rules (429, 5xx and dropped connections retried with
backoff that honours Retry-After) and every failure becomes a HubError whose message never
holds the token. The token goes to a job only as a secret (`secrets=`), never in `env`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from meshcert.core.hub.access import identify
from meshcert.core.hub.errors import HubError, Redactor, from_exception
from meshcert.core.hub.retry import Sleep, call_with_retries, default_sleep
from meshcert.core.hub.settings import HubSettings
from meshcert.hubjobs.hardware import Flavor, flavor_of

if TYPE_CHECKING:
    from huggingface_hub import HfApi

T = TypeVar("T")
TERMINAL_STAGES = frozenset({"COMPLETED", "CANCELED", "ERROR", "DELETED"})


@dataclass(frozen=True)
class Mount:
    """A repo volume: mounted read-only at `path`, pinned at `revision` (a commit)."""

    repo: str
    revision: str
    path: str
    repo_type: str = "model"


@dataclass(frozen=True)
class JobSpec:
    image: str
    command: list[str]
    flavor: str
    timeout_s: int
    labels: dict[str, str]
    mounts: list[Mount] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)  # values never shown anywhere


@dataclass(frozen=True)
class JobState:
    job_id: str
    stage: str
    message: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    flavor: str | None = None

    @property
    def finished(self) -> bool:
        return self.stage in TERMINAL_STAGES


class Jobs(Protocol):
    """What the launcher needs from HF Jobs."""

    def hardware(self) -> list[Flavor]: ...
    def run(self, spec: JobSpec) -> JobState: ...
    def inspect(self, job_id: str) -> JobState: ...
    def logs(self, job_id: str, *, follow: bool = False) -> Iterator[str]: ...
    def cancel(self, job_id: str) -> None: ...
    def list(self, labels: dict[str, str] | None = None) -> list[JobState]: ...


def _state(info: Any) -> JobState:
    status = getattr(info, "status", None)
    stage = getattr(status, "stage", None) or "UNKNOWN"
    flavor = getattr(info, "flavor", None)
    return JobState(job_id=str(info.id), stage=str(getattr(stage, "value", stage)),
                    message=getattr(status, "message", None),
                    labels=dict(getattr(info, "labels", None) or {}),
                    flavor=str(getattr(flavor, "value", flavor)) if flavor else None)


class HubJobs:
    """`Jobs` on the Hub at `settings.endpoint`, in `namespace` (None: the token's user)."""

    def __init__(self, settings: HubSettings, *, token: str | None, namespace: str | None = None,
                 sleep: Sleep = default_sleep) -> None:
        from huggingface_hub import HfApi

        self._api: HfApi = HfApi(endpoint=settings.endpoint, token=token)
        self._token = token
        self._settings = settings
        self._namespace = namespace
        self._redact = Redactor([token])
        self._sleep = sleep
        self._whoami: dict[str, Any] | None = None  # set by identify()

    def _call(self, action: str, call: Any) -> Any:
        return call_with_retries(
            call, classify=lambda exc: from_exception(exc, action=action,
                                                      redact=self._redact.scrub),
            settings=self._settings, sleep=self._sleep)

    def identify(self) -> dict[str, Any]:
        """Who the token is, asked before any work with a bounded retry budget; AccessRefused
        (meshcert.core.hub.access) without a usable token or when the Hub cannot be reached."""
        from meshcert.core.hub.access import find_token

        token = find_token(self._token)
        self._whoami = identify(self._api, token, endpoint=self._settings.endpoint,
                                redact=self._redact.scrub, sleep=self._sleep)
        return self._whoami

    def whoami(self) -> dict[str, Any] | None:
        """Who the token is (None without a token); asked once."""
        from huggingface_hub import get_token

        if self._whoami is not None:
            return self._whoami
        if not (self._token or get_token()):
            return None
        answer: dict[str, Any] = self._call("whoami", self._api.whoami)
        self._whoami = answer
        return answer

    def dataset_readable(self, repo_id: str) -> bool:
        """Whether the dataset repo exists and this token may read it (False on the Hub's
        not-found answer, which it also gives for a private repo the token cannot see)."""
        from meshcert.core.hub.errors import HubError

        try:
            self._call(f"reading dataset {repo_id}",
                       lambda: self._api.repo_info(repo_id, repo_type="dataset"))
        except HubError as exc:
            if exc.code in ("hub_repo_not_found", "hub_revision_not_found"):
                return False
            raise
        return True

    def hardware(self) -> list[Flavor]:
        infos = self._call("listing the job hardware", self._api.list_jobs_hardware)
        return [f for info in infos if (f := flavor_of(info)) is not None]

    def run(self, spec: JobSpec) -> JobState:
        from huggingface_hub import Volume

        volumes = [Volume(type=m.repo_type, source=m.repo, mount_path=m.path,
                          revision=m.revision, read_only=True) for m in spec.mounts]
        info = self._call("submitting a job", lambda: self._api.run_job(
            image=spec.image, command=spec.command, env=spec.env or None,
            secrets=spec.secrets or None, flavor=spec.flavor, timeout=spec.timeout_s,
            labels=spec.labels, volumes=volumes or None, namespace=self._namespace))
        return _state(info)

    def inspect(self, job_id: str) -> JobState:
        return _state(self._call(f"inspecting job {job_id}", lambda: self._api.inspect_job(
            job_id=job_id, namespace=self._namespace)))

    def logs(self, job_id: str, *, follow: bool = False) -> Iterator[str]:
        try:
            yield from self._api.fetch_job_logs(job_id=job_id, namespace=self._namespace,
                                                follow=follow)
        except HubError:
            raise
        except Exception as exc:  # classified: the message never holds the token
            raise from_exception(exc, action=f"reading the logs of job {job_id}",
                                 redact=self._redact.scrub) from None

    def cancel(self, job_id: str) -> None:
        self._call(f"cancelling job {job_id}", lambda: self._api.cancel_job(
            job_id=job_id, namespace=self._namespace))

    def list(self, labels: dict[str, str] | None = None) -> list[JobState]:
        # huggingface_hub 2.4's list_jobs asks the module-level `whoami` (the default endpoint,
        # not this client's) for a missing namespace: ask this client instead
        namespace = self._namespace or str((self.whoami() or {}).get("name"))
        infos = self._call("listing jobs", lambda: list(self._api.list_jobs(
            labels=labels or None, namespace=namespace)))
        states = [_state(info) for info in infos]  # filtered here too: never trust a filter
        return [s for s in states if all(s.labels.get(k) == v
                                         for k, v in (labels or {}).items())]


def redacted(error: HubError) -> str:
    return f"{error.code}: {error.message}"
