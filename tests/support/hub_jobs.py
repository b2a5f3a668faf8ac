"""The fake Hub's Jobs API, answering what huggingface_hub 2.4's HfApi sends, and running the
jobs for real on this machine.

Routes: `POST /api/jobs/{ns}` (run_job), `GET /api/jobs/{ns}` (list_jobs: `stage=` and
`label=k=v` filters), `GET /api/jobs/{ns}/{id}` (inspect_job, wait_for_job),
`GET /api/jobs/{ns}/{id}/logs` (fetch_job_logs: server-sent events `data: {"timestamp",
"data"}`, the stream stays open while the job runs and closes when it ends, as the client's
follow and no-follow modes both expect), `POST /api/jobs/{ns}/{id}/cancel`,
`GET /api/jobs/hardware` (list_jobs_hardware; `hub.jobs.hardware` is the list, per test).

How a job runs (honest, not a container): the image is recorded, not pulled; the command runs
on this machine under `unshare --mount --propagation private` (job_sandbox.py) with each
model or dataset volume materialized at its commit into a temporary directory and mounted
read-only at its mount path; everything else on the host is visible as it is. The environment
is small: PATH starting with a virtualenv this server creates (seeing the packages the test's
own interpreter sees, a virtualenv's included, with `pip` pointing at it, so `pip install` in
a job never touches the developer's Python), HOME a
per-job directory, HF_ENDPOINT this Hub, then `hub.jobs.extra_env`, the job's env and its
secrets. Secrets are never in an API answer, and their values are masked (`***`) in the logs the
server keeps. Stages: RUNNING, then COMPLETED (exit 0), ERROR (other exit codes, or the timeout,
default 30 minutes, killed the process group) or CANCELED (cancel killed it).

Volume rules: types model and dataset (bucket and space are refused here), read-only; the
revision may be anything the repo resolves (a branch, as mesh-llm once sent, or a commit) and is
pinned to its commit at submission; a revision the repo does not have is refused (400).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.support.hub_http import Answer, Request, StreamAnswer, error, iso_time, json_answer
from tests.support.hub_repo import RepoType

if TYPE_CHECKING:
    from tests.support.hub_server import FakeHub

SANDBOX = Path(__file__).with_name("job_sandbox.py")
DEFAULT_TIMEOUT_S = 30 * 60
TERMINAL = frozenset({"COMPLETED", "CANCELED", "ERROR", "DELETED"})
KEEP_ALIVE_S = 15.0
MASK = "***"
MIN_MASKED = 4  # shorter secret values are not masked (they would garble every line)
HOST_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _flavor(name: str, pretty: str, cpu: int, ram_gb: int, disk_gb: int,
            usd_per_hour: float) -> dict[str, Any]:
    per_minute = usd_per_hour / 60
    return {"name": name, "prettyName": pretty, "cpu": f"{cpu} vCPU", "ram": f"{ram_gb} GB",
            "ephemeralStorage": f"{disk_gb} GB", "accelerator": None,
            "unitCostMicroUSD": round(per_minute * 1_000_000),
            "unitCostUSD": round(per_minute, 6), "unitLabel": "minute"}


# the published CPU flavors (writer.md: vCPU / RAM / ephemeral disk / $ per hour)
DEFAULT_HARDWARE: tuple[dict[str, Any], ...] = (
    _flavor("cpu-basic", "CPU Basic", 2, 16, 50, 0.01),
    _flavor("cpu-upgrade", "CPU Upgrade", 8, 32, 50, 0.03),
    _flavor("cpu-xl", "CPU XL", 16, 124, 1000, 1.00),
)


def _see_test_packages(venv: Path) -> None:
    """Let the job's Python import exactly what the test's own interpreter imports.

    `python -m venv` bases the new venv on the *base* interpreter: run from a virtualenv (the
    usual way on Debian and Ubuntu), `--system-site-packages` would show the job the system's
    packages, not the test's (no huggingface_hub, no meshcert; or a llama-cpp-python the test
    does not have, which changes a certification's findings). So from a virtualenv the job
    venv is made without it, and in every case a .pth file adds the test interpreter's site
    directories after the job venv's own, with `site.addsitedir` so their own .pth files
    (editable installs) work too. A `pip install` in a job still goes into the job venv only.
    """
    user = [site.getusersitepackages()] if site.ENABLE_USER_SITE else []
    dirs = [d for d in (*site.getsitepackages(), *user) if Path(d).is_dir()]
    found = sorted((venv / "lib").glob("python*/site-packages"))
    if not found:
        raise RuntimeError(f"no site-packages in the jobs' virtualenv {venv}")
    lines = [f"import site; site.addsitedir({d!r})" for d in dirs]
    (found[0] / "zz-test-interpreter.pth").write_text("\n".join(lines) + "\n")


def jobs_supported() -> bool:
    """Whether this machine can run fake-Hub jobs (root and unshare(1) are needed)."""
    return os.geteuid() == 0 and shutil.which("unshare") is not None and shutil.which(
        "mount") is not None


@dataclass(frozen=True)
class Mount:
    repo_type: RepoType
    repo_id: str
    sha: str
    subpath: str
    target: str


@dataclass
class Job:
    id: str
    namespace: str
    owner: str
    spec: dict[str, Any]  # as submitted, secrets' values removed
    secret_names: list[str]
    mounts: list[Mount]
    timeout_s: int
    created_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    stage: str = "SCHEDULING"
    message: str | None = None
    exit_code: int | None = None
    logs: list[tuple[float, str]] = field(default_factory=list)
    canceled: bool = False
    timed_out: bool = False
    process: subprocess.Popen[bytes] | None = None
    changed: threading.Condition = field(default_factory=threading.Condition)

    def info(self) -> dict[str, Any]:
        spec = self.spec
        out: dict[str, Any] = {
            "id": self.id, "createdAt": iso_time(self.created_at),
            "dockerImage": spec.get("dockerImage"), "spaceId": spec.get("spaceId"),
            "command": spec.get("command"), "arguments": spec.get("arguments") or [],
            "environment": spec.get("environment") or {},
            "secrets": {name: None for name in self.secret_names},
            "flavor": spec.get("flavor"), "labels": spec.get("labels"),
            "volumes": spec.get("volumes"), "timeoutSeconds": self.timeout_s,
            "status": {"stage": self.stage, "message": self.message},
            "owner": {"id": hashlib.md5(self.namespace.encode()).hexdigest()[:24],
                      "name": self.namespace, "type": "user"},
            "initiator": {"type": "user", "id": hashlib.md5(self.owner.encode()).hexdigest()[:24],
                          "name": self.owner},
            "durations": self._durations(),
        }
        if self.started_at is not None:
            out["startedAt"] = iso_time(self.started_at)
        if self.finished_at is not None:
            out["finishedAt"] = iso_time(self.finished_at)
        return out

    def _durations(self) -> dict[str, int | None]:
        now = self.finished_at or time.time()
        started = self.started_at
        return {"schedulingSecs": int((started or now) - self.created_at),
                "runningSecs": int(now - started) if started else None,
                "totalSecs": int(now - self.created_at)}


class JobService:
    """Jobs of one fake Hub: submitted, run, watched, cancelled."""

    def __init__(self, hub: FakeHub) -> None:
        self.hub = hub
        self.hardware: list[dict[str, Any]] = [dict(f) for f in DEFAULT_HARDWARE]
        self.extra_env: dict[str, str] = {}  # e.g. PYTHONPATH for a job that runs meshcert
        self.jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._root: Path | None = None
        self._counter = 0

    # --- routes ---------------------------------------------------------------------------
    def handle(self, req: Request) -> Answer | StreamAnswer:
        if req.route == "jobs_hardware":
            return json_answer(self.hardware)
        namespace = req.segments[2]
        if req.token is None:
            return error(401, None, "Invalid credentials in Authorization header"
                         if req.bearer else "You must be authenticated to access this resource")
        if req.route == "jobs_run":
            if not req.token.may_write(namespace):
                return error(403, None, f"You don't have the rights to run jobs under the "
                                        f"namespace \"{namespace}\"")
            return self._run(req, namespace)
        if not req.token.may_read(namespace):
            return error(403, None, f"You don't have access to the jobs of \"{namespace}\"")
        if req.route == "jobs_list":
            return self._list(req, namespace)
        job = self.jobs.get(req.segments[3])
        if job is None or job.namespace != namespace:
            return error(404, None, f"Job {req.segments[3]} not found")
        if req.route == "jobs_inspect":
            return json_answer(job.info())
        if req.route == "jobs_cancel":
            self.cancel(job)
            return json_answer({})
        return self._logs(req, job)

    def _run(self, req: Request, namespace: str) -> Answer:
        assert req.token is not None
        spec = req.json()
        if not isinstance(spec, dict):
            return error(400, None, "a job spec (JSON object) is required")
        refusal = self._refuse_spec(spec)
        if refusal is not None:
            return error(400, None, refusal)
        mounts: list[Mount] = []
        for volume in spec.get("volumes") or []:
            mount = self._mount_of(req, volume)
            if isinstance(mount, str):
                return error(400, None, mount)
            mounts.append(mount)
        secrets = {str(k): str(v) for k, v in (spec.get("secrets") or {}).items()}
        public = {k: v for k, v in spec.items() if k != "secrets"}
        with self._lock:
            self._counter += 1
            job_id = hashlib.sha1(f"{namespace}\0{self._counter}\0{time.time()}".encode()
                                  ).hexdigest()[:24]
            job = Job(job_id, namespace, req.token.user, public, sorted(secrets), mounts,
                      int(spec.get("timeoutSeconds") or DEFAULT_TIMEOUT_S))
            self.jobs[job_id] = job
        threading.Thread(target=self._execute, args=(job, secrets), name=f"job-{job_id}",
                         daemon=True).start()
        return json_answer(job.info())

    def _refuse_spec(self, spec: dict[str, Any]) -> str | None:
        command = spec.get("command")
        if not (isinstance(command, list) and command and all(isinstance(c, str)
                                                              for c in command)):
            return "command must be a non-empty list of strings"
        if not isinstance(spec.get("dockerImage"), str):
            return "this Hub runs Docker images (dockerImage), not Spaces"
        flavors = {f["name"] for f in self.hardware}
        if spec.get("flavor") not in flavors:
            return f"Invalid flavor {spec.get('flavor')!r}: one of {sorted(flavors)}"
        timeout = spec.get("timeoutSeconds")
        if timeout is not None and (not isinstance(timeout, int) or timeout <= 0):
            return f"timeoutSeconds must be a positive integer, not {timeout!r}"
        for name in ("environment", "secrets", "labels"):
            if not isinstance(spec.get(name) or {}, dict):
                return f"{name} must be an object"
        return None

    def _mount_of(self, req: Request, volume: Any) -> Mount | str:
        if not isinstance(volume, dict):
            return f"malformed volume {volume!r}"
        kind, source = volume.get("type", "model"), volume.get("source")
        if kind not in ("model", "dataset"):
            return f"volume type {kind!r} is not offered by this Hub (model and dataset are)"
        target = volume.get("mountPath")
        if not isinstance(target, str) or not target.startswith("/") or target == "/":
            return f"mountPath must be an absolute path below /, not {target!r}"
        if volume.get("readOnly") is False:
            return f"{kind} volumes are read-only"
        repo_type: RepoType = "dataset" if kind == "dataset" else "model"
        repo = self.hub.get_repo(str(source), repo_type)
        if repo is None or self.hub.refuse_read(req, repo) is not None:
            return f"volume source {kind} {source!r} not found"
        revision = volume.get("revision")
        sha = repo.resolve(revision)
        if sha is None:
            return f"volume revision {revision!r} is not a revision of {source}"
        return Mount(repo_type, repo.repo_id, sha, str(volume.get("path") or "").strip("/"),
                     target)

    def _list(self, req: Request, namespace: str) -> Answer:
        stages = set(req.query.get("stage") or [])
        labels = [tuple(v.split("=", 1)) for v in req.query.get("label") or [] if "=" in v]
        found = [job for job in self.jobs.values() if job.namespace == namespace
                 and (not stages or job.stage in stages)
                 and all((job.spec.get("labels") or {}).get(k) == v for k, v in labels)]
        found.sort(key=lambda j: j.created_at, reverse=True)
        return json_answer([job.info() for job in found])

    def _logs(self, req: Request, job: Job) -> StreamAnswer:
        tail = req.param("tail")
        return StreamAnswer(200, self._events(job, int(tail) if tail and tail.isdigit()
                                              else None),
                            {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})

    def _events(self, job: Job, tail: int | None) -> Iterator[bytes]:
        """Every log line so far (or the last `tail`), then new ones until the job ends."""
        with job.changed:
            sent = max(0, len(job.logs) - tail) if tail is not None else 0
        quiet_since = time.monotonic()
        while True:
            with job.changed:
                if sent >= len(job.logs) and job.stage not in TERMINAL:
                    job.changed.wait(timeout=0.5)
                batch, done = job.logs[sent:], job.stage in TERMINAL
                sent += len(batch)
            for stamp, line in batch:
                event = {"timestamp": iso_time(stamp), "data": line}
                yield f"data: {json.dumps(event)}\n\n".encode()
            if batch:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > KEEP_ALIVE_S:
                quiet_since = time.monotonic()
                yield b": keep-alive\n\n"
            if (done and not batch) or self.hub.stopping.is_set():
                return

    # --- running --------------------------------------------------------------------------
    def _workspace(self) -> Path:
        """The server's directory: its virtualenv and one directory per job."""
        with self._lock:
            if self._root is None:
                root = Path(tempfile.mkdtemp(prefix="fake-hub-jobs-"))
                venv = root / "venv"
                shared = ["--system-site-packages"] if sys.prefix == sys.base_prefix else []
                subprocess.run([sys.executable, "-m", "venv", *shared, "--without-pip",
                                str(venv)], check=True, capture_output=True)
                for name in ("pip", "pip3"):  # the host's pip, installing into this venv
                    shim = venv / "bin" / name
                    shim.write_text(f'#!/bin/sh\nexec "{venv}/bin/python" -m pip "$@"\n')
                    shim.chmod(0o755)
                _see_test_packages(venv)
                self._root = root
            return self._root

    def _log(self, job: Job, line: str, secrets: dict[str, str]) -> None:
        for value in secrets.values():
            if len(value) >= MIN_MASKED:
                line = line.replace(value, MASK)
        with job.changed:
            job.logs.append((time.time(), line))
            job.changed.notify_all()

    def _finish(self, job: Job, stage: str, message: str | None) -> None:
        with job.changed:
            job.stage, job.message = stage, message
            job.finished_at = time.time()
            job.changed.notify_all()

    def _execute(self, job: Job, secrets: dict[str, str]) -> None:
        if not jobs_supported():
            self._finish(job, "ERROR", "the fake Hub runs jobs only as root, with unshare(1)")
            return
        workdir = Path(tempfile.mkdtemp(prefix=f"job-{job.id}-", dir=self._workspace()))
        try:
            self._run_process(job, secrets, workdir)
        except Exception as exc:  # a failure of the fake itself: the job errs, visibly
            self._log(job, f"fake hub: {type(exc).__name__}: {exc}", secrets)
            self._finish(job, "ERROR", f"fake hub failure: {exc}")
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _materialize(self, mount: Mount, into: Path) -> None:
        repo = self.hub.get_repo(mount.repo_id, mount.repo_type)
        assert repo is not None
        prefix = f"{mount.subpath}/" if mount.subpath else ""
        into.mkdir(parents=True)
        for path, stored in repo.commits[mount.sha].files.items():
            if not path.startswith(prefix):
                continue
            target = into / path[len(prefix):]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.hub.blobs[stored.key])

    def _environment(self, job: Job, secrets: dict[str, str], home: Path) -> dict[str, str]:
        venv = self._workspace() / "venv"
        # the job's temp dir is this host's (a real job's /tmp is its own): what a job leaves
        # there is seen by the suite's check for leftovers (tests/conftest.py)
        env = {"PATH": f"{venv}/bin:{HOST_PATH}", "HOME": str(home), "LANG": "C.UTF-8",
               "VIRTUAL_ENV": str(venv), "HF_ENDPOINT": self.hub.url,
               "TMPDIR": tempfile.gettempdir()}
        env |= self.extra_env
        env |= {str(k): str(v) for k, v in (job.spec.get("environment") or {}).items()}
        return env | secrets

    def _run_process(self, job: Job, secrets: dict[str, str], workdir: Path) -> None:
        mounts = []
        for i, mount in enumerate(job.mounts):
            source = workdir / "volumes" / str(i)
            self._materialize(mount, source)
            mounts.append({"source": str(source), "target": mount.target})
        home = workdir / "home"
        home.mkdir()
        argv = list(job.spec["command"]) + [str(a) for a in job.spec.get("arguments") or []]
        plan = {"root": str(workdir / "root"), "mounts": mounts, "cwd": str(home),
                "argv": argv}
        with job.changed:
            if job.canceled:
                return
            job.process = subprocess.Popen(
                ["unshare", "--mount", "--propagation", "private", sys.executable,
                 str(SANDBOX), json.dumps(plan)],
                env=self._environment(job, secrets, home), cwd=home, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
            job.stage, job.started_at = "RUNNING", time.time()
            job.logs.append((job.started_at, f"===== Job started at {iso_time(job.started_at)}"
                                             " ====="))
            job.changed.notify_all()
        process = job.process
        reader = threading.Thread(target=self._read_output, args=(job, process, secrets),
                                  daemon=True)
        reader.start()
        # a timer, not Popen.wait(timeout=): that polls with time.sleep, which tests patch
        timer = threading.Timer(job.timeout_s, self._time_out, args=(job, process))
        timer.daemon = True
        timer.start()
        process.wait()
        timer.cancel()
        reader.join(timeout=10)
        job.exit_code = process.returncode
        if job.canceled:
            self._finish(job, "CANCELED", "Job canceled")
        elif job.timed_out:
            self._finish(job, "ERROR", f"Job timeout: it ran longer than {job.timeout_s} s")
        elif process.returncode == 0:
            self._finish(job, "COMPLETED", None)
        else:
            self._finish(job, "ERROR", f"Job failed with exit code: {process.returncode}")

    def _read_output(self, job: Job, process: subprocess.Popen[bytes],
                     secrets: dict[str, str]) -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            self._log(job, raw.decode("utf-8", "replace").rstrip("\r\n"), secrets)

    def _time_out(self, job: Job, process: subprocess.Popen[bytes]) -> None:
        job.timed_out = True
        self._kill(process)

    @staticmethod
    def _kill(process: subprocess.Popen[bytes]) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the job's whole process group

    def cancel(self, job: Job) -> None:
        with job.changed:
            if job.stage in TERMINAL:
                return
            job.canceled = True
            process = job.process
            if process is None:
                job.stage, job.message, job.finished_at = "CANCELED", "Job canceled", time.time()
                job.changed.notify_all()
                return
        self._kill(process)

    def shutdown(self) -> None:
        """Kill what still runs and remove the server's directory."""
        for job in list(self.jobs.values()):
            self.cancel(job)
        pause = threading.Event()  # waits that tests' patched time.sleep cannot turn into spins
        for job in list(self.jobs.values()):
            for _ in range(200):
                if job.process is None or job.process.poll() is not None:
                    break
                pause.wait(0.05)
        with self._lock:
            root, self._root = self._root, None
        if root is not None:
            for _ in range(50):  # a job thread may still be removing its directory
                shutil.rmtree(root, ignore_errors=True)
                if not root.exists():
                    break
                pause.wait(0.05)
