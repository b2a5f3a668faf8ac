"""What the launcher asks of HF Jobs, through the Hub door (meshcert.core.hub.api.HubApi).

Every call is retried there (429, 5xx and dropped connections, with backoff that honours
Retry-After) and every failure becomes a HubError whose message never holds the token. The
token goes to a job only as a secret (`secrets=`), never in `env`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from meshcert.core.hub.api import HubApi
from meshcert.core.hub.errors import HubError, Redactor
from meshcert.core.hub.retry import Sleep, default_sleep
from meshcert.core.hub.settings import HubSettings
from meshcert.hubjobs.hardware import Flavor, flavor_of

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
        self._hub = HubApi(settings, token=token, redact=Redactor([token]), sleep=sleep)
        self._token = token
        self._namespace = namespace
        self._whoami: dict[str, Any] | None = None  # set by identify()

    def identify(self) -> dict[str, Any]:
        """Who the token is, asked before any work with a bounded retry budget; Refused
        (meshcert.core.errors) without a usable token or when the Hub cannot be reached."""
        self._whoami = self._hub.identify().whoami
        return self._whoami

    def whoami(self) -> dict[str, Any] | None:
        """Who the token is (None without a token); asked once."""
        from huggingface_hub import get_token

        if self._whoami is not None:
            return self._whoami
        if not (self._token or get_token()):
            return None
        answer: dict[str, Any] = self._hub.call("whoami", lambda api: api.whoami())
        self._whoami = answer
        return answer

    def dataset_readable(self, repo_id: str) -> bool:
        """Whether the dataset repo exists and this token may read it (False on the Hub's
        not-found answer, which it also gives for a private repo the token cannot see)."""
        try:
            self._hub.call(f"reading dataset {repo_id}",
                           lambda api: api.repo_info(repo_id, repo_type="dataset"))
        except HubError as exc:
            if exc.code in ("hub_repo_not_found", "hub_revision_not_found"):
                return False
            raise
        return True

    def hardware(self) -> list[Flavor]:
        infos = self._hub.call("listing the job hardware", lambda api: api.list_jobs_hardware())
        return [f for info in infos if (f := flavor_of(info)) is not None]

    def run(self, spec: JobSpec) -> JobState:
        from huggingface_hub import Volume

        volumes = [Volume(type=m.repo_type, source=m.repo, mount_path=m.path,
                          revision=m.revision, read_only=True) for m in spec.mounts]
        info = self._hub.call("submitting a job", lambda api: api.run_job(
            image=spec.image, command=spec.command, env=spec.env or None,
            secrets=spec.secrets or None, flavor=spec.flavor, timeout=spec.timeout_s,
            labels=spec.labels, volumes=volumes or None, namespace=self._namespace))
        return _state(info)

    def inspect(self, job_id: str) -> JobState:
        return _state(self._hub.call(f"inspecting job {job_id}", lambda api: api.inspect_job(
            job_id=job_id, namespace=self._namespace)))

    def logs(self, job_id: str, *, follow: bool = False) -> Iterator[str]:
        return self._hub.stream(f"reading the logs of job {job_id}",
                                lambda api: api.fetch_job_logs(
                                    job_id=job_id, namespace=self._namespace, follow=follow))

    def cancel(self, job_id: str) -> None:
        self._hub.call(f"cancelling job {job_id}", lambda api: api.cancel_job(
            job_id=job_id, namespace=self._namespace))

    def list(self, labels: dict[str, str] | None = None) -> list[JobState]:
        # huggingface_hub 2.4's list_jobs asks the module-level `whoami` (the default endpoint,
        # not this client's) for a missing namespace: ask this client instead
        namespace = self._namespace or str((self.whoami() or {}).get("name"))
        infos = self._hub.call("listing jobs", lambda api: list(api.list_jobs(
            labels=labels or None, namespace=namespace)))
        states = [_state(info) for info in infos]  # filtered here too: never trust a filter
        return [s for s in states if all(s.labels.get(k) == v
                                         for k, v in (labels or {}).items())]


def redacted(error: HubError) -> str:
    return f"{error.code}: {error.message}"
