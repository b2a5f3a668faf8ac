"""serve.toml -> `ServeConfig` (docs/serve.md shows a complete file).

The contract keys ([webhook] secret_env, [state] dir, [signing] key, [attestations] repo,
[[watch]] repo, [[catalog]] repo) are required; the budgets have defaults. Relative paths are
read from the config file's folder. The secret itself never is in the file: it is read from the
environment variable the file names, and only its presence is ever reported.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from meshcert.core.errors import ErrorKind, MeshcertError

DEFAULT_SECRET_ENV = "MESHCERT_WEBHOOK_SECRET"


class ConfigError(MeshcertError):
    """serve.toml (or what it points at) cannot be used."""

    kind = ErrorKind.USAGE


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WebhookSection(_Section):
    secret_env: str = DEFAULT_SECRET_ENV
    max_body_bytes: int = Field(default=1 << 20, ge=1024, le=16 << 20)


class StateSection(_Section):
    dir: str = "meshcert-serve"
    delivery_days: float = Field(default=7.0, gt=0)  # how long a Webhook-Id is remembered


class SigningSection(_Section):
    key: str
    verifier_id: str | None = None


class AttestationsSection(_Section):
    repo: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")


class WatchSection(_Section):
    repo: str  # a glob over ns/name, or a name


class CatalogSection(_Section):
    repo: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")


class TrustSection(_Section):
    file: str | None = None  # a trust policy (trust.toml), hashed into every job's key


class BudgetSection(_Section):
    max_jobs: int = Field(default=2, ge=1, le=64)  # tasks running at once, over all repos
    lease_s: float = Field(default=600.0, ge=5)  # renewed by a running task (/status)
    max_attempts: int = Field(default=3, ge=1, le=20)  # a task the Hub keeps failing
    retry_s: float = Field(default=30.0, ge=0)  # wait before a failed task is tried again
    drain_s: float = Field(default=20.0, ge=0)  # SIGTERM: how long running tasks may finish
    max_catalog_packages: int = Field(default=100, ge=1)  # packages one catalog PR certifies
    comment_attempts: int = Field(default=4, ge=1, le=20)  # a comment the Hub refuses (5xx)


class HfJobsSection(_Section):
    """Full hashing on HF Jobs (`models certify --hf-job`'s plan, slices and cost cap): off
    (`stages = 0`) by default, when a certification is header-only (the Hub's LFS SHA-256 as
    the digests). Jobs cost money: unless `confirm = true` the plan and its maximum cost are
    reported and the certification stays header-only (a dry run), and a plan above
    `max_cost_usd` is never submitted."""

    stages: int = Field(default=0, ge=0, le=256)  # slice jobs a certification runs; 0: none
    flavor: str = "auto"  # auto: the cheapest CPU flavor of the Hub's list that fits
    install: str | None = None  # what each job pip-installs (default: this meshcert)
    max_cost_usd: float = Field(default=0.0, ge=0)  # a certification's cap (jobs to timeout)
    confirm: bool = False  # false: a dry run (the plan and its cost, nothing submitted)
    poll_s: float = Field(default=10.0, gt=0, le=600)  # how often a job's state is read

    @property
    def runs_jobs(self) -> bool:
        """Whether a certification submits jobs (a confirmed plan with a budget)."""
        return self.stages > 0 and self.confirm

    def mode(self) -> str:
        """How a verdict is produced, part of every job's key: a header-only verdict is not
        the verdict of full hashing. The cap is part of it: a plan above one cap stays
        header-only, and a higher cap must certify again rather than re-use that verdict."""
        if not self.runs_jobs:
            return "header-only"
        return f"hf-jobs/{self.stages}/{self.flavor}/{self.max_cost_usd!r}"


class ReleaseSection(_Section):
    mesh_llm: str = Field(pattern=r"^\d+\.\d+(\.\d+)?$")
    runtime_abi: str | None = Field(default=None, pattern=r"^\d+\.\d+(\.\d+)?$")


class RecheckSection(_Section):
    """`catalog recheck` run by the service: every catalog against each release listed."""

    matrix: str = "release-matrix.json"  # the release matrix (/status shows it)
    interval_hours: float = Field(default=0.0, ge=0)  # 0: only by hand
    open_discussions: bool = True
    release: list[ReleaseSection] = Field(default_factory=list)


class ServeConfig(_Section):
    webhook: WebhookSection = Field(default_factory=WebhookSection)
    state: StateSection = Field(default_factory=StateSection)
    signing: SigningSection
    attestations: AttestationsSection
    watch: list[WatchSection] = Field(default_factory=list)
    catalog: list[CatalogSection] = Field(default_factory=list)
    trust: TrustSection = Field(default_factory=TrustSection)
    budgets: BudgetSection = Field(default_factory=BudgetSection)
    recheck: RecheckSection = Field(default_factory=RecheckSection)
    hf_jobs: HfJobsSection = Field(default_factory=HfJobsSection)
    base_dir: str = "."  # the config file's folder (set by load_config, not read)

    def path(self, value: str) -> Path:
        """A path of the file, relative to the config file's folder."""
        given = Path(os.path.expanduser(value))
        return given if given.is_absolute() else Path(self.base_dir) / given

    @property
    def state_dir(self) -> Path:
        return self.path(self.state.dir)

    def watches(self, repo: str) -> bool:
        """Whether `repo` (ns/name) is a package repo this service certifies: the namespace
        and the name each matched by their part of a glob (a `*` never spans the `/`), case
        included, as the Hub spells them (a payload with another spelling is not acted on:
        its verdict would be filed under a name the repo does not have)."""
        parts = repo.split("/")
        if len(parts) != 2:
            return False
        for w in self.watch:
            globs = w.repo.split("/")
            if len(globs) == 2 and all(fnmatch.fnmatchcase(p, g) for p, g in
                                       zip(parts, globs, strict=True)):
                return True
        return False

    def is_catalog(self, repo: str) -> bool:
        return any(repo == c.repo for c in self.catalog)

    def secret(self, environ: dict[str, str] | None = None) -> str:
        """The webhook secret from the environment; ConfigError when it is unset or empty."""
        env = os.environ if environ is None else environ
        value = env.get(self.webhook.secret_env, "")
        if not value:
            raise ConfigError(f"the webhook secret is not set: export {self.webhook.secret_env}"
                              " (serve.toml [webhook] secret_env names it)")
        return value

    def trust_digest(self) -> str:
        """The SHA-256 of the trust policy file (or of nothing): part of every job's key."""
        if self.trust.file is None:
            return hashlib.sha256(b"").hexdigest()
        try:
            return hashlib.sha256(self.path(self.trust.file).read_bytes()).hexdigest()
        except OSError as exc:
            raise ConfigError(f"[trust] file {self.trust.file}: {exc.strerror or exc}") from None


def load_config(path: str | os.PathLike[str]) -> ServeConfig:
    """Read and check serve.toml; ConfigError saying what is wrong and where."""
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not TOML: {exc}") from None
    try:
        config = ServeConfig.model_validate(data)
    except ValidationError as exc:
        from meshcert.core.validation import problems

        raise ConfigError(f"{path}: {problems(exc)}") from None
    if config.hf_jobs.stages and config.hf_jobs.confirm and not config.hf_jobs.max_cost_usd:
        raise ConfigError(f"{path}: [hf_jobs] confirm = true needs max_cost_usd, the most "
                          "one certification's jobs may cost")
    if not config.watch and not config.catalog:
        raise ConfigError(f"{path}: nothing to watch: add a [[watch]] repo or a [[catalog]] "
                          "repo")
    return config.model_copy(update={"base_dir": str(Path(path).resolve().parent)})
