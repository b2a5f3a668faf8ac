"""serve.toml `[hf_jobs]`: a pushed package certified with every byte hashed on HF Jobs (the
slice jobs of `models certify --hf-job`, run for real by the in-repo Hub's Jobs API), and what
the service does when the plan is not confirmed or costs more than its cap: nothing is
submitted, the verdict stays header-only and says why.

The tampered package is the case that makes full hashing worth its cost: the Hub's listing still
names the published SHA-256 while the stored bytes changed, so a header-only verdict (the Hub's
digests) passes it and only the jobs, which hash the bytes, catch it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from meshcert.attest.keys import load_public
from meshcert.attest.trust import TrustPolicy
from meshcert.attest.verify import verify_ref
from meshcert.serve.config import ConfigError, load_config
from meshcert.serve.queue import Queue
from tests.support.catalog_packages import PackageShelf
from tests.support.hub_jobs import jobs_supported
from tests.support.hub_server import FakeHub
from tests.support.serve_rig import ATTESTATIONS, BOT_TOKEN, ServeRig

REPO = "meshllm/tiny-layers"
ROOT = Path(__file__).resolve().parents[2]
ON_JOBS = 'stages = 2\nconfirm = true\nmax_cost_usd = 1.0\ninstall = "meshcert"\npoll_s = 0.2'
needs_jobs = pytest.mark.skipif(not jobs_supported(), reason="jobs need root and unshare(1)")


def served(rig: ServeRig, hub: FakeHub, monkeypatch: pytest.MonkeyPatch, hf_jobs: str
           ) -> ServeRig:
    rig.write_config(watch=["meshllm/*-layers"], extra=f"[hf_jobs]\n{hf_jobs}\n")
    monkeypatch.setenv("HF_TOKEN", BOT_TOKEN)
    hub.jobs.extra_env["PYTHONPATH"] = str(ROOT)  # the jobs run this checkout's meshcert
    return rig


def push(rig: ServeRig, hub: FakeHub, package: Path, *, tamper: str | None = None
         ) -> tuple[str, dict[str, object]]:
    """Publish `package` (its stored bytes of `tamper` then changed behind the listing) while
    the service runs; the commit and the last verdict on /status."""
    with rig.running():
        rig.hook()
        commit = hub.publish_dir(REPO, package)
        if tamper is not None:
            hub.tamper(REPO, commit, tamper)
        rig.settle()
    (last,) = Queue(rig.config.parent / "state").verdicts()  # with its findings
    return commit, last


@needs_jobs
def test_full_hashing_on_jobs_catches_what_the_hubs_digests_cannot(
        rig: ServeRig, hub: FakeHub, shelf: PackageShelf,
        monkeypatch: pytest.MonkeyPatch) -> None:
    served(rig, hub, monkeypatch, ON_JOBS)
    commit, last = push(rig, hub, shelf.v2(), tamper="layers/layer-00001.gguf")
    assert last["commit"] == commit and last["status"] == "failed", last
    findings: list[dict[str, str]] = last["findings"]  # type: ignore[assignment]
    (mismatch,) = [f for f in findings if f["code"] == "artifact_sha256_mismatch"]
    assert mismatch["path"] == "layers/layer-00001.gguf"
    assert str(last["hashing"]).startswith("hashed on HF Jobs: 2 job(s) on cpu-basic")
    # one job per stage, at the commit; the slice holding the changed bytes ends with its
    # certification's failure status
    assert sorted((j.spec["labels"]["slice"], j.stage) for j in hub.jobs.jobs.values()) == [
        ("0-of-2", "ERROR"), ("1-of-2", "COMPLETED")]
    assert {j.spec["labels"]["commit"] for j in hub.jobs.jobs.values()} == {commit[:12]}


@needs_jobs
def test_a_good_package_hashed_on_jobs_is_signed_with_its_digests_hashed(
        rig: ServeRig, hub: FakeHub, shelf: PackageShelf,
        monkeypatch: pytest.MonkeyPatch) -> None:
    served(rig, hub, monkeypatch, ON_JOBS)
    commit, last = push(rig, hub, shelf.v2())
    assert last["status"] == "passed", last
    # every byte was hashed: the sentence carries no coverage qualifier
    assert str(last["sentence"]).startswith("certification passed: 0 errors")
    assert last["attestation_url"] and not last["unsigned"]
    policy = TrustPolicy.of_keys([load_public(str(rig.key.public_path))])
    verdict = verify_ref(f"hf://{REPO}@{commit}", None, policy, ATTESTATIONS)
    assert verdict.valid and verdict.result == "PASSED", verdict.findings


@needs_jobs
def test_stopping_the_service_cancels_the_jobs_it_submitted(
        rig: ServeRig, hub: FakeHub, shelf: PackageShelf, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    served(rig, hub, monkeypatch, ON_JOBS)
    slow = tmp_path / "slow-start"  # every Python in a job starts 60 s late: jobs in flight
    slow.mkdir()
    (slow / "sitecustomize.py").write_text("import time\ntime.sleep(60)\n")
    hub.jobs.extra_env["PYTHONPATH"] = f"{slow}:{ROOT}"
    with rig.running():
        rig.hook()
        hub.publish_dir(REPO, shelf.v2())
        deadline = time.monotonic() + 60
        while len(hub.jobs.jobs) < 2 and time.monotonic() < deadline:
            threading.Event().wait(0.1)
        assert len(hub.jobs.jobs) == 2
    # stopped (drain_s 2 s): the certification's worker was ended and cancelled its jobs,
    # so nothing bills to the jobs' timeouts; the task waits in the queue for the next start
    assert [j.canceled for j in hub.jobs.jobs.values()] == [True, True]  # the Hub was asked
    assert Queue(rig.config.parent / "state").counts()["pending"] == 1


def test_an_unconfirmed_plan_is_a_dry_run_that_says_its_cost(
        rig: ServeRig, hub: FakeHub, shelf: PackageShelf,
        monkeypatch: pytest.MonkeyPatch) -> None:
    served(rig, hub, monkeypatch, "stages = 2")
    _, last = push(rig, hub, shelf.v2())
    assert hub.jobs.jobs == {}  # nothing that costs money was submitted
    note = str(last["hashing"])
    assert note.startswith("full hashing on HF Jobs not run (dry run): the plan is 2 job(s)")
    assert "at most $" in note and "confirm = true" in note
    # the verdict is the header-only one, and its coverage says so
    assert str(last["sentence"]).startswith("certification passed (digests: Hub-attested")


def test_a_plan_above_the_cap_is_never_submitted(
        rig: ServeRig, hub: FakeHub, shelf: PackageShelf,
        monkeypatch: pytest.MonkeyPatch) -> None:
    served(rig, hub, monkeypatch, "stages = 2\nconfirm = true\nmax_cost_usd = 0.000001")
    _, last = push(rig, hub, shelf.v2())
    assert hub.jobs.jobs == {}
    assert "is above [hf_jobs] max_cost_usd 1e-06; nothing was submitted" in str(
        last["hashing"])
    assert str(last["sentence"]).startswith("certification passed (digests: Hub-attested")


def test_confirming_jobs_without_a_cap_is_a_config_error(rig: ServeRig) -> None:
    config = rig.write_config(watch=["meshllm/*-layers"],
                              extra="[hf_jobs]\nstages = 4\nconfirm = true\n")
    with pytest.raises(ConfigError, match=r"confirm = true needs max_cost_usd"):
        load_config(config)


def test_a_verdict_is_keyed_by_how_it_was_produced() -> None:
    from meshcert.serve.certifier import job_key
    from meshcert.serve.config import HfJobsSection

    def key(**section: object) -> str:
        return job_key(REPO, "a" * 40, "trust", HfJobsSection.model_validate(section).mode())

    header_only = key()
    assert key(stages=2) == header_only  # a dry run produces the header-only verdict
    on_jobs = key(stages=2, confirm=True, max_cost_usd=1.0)
    assert on_jobs != header_only
    # a plan the lower cap refused stayed header-only: a higher cap certifies again
    assert key(stages=2, confirm=True, max_cost_usd=5.0) != on_jobs
    assert key(stages=4, confirm=True, max_cost_usd=1.0) != on_jobs
