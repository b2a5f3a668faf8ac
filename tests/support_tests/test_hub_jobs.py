"""The fake Hub's Jobs API through the real huggingface_hub client: jobs really run here, in a
private mount namespace, with their volumes read-only at a pinned commit, their secrets in the
environment (never in an answer or a kept log line), and the stage the client waits for."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable

import httpx
import pytest
from huggingface_hub import HfApi, JobInfo, Volume
from huggingface_hub.errors import BadRequestError, HfHubHTTPError

from tests.support.hub_jobs import jobs_supported
from tests.support.hub_server import FakeHub

pytestmark = pytest.mark.skipif(not jobs_supported(), reason="jobs need root and unshare(1)")

SECRET = "hf_alice_secret_token"
IMAGE = "python:3.12"


@pytest.fixture
def api(hub: FakeHub) -> HfApi:
    hub.add_token(SECRET, user="alice", orgs={"meshllm": "write"})
    return HfApi(endpoint=hub.url, token=SECRET)


def _python(code: str) -> list[str]:
    return ["python", "-c", code]


def _finish(api: HfApi, job: JobInfo) -> tuple[JobInfo, list[str]]:
    """Follow the logs to the end (the server holds the stream while the job runs)."""
    namespace = job.owner.name
    lines = list(api.fetch_job_logs(job_id=job.id, follow=True, namespace=namespace))
    return api.inspect_job(job_id=job.id, namespace=namespace), lines


def test_hardware_list_has_the_published_cpu_flavors(hub: FakeHub, api: HfApi) -> None:
    flavors = {h.name: h for h in api.list_jobs_hardware()}
    assert (flavors["cpu-basic"].cpu, flavors["cpu-basic"].ram,
            flavors["cpu-basic"].ephemeral_storage) == ("2 vCPU", "16 GB", "50 GB")
    assert flavors["cpu-xl"].ephemeral_storage == "1000 GB"
    assert flavors["cpu-upgrade"].unit_label == "minute"
    assert flavors["cpu-xl"].unit_cost_usd * 60 == pytest.approx(1.00, rel=1e-3)
    hub.jobs.hardware.append({
        "name": "t4-small", "prettyName": "T4 small", "cpu": "4 vCPU", "ram": "15 GB",
        "ephemeralStorage": "50 GB", "unitCostMicroUSD": 6667, "unitCostUSD": 0.006667,
        "unitLabel": "minute", "accelerator": {"type": "gpu", "model": "T4", "quantity": "1",
                                               "vram": "16 GB", "manufacturer": "Nvidia"}})
    gpu = {h.name: h for h in api.list_jobs_hardware()}["t4-small"]
    assert gpu.accelerator is not None and gpu.accelerator.model == "T4"


def test_env_and_secrets_reach_the_job_and_the_secret_goes_nowhere_else(
        hub: FakeHub, api: HfApi) -> None:
    code = ("import hashlib, os; print('greeting', os.environ['GREETING']); "
            "print('endpoint', os.environ['HF_ENDPOINT']); "
            "print('secret-sha', hashlib.sha256(os.environ['HF_TOKEN'].encode()).hexdigest()); "
            "print('echo', os.environ['HF_TOKEN'])")
    job = api.run_job(image=IMAGE, command=_python(code), env={"GREETING": "hi"},
                      secrets={"HF_TOKEN": SECRET}, labels={"purpose": "env"})
    done, lines = _finish(api, job)
    assert done.status.stage == "COMPLETED"
    assert "greeting hi" in lines and f"endpoint {hub.url}" in lines
    assert f"secret-sha {hashlib.sha256(SECRET.encode()).hexdigest()}" in lines
    assert "echo ***" in lines  # masked in the log the server keeps
    assert done.environment == {"GREETING": "hi"} and list(done.secrets or {}) == ["HF_TOKEN"]
    raw = httpx.get(f"{hub.url}/api/jobs/alice/{job.id}",
                    headers={"Authorization": f"Bearer {SECRET}"}).text
    assert SECRET not in raw and SECRET not in json.dumps(
        [line for job_ in hub.jobs.jobs.values() for _, line in job_.logs])


def test_a_volume_is_read_only_at_the_pinned_commit(hub: FakeHub, api: HfApi) -> None:
    first = hub.commit("meshllm/src", {"weights/a.gguf": b"first", "README.md": b"# v1\n"})
    hub.commit("meshllm/src", {"weights/a.gguf": b"second", "README.md": b"# v2\n"})
    code = ("import os; print(open('/source/weights/a.gguf').read()); "
            "print(sorted(os.listdir('/source')));\n"
            "try:\n    open('/source/new', 'w')\n"
            "except OSError as e:\n    print('refused', e.errno)")
    volume = Volume(type="model", source="meshllm/src", mount_path="/source", revision=first)
    done, lines = _finish(api, api.run_job(image=IMAGE, command=_python(code),
                                           volumes=[volume]))
    assert done.status.stage == "COMPLETED", lines
    assert lines[:2] == ["first", "['README.md', 'weights']"]
    assert lines[2] == "refused 30"  # EROFS
    assert done.volumes is not None and done.volumes[0].revision == first
    assert not os.path.exists("/source")  # nothing was made on the host


def test_a_dataset_volume_with_a_subfolder(hub: FakeHub, api: HfApi) -> None:
    hub.commit("meshllm/catalog", {"entries/org/a.json": b"{}", "README.md": b"#\n"},
               repo_type="dataset")
    volume = Volume(type="dataset", source="meshllm/catalog", mount_path="/catalog",
                    path="entries")
    done, lines = _finish(api, api.run_job(
        image=IMAGE, command=["sh", "-c", "find /catalog -type f"], volumes=[volume]))
    assert done.status.stage == "COMPLETED" and lines == ["/catalog/org/a.json"]


def test_the_job_talks_back_to_this_hub_and_pip_is_its_own(hub: FakeHub, api: HfApi) -> None:
    code = ("import os, sys; from huggingface_hub import HfApi; "
            "print(HfApi().whoami()['name']); print(sys.prefix)")
    done, lines = _finish(api, api.run_job(image=IMAGE, command=_python(code),
                                           secrets={"HF_TOKEN": SECRET}))
    assert done.status.stage == "COMPLETED", lines
    assert lines[0] == "alice" and lines[1].endswith("/venv") and lines[1] != sys.prefix
    _, which = _finish(api, api.run_job(image=IMAGE, command=["sh", "-c", "command -v pip"]))
    assert which == [f"{lines[1]}/bin/pip"]


def test_a_failing_job_ends_in_error_with_its_exit_code(api: HfApi) -> None:
    job = api.run_job(image=IMAGE, command=_python("import sys; print('bye'); sys.exit(3)"))
    done = api.wait_for_job(job.id)
    assert (done.status.stage, done.status.message) == ("ERROR",
                                                        "Job failed with exit code: 3")
    assert list(api.fetch_job_logs(job_id=job.id)) == ["bye"]  # no follow: what is there


def test_cancel_kills_the_job(hub: FakeHub, api: HfApi) -> None:
    job = api.run_job(image=IMAGE, command=["sh", "-c", "echo started; exec sleep 300"])
    logs = iter(api.fetch_job_logs(job_id=job.id, follow=True))
    assert next(logs) == "started"
    api.cancel_job(job_id=job.id)
    assert list(logs) == []
    done = api.inspect_job(job_id=job.id)
    assert done.status.stage == "CANCELED" and done.finished_at is not None
    process = hub.jobs.jobs[job.id].process
    assert process is not None and process.returncode is not None


def test_timeout_turns_into_error(api: HfApi) -> None:
    job = api.run_job(image=IMAGE, command=["sleep", "300"], timeout=1)
    done, _ = _finish(api, job)
    assert done.status.stage == "ERROR" and "timeout" in (done.status.message or "")


def test_list_jobs_filters_by_stage_and_label(api: HfApi) -> None:
    ok = api.run_job(image=IMAGE, command=["true"], labels={"run": "a"})
    bad = api.run_job(image=IMAGE, command=["false"], labels={"run": "b"})
    _finish(api, ok)
    _finish(api, bad)

    def ids(jobs: Iterable[JobInfo]) -> list[str]:
        return [j.id for j in jobs]

    # list_jobs asks the module-level whoami (not this HfApi's token) without a namespace
    assert ids(api.list_jobs(namespace="alice")) == [bad.id, ok.id]
    assert ids(api.list_jobs(labels={"run": "a"}, namespace="alice")) == [ok.id]
    assert ids(api.list_jobs(status="ERROR", namespace="alice")) == [bad.id]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"flavor": "quantum-xl"}, "Invalid flavor"),
    ({"volumes": [Volume(type="model", source="meshllm/src", mount_path="/s",
                         revision="no-such-branch")]}, "not a revision"),
    ({"volumes": [Volume(type="model", source="meshllm/none", mount_path="/s")]},
     "not found"),
    ({"volumes": [Volume(type="bucket", source="meshllm/b", mount_path="/b")]},
     "not offered"),
])
def test_bad_specs_are_refused_before_anything_runs(hub: FakeHub, api: HfApi,
                                                    kwargs: dict[str, object],
                                                    message: str) -> None:
    hub.commit("meshllm/src", {"a.gguf": b"a"})
    with pytest.raises(BadRequestError, match=message):
        api.run_job(image=IMAGE, command=["true"], **kwargs)  # type: ignore[arg-type]
    assert hub.jobs.jobs == {}


def test_jobs_need_a_token_of_the_namespace(hub: FakeHub, api: HfApi) -> None:
    hub.add_token("hf_bob", user="bob")
    with pytest.raises(HfHubHTTPError) as caught:
        HfApi(endpoint=hub.url, token="hf_bob").run_job(image=IMAGE, command=["true"],
                                                        namespace="meshllm")
    assert caught.value.response.status_code == 403
    job = api.run_job(image=IMAGE, command=["true"], namespace="meshllm")
    assert _finish(api, job)[0].status.stage == "COMPLETED"
    assert job.owner.name == "meshllm"
