"""Publishing a package with publisher metadata against the in-repo Hub: the small
`metadata/*` files (which the Hub may keep as regular git files, listed by blob id and no LFS
sha256) are uploaded before the manifest, recognised as already there on a re-run, and the
published commit certifies `passed`; `package write --publish` carries them the same way."""

from __future__ import annotations

import json
from pathlib import Path

from meshcert.publish.requests import PublishRequest
from meshcert.publish.service import publish_package
from meshcert.publish.write_and_publish import write_and_publish
from meshcert.testing import llama_spec, write_source_gguf
from meshcert.writer.write import WriteRequest
from tests.support.hub_server import FakeHub
from tests.writer.builders import write_package
from tests.writer.test_write_publisher import REPO, REV, inputs

TARGET = "meshllm/tiny-llama-layers"
MODEL_ID = "meshcert/tiny-llama-GGUF:F32"
NAMES = ("config.json", "generation_config.json", "chat_template.jinja")


def _inputs(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    source = write_source_gguf(llama_spec(), tmp_path / "src" / "tiny.gguf")
    return source, inputs(tmp_path / "inputs")


def _assert_published_files(hub: FakeHub, commit: str, root: Path) -> None:
    manifest = json.loads(hub.file_bytes(TARGET, commit, "model-package.json"))
    assert [e["source_path"] for e in manifest["publisher_metadata"]] == list(NAMES)
    for name in NAMES:
        assert hub.file_bytes(TARGET, commit, f"metadata/{name}") == \
            (root / "inputs" / name).read_bytes()


def test_package_publish_uploads_the_publisher_files_and_a_rerun_skips_them(
        hub: FakeHub, tmp_path: Path) -> None:
    source, given = _inputs(tmp_path)
    result = write_package(source, tmp_path / "pkg", model_id=MODEL_ID, source_repo=REPO,
                           source_revision=REV,
                           publisher_metadata=[str(given[n]) for n in NAMES],
                           generation_defaults=str(given["defaults.json"]))
    first = publish_package(PublishRequest(str(result.root), TARGET))
    assert first.status == "published", first.message
    assert first.remote_report is not None and first.remote_report.status == "passed"
    assert {f"metadata/{n}" for n in NAMES} <= set(first.uploaded)
    assert first.commit is not None
    _assert_published_files(hub, first.commit, tmp_path)
    again = publish_package(PublishRequest(str(result.root), TARGET))
    assert again.status == "published", again.message
    assert again.uploaded == [] and {f"metadata/{n}" for n in NAMES} <= set(again.skipped)


def test_write_publish_with_deletion_carries_them_through(hub: FakeHub, tmp_path: Path) -> None:
    source, given = _inputs(tmp_path)
    out = tmp_path / "pkg"
    request = WriteRequest(source=str(source), out_dir=str(out), model_id=MODEL_ID,
                           source_repo=REPO, source_revision=REV,
                           publisher_metadata=[str(given[n]) for n in NAMES],
                           generation_defaults=str(given["defaults.json"]))
    outcome = write_and_publish(request, PublishRequest(str(out), TARGET),
                                delete_after_upload=True)
    result = outcome.publish
    assert result.status == "published", result.message
    assert result.remote_report is not None and result.remote_report.status == "passed"
    assert result.commit is not None
    _assert_published_files(hub, result.commit, tmp_path)
    assert not (out / "metadata" / "config.json").exists()  # uploaded, then deleted
