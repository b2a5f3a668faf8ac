"""`package job org/repo[@rev]:QUANT --target ns/repo`: write, publish and certify a layer
package on Hugging Face Jobs, next to the source, with everything that can fail checked first.

Pre-flight, before any money is spent (`plan_package_job`):
- the source revision is resolved to a commit, its files listed (shards, `mmproj*`
  projectors) and their headers read by range requests: the package is planned exactly as
  the job will write it (`writer`), so the largest artifact and the disk a streaming write
  needs (`--publish --delete-after-upload`: a few artifacts, not the package) are known;
- the model id, the target name and the token are checked here (the token must be able to
  create and push to the target's namespace), not after paying;
- the cheapest CPU flavor of `list_jobs_hardware()` whose disk, memory and cores fit (or the
  one asked for, checked); the timeout from the source bytes at `costs.WRITE_BYTES_PER_S`
  plus start-up (or the one asked for); the maximum cost is that timeout at the flavor's price.

The job (`job_spec`) runs a stock Python image: meshcert pip-installed (no compiler, no clone),
then `package write /source/... --publish --delete-after-upload` with the source repo mounted
read-only at the resolved commit, HF_TOKEN only as a secret, labels naming source, target and
meshcert version; it prints the published package's certification through its logs.

Publisher metadata as mesh-llm's job adds it: every one of the five publisher files present at
the commit is passed as `--publisher-metadata /source/<basename>` (read inside the job from the
mount; `no_publisher_metadata` leaves them out), after the pre-flight here has read them and run
the writer's checks (config.json geometry, typed defaults). A local `--generation-defaults`
file is validated here and reaches the job as its content in the plain env value
GENERATION_DEFAULTS_JSON (as mesh-llm's job takes it; never a secret), which the job script
writes to a file for `--generation-defaults`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from meshcert.core.errors import Refused
from meshcert.core.hub.access import may_write
from meshcert.core.version import __version__
from meshcert.hubjobs.commands import (
    GENERATION_DEFAULTS,
    GENERATION_DEFAULTS_ENV,
    IMAGE,
    JOB_ENV,
    SOURCE_MOUNT,
    WORK,
    job_script,
)
from meshcert.hubjobs.costs import FIXED_S, WRITE_BYTES_PER_S, timeout_for
from meshcert.hubjobs.hardware import Flavor, Needs, NoFlavor, pick_flavor
from meshcert.hubjobs.jobs_api import JobSpec, Mount

REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
MODEL_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*(:[A-Za-z0-9][\w.-]*)?$")
REPORT_TAG = "package-write"

if TYPE_CHECKING:
    from meshcert.certify.report import CertReport
RAM_BYTES = 4 * 10**9  # the writer stays under 300 MB; pip, Python and headroom
CPUS = 2


# --attest-key: the signing key's PEM reaches the job as this secret (never env, args or logs)
ATTEST_KEY_SECRET = "MESHCERT_ATTEST_KEY"


@dataclass
class PackageJobPlan:
    source: str
    repo: str
    commit: str
    primary: str  # the repo path of the model file (first shard)
    files: list[tuple[str, int]]  # every repo file the job reads: (path, bytes)
    projectors: list[str]
    target: str
    model_id: str
    fmt: str
    artifacts: int
    package_bytes: int
    largest_artifact: int
    disk_bytes_needed: int
    flavor: Flavor
    timeout_s: int
    install: str
    catalog: str | None
    experimental: bool
    job_id: str | None = None
    notes: list[str] = field(default_factory=list)
    publisher_files: list[str] = field(default_factory=list)  # repo paths, manifest order
    publisher_defaults: dict[str, Any] | None = None
    generation_defaults: str | None = None  # the validated file's content (the env value)
    attest: bool = False  # --attest-key: the job signs; the key reaches it as a secret only

    @property
    def source_bytes(self) -> int:
        return sum(size for _, size in self.files)

    @property
    def max_cost_usd(self) -> float:
        return round(self.flavor.cost_usd(self.timeout_s), 6)

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source, "source_repo": self.repo, "source_commit": self.commit,
            "files": [{"path": p, "bytes": b} for p, b in self.files],
            "target": self.target, "model_id": self.model_id, "format": self.fmt,
            "artifacts": self.artifacts, "package_bytes": self.package_bytes,
            "disk_bytes_needed": self.disk_bytes_needed, "flavor": self.flavor.name,
            "unit_cost_usd": self.flavor.unit_cost_usd,
            "unit_seconds": self.flavor.unit_seconds, "timeout_seconds": self.timeout_s,
            "max_cost_usd": self.max_cost_usd, "rate_bytes_per_s": WRITE_BYTES_PER_S,
            "fixed_seconds": FIXED_S, "install": self.install, "catalog": self.catalog,
            "experimental": self.experimental, "notes": list(self.notes),
            "publisher_metadata": list(self.publisher_files),
            "publisher_defaults": self.publisher_defaults,
            "generation_defaults": self.generation_defaults is not None,
            "attest": self.attest,
            "job_id": self.job_id,
        }


def check_names(target: str, model_id: str | None) -> None:
    if not REPO_ID.match(target):
        raise Refused(f"--target {target!r} is not a repo id (namespace/name)")
    if model_id is not None and not MODEL_ID.match(model_id):
        raise Refused(f"--model-id {model_id!r} is not a model coordinate such as "
                         "org/repo-GGUF:Q4_K_M (letters, digits, '.', '_', '-'; one '/', "
                         "an optional ':QUANT')")


def check_catalog(catalog: str, whoami: dict[str, Any], readable: bool | None) -> None:
    """Refuse a catalog the job could not add its entry to: not a repo id, missing or
    unreadable, or a token that can neither push to it nor open a pull request (a read
    token). A job with such a catalog would publish and certify, then end incomplete."""
    if not REPO_ID.match(catalog):
        raise Refused(f"--catalog {catalog!r} is not a dataset repo id (namespace/name), "
                         "or 'none'")
    if readable is False:
        raise Refused(f"--catalog {catalog}: the dataset does not exist or this token "
                         "cannot read it; create it, fix the name, or give --catalog none")
    if not may_write(whoami, catalog.split("/")[0]) and not may_open_pull_request(whoami):
        raise Refused(f"--catalog {catalog}: the token of {whoami.get('name')!r} can "
                         "neither push to it nor open a pull request (a read token); use a "
                         "write token, or give --catalog none")


def may_open_pull_request(whoami: dict[str, Any]) -> bool:
    """A write token (or a fine-grained one that may write discussions or repos somewhere)
    can open a pull request on a repo it can read."""
    access = ((whoami.get("auth") or {}).get("accessToken") or {})
    if access.get("role") == "write":
        return True
    if access.get("role") == "fineGrained":
        return any({"discussion.write", "repo.write"} & set(scope.get("permissions") or [])
                   for scope in (access.get("fineGrained") or {}).get("scoped") or [])
    return False


def plan_package_job(source: str, *, target: str, model_id: str | None, fmt: str,
                     flavors: list[Flavor], flavor_name: str, timeout_s: int | None,
                     install: str, catalog: str | None, experimental: bool,
                     whoami: dict[str, Any] | None, no_publisher_metadata: bool = False,
                     generation_defaults: str | None = None,
                     catalog_readable: bool | None = None) -> PackageJobPlan:
    """Everything the job needs, decided here; Refused when it must not be submitted.
    Raises the writer's Refused for a source that cannot be planned. `catalog_readable`: whether
    the catalog dataset exists and the token can read it (None: not asked)."""
    from meshcert.writer.hub_source import default_model_id, load_hub, parse_coordinate
    from meshcert.writer.write import WriteRequest, is_hub_source, plan_for

    if parse_coordinate(source) is None or not is_hub_source(source):
        raise Refused(f"{source!r} is not org/repo[@rev]:QUANT or "
                         "hf://org/repo@rev/path.gguf: a job reads its source from the Hub")
    model_id = model_id or default_model_id(source)
    check_names(target, model_id)
    assert model_id is not None
    if whoami is None:
        raise Refused("no Hugging Face token: set HF_TOKEN (it reaches the job as a secret)")
    namespace = target.split("/")[0]
    if not may_write(whoami, namespace):
        raise Refused(f"the token of {whoami.get('name')!r} cannot create or push repos "
                         f"in {namespace!r}: use a write token for that namespace")
    if catalog is not None:
        check_catalog(catalog, whoami, catalog_readable)
    request = WriteRequest(source=source, out_dir=".", fmt="v1" if fmt == "v1" else "v2",
                           pick_up_publisher_metadata=not no_publisher_metadata,
                           generation_defaults=generation_defaults)
    model = load_hub(source, publisher_metadata=request.pick_up_publisher_metadata
                     and request.fmt == "v2")
    try:
        plan = plan_for(request, model)  # refuses what the job's writer would refuse
        publisher_files = [a.publisher.basename for a in plan.artifacts
                           if a.publisher is not None]
        files = [(f.location, f.size) for f in model.files]
        projectors = [p.location for p in model.projectors]
        files += [(p.location, p.size) for p in model.projectors]
        files += [(p.basename, p.size) for p in model.publisher_files]
        repo, commit = model.repo or "", model.revision or ""
        primary = model.primary.location
    finally:
        model.close()
    from meshcert.publish.streaming import streaming_disk_bytes
    from meshcert.publish.write_and_publish import ROOM

    needs = Needs(disk_bytes=streaming_disk_bytes(plan, ROOM) + (1 << 30),
                  ram_bytes=RAM_BYTES, cpus=CPUS)
    try:
        flavor = pick_flavor(flavors, flavor_name, needs, "this streaming write")
    except NoFlavor as exc:
        raise Refused(str(exc)) from None
    sizes = [a.size for a in plan.all_artifacts()]
    derived = timeout_for(sum(size for _, size in files), WRITE_BYTES_PER_S)
    notes = []
    if timeout_s is not None and timeout_s < derived:
        notes.append(f"--timeout {timeout_s} s is below the {derived} s the source's size "
                     "suggests; the job may be killed by it")
    if catalog is not None and not may_write(whoami, catalog.split("/")[0]):
        notes.append(f"this token cannot push to {catalog}: its entry is proposed as a "
                     "pull request")
    return PackageJobPlan(
        source=source, repo=repo, commit=commit, primary=primary, files=files,
        projectors=projectors, target=target, model_id=model_id, fmt=fmt,
        artifacts=len(sizes), package_bytes=sum(sizes), largest_artifact=max(sizes),
        disk_bytes_needed=needs.disk_bytes, flavor=flavor,
        timeout_s=timeout_s if timeout_s is not None else derived, install=install,
        catalog=catalog, experimental=experimental, notes=notes,
        publisher_files=publisher_files, publisher_defaults=plan.publisher_defaults,
        generation_defaults=_read_text(generation_defaults))


def _read_text(path: str | None) -> str | None:
    """The --generation-defaults file as the job gets it (already validated by plan_for)."""
    if path is None:
        return None
    with open(path, "rb") as handle:
        return handle.read().decode("utf-8")


def write_command(plan: PackageJobPlan) -> list[str]:
    args = ["package", "write", f"{SOURCE_MOUNT}/{plan.primary}", "--out-dir", WORK,
            "--model-id", plan.model_id, "--source-repo", plan.repo, "--source-revision",
            plan.commit, "--source-file", plan.primary, "--format", plan.fmt,
            "--publish", plan.target, "--delete-after-upload"]  # its progress: the logs
    for projector in plan.projectors:
        args += ["--projector", f"{SOURCE_MOUNT}/{projector}"]
    if plan.catalog is not None:
        args += ["--catalog", plan.catalog]
    if plan.experimental:
        args.append("--experimental")
    for basename in plan.publisher_files:  # read in the job from the mounted commit
        args += ["--publisher-metadata", f"{SOURCE_MOUNT}/{basename}"]
    if plan.generation_defaults is not None:
        args += ["--generation-defaults", GENERATION_DEFAULTS]
    if plan.attest:  # the name of the secret, never the key
        args += ["--attest-key", f"env:{ATTEST_KEY_SECRET}"]
    return job_script(plan.install, [*args, "--report-out"], REPORT_TAG)


def job_spec(plan: PackageJobPlan, token: str | None, attest_key_pem: str | None = None
             ) -> JobSpec:
    """The job; `attest_key_pem` (--attest-key) goes in `secrets` only, like the token."""
    secrets = {"HF_TOKEN": token} if token else {}
    if plan.attest and attest_key_pem is not None:
        secrets[ATTEST_KEY_SECRET] = attest_key_pem
    return JobSpec(
        image=IMAGE, command=write_command(plan), flavor=plan.flavor.name,
        timeout_s=plan.timeout_s,
        labels={"meshcert": __version__, "meshcert-task": "package-write",
                "source": plan.repo.replace("/", "--"), "source-commit": plan.commit[:12],
                "target": plan.target.replace("/", "--")},
        mounts=[Mount(repo=plan.repo, revision=plan.commit, path=SOURCE_MOUNT)],
        env=dict(JOB_ENV) | ({GENERATION_DEFAULTS_ENV: plan.generation_defaults}
                             if plan.generation_defaults is not None else {}),
        secrets=secrets)


def returned_report(streamed: list[str], stored: Callable[[], Iterable[str]]
                    ) -> CertReport | str:
    """The certification a package job handed back through its logs (the report channel):
    decoded from the lines streamed while following it, else (a line lost while streaming)
    from its whole stored log, read by `stored`; or why none came back (the channel is broken,
    or what it carries is not a certification). A Hub failure reading the log is raised."""
    from meshcert.certify.report import CertReport
    from meshcert.hubjobs.report_channel import ChannelError, decode

    try:
        try:
            raw = decode(streamed, REPORT_TAG)
        except ChannelError:  # a line lost while streaming: the stored log has them all
            raw = decode(list(stored()), REPORT_TAG)
        return CertReport.model_validate_json(raw)
    except (ChannelError, ValueError) as exc:
        return str(exc)
