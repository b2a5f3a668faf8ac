"""A Hub source: the revision resolved to a commit and recorded, every byte streamed from the
Hub into the artifacts with range reads (none fetched twice, nothing downloaded whole), mmproj
files taken as projectors; the package certifies against a local copy of the same bytes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from meshcert.core.errors import Refused
from meshcert.writer.certify_step import certify_written
from meshcert.writer.errors import Aborted
from meshcert.writer.hub_source import parse_coordinate
from tests.conftest import certify_dir
from tests.support.hub_server import FakeHub
from tests.writer.builders import moe_sources, tiny_source, write_package

REPO = "meshcert/tiny-moe-mtp-GGUF"
RANGE = re.compile(r"^bytes=(\d+)-(\d+)$")


def _publish(hub: FakeHub, tmp_path: Path) -> tuple[str, Path, Path]:
    model, projector = moe_sources(tmp_path)
    (model.parent / "README.md").write_text("a model\n")
    return hub.publish_dir(REPO, model.parent), model, projector


def _ranges_of(hub: FakeHub, commit: str, path: str) -> list[tuple[int, int]]:
    """(start, end) of every request that fetched bytes of `path` (at its storage URL)."""
    key = hub.repos[REPO].commits[commit].files[path].key
    out = []
    for r in hub.requests():
        if r.path.endswith(f"/{key}") and r.body_bytes:
            match = RANGE.match(r.range or "")
            assert match, f"a request without a byte range: {r}"  # never a whole download
            out.append((int(match[1]), int(match[2])))
    return sorted(out)


def _fetched_once(ranges: list[tuple[int, int]], size: int) -> bool:
    return (ranges[0][0] == 0 and ranges[-1][1] == size - 1
            and all(a[1] + 1 == b[0] for a, b in zip(ranges, ranges[1:], strict=False)))


def test_coordinates_are_parsed_as_mesh_llm_writes_them() -> None:
    c = parse_coordinate("Qwen/Qwen3-8B-GGUF:Q4_K_M")
    assert c is not None and (c.repo, c.revision, c.quant) == ("Qwen/Qwen3-8B-GGUF", None,
                                                               "Q4_K_M")
    c = parse_coordinate("Qwen/Qwen3-8B-GGUF@refs/pr/2:UD-Q4_K_XL")
    assert c is not None and (c.revision, c.quant) == ("refs/pr/2", "UD-Q4_K_XL")
    c = parse_coordinate("hf://org/repo@" + "a" * 40 + "/Q4/model-00001-of-00002.gguf")
    assert c is not None and c.path == "Q4/model-00001-of-00002.gguf"
    assert parse_coordinate("./model.gguf") is None
    assert parse_coordinate("hf://org/repo") is None


def test_a_quant_coordinate_streams_into_a_package_that_certifies(hub: FakeHub,
                                                                 tmp_path: Path) -> None:
    commit, model, projector = _publish(hub, tmp_path)
    hub.reset_counters()
    result = write_package(f"{REPO}@main:Q3_K", tmp_path / "pkg", model_id=None)
    m = result.manifest
    assert m["model_id"] == f"{REPO}:Q3_K"
    assert (m["source_model"]["repo"], m["source_model"]["revision"]) == (REPO, commit)
    assert m["sidecars"][0]["name"] == "mmproj-tiny-F16.gguf"  # found in the repo
    for path, local in (("tiny-moe-mtp-Q3_K.gguf", model),
                        ("mmproj-tiny-F16.gguf", projector)):
        assert _fetched_once(_ranges_of(hub, commit, path), local.stat().st_size), path
    report = certify_written(result)
    assert report.status == "passed", [f.message for f in report.findings
                                       if f.severity != "info"]
    assert report.cache_hits == len(report.digests) > 0  # the writer's digests, not re-hashed
    alone = certify_dir(result.root, verify_sha256=True, source_gguf=str(model))
    assert alone.status == "passed"
    assert m["source_model"]["files"] == [{"path": "tiny-moe-mtp-Q3_K.gguf",
                                           "byte_size": model.stat().st_size,
                                           "sha256": m["source_model"]["sha256"]}]


def test_an_hf_file_of_a_split_set_in_a_folder(hub: FakeHub, tmp_path: Path) -> None:
    first = tiny_source(tmp_path, split=10)
    folder = tmp_path / "repo" / "F16"
    shutil.copytree(first.parent, folder)
    commit = hub.publish_dir(REPO, tmp_path / "repo")
    ref = f"hf://{REPO}@{commit}/F16/{first.name}"
    result = write_package(ref, tmp_path / "pkg", fmt="v1", model_id=None)
    files = result.manifest["source_model"]["files"]
    assert [f["path"] for f in files] == [f"F16/tiny-llama-F16-{i:05d}-of-00004.gguf"
                                          for i in range(1, 5)]
    assert result.manifest["model_id"] == f"{REPO}:tiny-llama-F16"
    assert result.manifest["source_model"]["path"] == f"hf://{REPO}@{commit}/F16/{first.name}"
    assert certify_written(result).status == "passed"


def test_hub_sources_are_refused_before_writing_when_incomplete_or_ambiguous(
        hub: FakeHub, tmp_path: Path) -> None:
    first = tiny_source(tmp_path, split=10)
    files = {p.name: p.read_bytes() for p in first.parent.iterdir()}
    files.pop(first.name.replace("00001-of", "00003-of"))
    files["other-F16.gguf"] = first.read_bytes()
    hub.commit(REPO, files)
    out = tmp_path / "pkg"
    with pytest.raises(Refused, match="00003-of-00004") as err:
        write_package(f"hf://{REPO}/{first.name}", out, model_id="x/y:F16")
    assert err.value.code == "missing_sibling"
    with pytest.raises(Refused, match="more than one model file"):
        write_package(f"{REPO}:F16", out)
    with pytest.raises(Refused, match="no GGUF file"):
        write_package(f"{REPO}:Q8_0", out)
    with pytest.raises(Refused) as err:
        write_package("meshcert/no-such-repo:F16", out)
    assert err.value.code == "hub_error"
    assert not out.exists()


def test_bytes_that_do_not_match_the_hubs_sha256_abort_the_write(hub: FakeHub,
                                                                 tmp_path: Path) -> None:
    commit, _, _ = _publish(hub, tmp_path)
    hub.tamper(REPO, commit, "tiny-moe-mtp-Q3_K.gguf", offset=-1)
    with pytest.raises(Aborted, match="the Hub lists sha256") as err:
        write_package(f"{REPO}:Q3_K", tmp_path / "pkg")
    assert err.value.code == "source_changed"
    assert not (tmp_path / "pkg/model-package.json").exists()
