"""`package write SOURCE --publish ns/repo [--delete-after-upload]` against the in-repo Hub:
each artifact uploaded as it is written, the manifest last, the published commit certified
with `--source` semantics from the writer's digests, and with deletion the disk needed is a
few artifacts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.core.errors import Refused
from meshcert.publish.requests import PublishRequest
from meshcert.publish.write_and_publish import write_and_publish
from meshcert.testing import llama_spec, write_source_gguf
from meshcert.writer.write import WriteRequest
from tests.publish.test_service import assert_no_manifest_before_its_artifacts
from tests.support.hub_server import FakeHub

TARGET = "meshllm/tiny-llama-layers"
MODEL_ID = "meshcert/tiny-llama-GGUF:F32"
# mesh-llm's HF publication job requires the source repo and a pinned lower-case commit
# (mesh-llm-0.79.md §6.1): a publishing write names both (hand-made values)
SOURCE_REPO, SOURCE_COMMIT = "meshcert/tiny-llama", "5f1c2b3a4d5e6f708192a3b4c5d6e7f8091a2b3c"
PINNED = ["--source-repo", SOURCE_REPO, "--source-revision", SOURCE_COMMIT]


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return write_source_gguf(llama_spec(block_count=6), tmp_path / "src" / "tiny.gguf")


def _write_request(source: Path, out: Path, **fields: Any) -> WriteRequest:
    return WriteRequest(source=str(source), out_dir=str(out), model_id=MODEL_ID,
                        source_repo=SOURCE_REPO, source_revision=SOURCE_COMMIT, **fields)


def test_a_written_package_is_published_artifact_by_artifact_with_the_manifest_last(
        hub: FakeHub, source: Path, tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    outcome = write_and_publish(_write_request(source, out),
                                PublishRequest(str(out), TARGET, max_files_per_commit=2),
                                delete_after_upload=False)
    result = outcome.publish
    assert result.status == "published", result.message
    assert outcome.local_report is not None and outcome.local_report.status == "passed"
    report = result.remote_report
    assert report is not None and report.status == "passed"
    assert report.resolved_package_ref == f"hf://{TARGET}@{result.commit}"
    parity = next(c for c in report.checks if c.name == "source_parity")
    assert parity.status == "passed"  # --source semantics, from the writer's own digests
    with_manifest = [c.sha for c in hub.all_commits(TARGET) if "model-package.json" in c.files]
    assert with_manifest == [result.commit]
    assert_no_manifest_before_its_artifacts(hub, TARGET)
    assert (out / "layers" / "layer-00005.gguf").is_file()  # kept without the flag


def test_with_deletion_only_the_manifest_and_card_stay_on_disk(
        hub: FakeHub, source: Path, tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    outcome = write_and_publish(_write_request(source, out), PublishRequest(str(out), TARGET),
                                delete_after_upload=True)
    assert outcome.publish.status == "published", outcome.publish.message
    assert sorted(p.name for p in out.rglob("*") if p.is_file()) == [
        "README.md", "model-package.json"]
    assert outcome.local_report is None  # the files are gone: the published ref is certified
    report = outcome.publish.remote_report
    assert report is not None and report.status == "passed"
    assert_no_manifest_before_its_artifacts(hub, TARGET)


def test_with_deletion_the_disk_check_asks_for_a_few_artifacts_not_the_package(
        hub: FakeHub, source: Path, tmp_path: Path) -> None:
    from meshcert.publish.streaming import streaming_disk_bytes
    from meshcert.publish.write_and_publish import ROOM
    from meshcert.writer.plan import plan_package
    from meshcert.writer.source import load_local

    source = write_source_gguf(llama_spec(block_count=12, n_embd=256, n_ff=1024),
                               tmp_path / "src-big" / "bigger.gguf")
    model = load_local(str(source), [])
    plan = plan_package(model, "v2")
    model.close()
    streaming, whole = streaming_disk_bytes(plan, ROOM) + (1 << 20), plan.total_bytes + (1 << 20)
    assert streaming < whole // 2
    free = (streaming + whole) // 2  # too little for the package, enough for a few artifacts

    with pytest.raises(Refused, match="no_disk|needs"):
        write_and_publish(_write_request(source, tmp_path / "a", free_bytes=lambda _p: free),
                          PublishRequest(str(tmp_path / "a"), TARGET), delete_after_upload=False)
    outcome = write_and_publish(_write_request(source, tmp_path / "b",
                                               free_bytes=lambda _p: free),
                                PublishRequest(str(tmp_path / "b"), TARGET),
                                delete_after_upload=True)
    assert outcome.publish.status == "published", outcome.publish.message


def test_a_deleting_write_whose_upload_fails_publishes_nothing_and_a_rerun_resumes(
        hub: FakeHub, source: Path, tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    hub.inject("lfs_upload", status=500, times=None, after=3)  # the 4th PUT on fails, for good
    first = write_and_publish(_write_request(source, out),
                              PublishRequest(str(out), TARGET, max_files_per_commit=1),
                              delete_after_upload=True)
    assert first.publish.status == "incomplete", first.publish.message
    assert "no manifest was published" in first.publish.message
    assert not (out / "model-package.json").exists()
    assert "model-package.json" not in hub.paths_at(TARGET, "main")
    committed = hub.paths_at(TARGET, "main")
    sent = hub.bytes_received("lfs_upload")
    hub.clear_faults()
    second = write_and_publish(_write_request(source, out, resume=True),
                               PublishRequest(str(out), TARGET, max_files_per_commit=1),
                               delete_after_upload=True)
    assert second.publish.status == "published", second.publish.message
    assert set(second.publish.skipped) >= {p for p in committed if p.endswith(".gguf")}
    resent = hub.bytes_received("lfs_upload") - sent
    assert resent < second.write.plan.total_bytes  # type: ignore[union-attr]
    assert_no_manifest_before_its_artifacts(hub, TARGET)


def test_a_kept_package_whose_last_upload_fails_is_finished_by_package_publish(
        hub: FakeHub, source: Path, tmp_path: Path) -> None:
    from meshcert.publish.service import publish_package

    out = tmp_path / "pkg"
    hub.inject("lfs_upload", status=500, times=None, after=3)
    first = write_and_publish(_write_request(source, out),
                              PublishRequest(str(out), TARGET, max_files_per_commit=1),
                              delete_after_upload=False)
    assert first.publish.status == "incomplete"
    assert f"meshcert package publish {out}" in first.publish.message
    assert "model-package.json" not in hub.paths_at(TARGET, "main")
    hub.clear_faults()
    finished = publish_package(PublishRequest(str(out), TARGET))
    assert finished.status == "published", finished.message
    assert finished.skipped  # what the write had committed is not sent again
    assert_no_manifest_before_its_artifacts(hub, TARGET)


def test_the_cli_publishes_and_prints_the_immutable_ref(hub: FakeHub, source: Path,
                                                        tmp_path: Path) -> None:
    out, report = tmp_path / "pkg", tmp_path / "cert.json"
    done = CliRunner().invoke(app, [
        "package", "write", str(source), "--out-dir", str(out), "--model-id", MODEL_ID, *PINNED,
        "--publish", TARGET, "--delete-after-upload", "--report-out", str(report), "--quiet"])
    assert done.exit_code == 0, done.output
    commit = hub.repos[TARGET].branches["main"]
    assert f"hf://{TARGET}@{commit}" in report.read_text()


def test_publishing_options_without_publish_are_usage_errors(source: Path,
                                                             tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["package", "write", str(source), "--out-dir",
                                    str(tmp_path / "pkg"), "--model-id", MODEL_ID,
                                    "--delete-after-upload"])
    assert done.exit_code == 2 and "only applies with --publish" in done.output
    assert not (tmp_path / "pkg").exists()


@pytest.mark.parametrize("pin,says", [
    ([], "source_model.repo is absent"),
    (["--source-repo", SOURCE_REPO, "--source-revision", "main"],
     "source revision 'main' is not a 40-hex commit"),
    (["--source-repo", SOURCE_REPO, "--source-revision", SOURCE_COMMIT.upper()],
     "upper-case hex"),
])
def test_a_write_mesh_llms_publication_job_would_refuse_is_refused_before_work(
        hub: FakeHub, source: Path, tmp_path: Path, pin: list[str], says: str) -> None:
    """mesh-llm's HF job (§6.1) refuses an unpinned or absent source: `write --publish` says
    so with exit 2 before writing a byte or creating the repo."""
    out = tmp_path / "pkg"
    done = CliRunner().invoke(app, [
        "package", "write", str(source), "--out-dir", str(out), "--model-id", MODEL_ID, *pin,
        "--publish", TARGET, "--quiet"])
    assert done.exit_code == 2, done.output
    assert "refused (mesh_llm_publish_would_refuse)" in done.output and says in done.output
    assert "Traceback" not in done.output
    assert not out.exists() or not any(out.rglob("*.gguf"))
    assert TARGET not in hub.repos
