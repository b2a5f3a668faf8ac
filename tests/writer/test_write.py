"""`package write` end to end, in process: every package it writes certifies `passed` against
its source, with the digests it took and, independently, with certify's own hashing; what it
refuses leaves nothing written; an interrupted write resumes."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from meshcert.certify.formats.package_id import compute_package_id
from meshcert.certify.formats.v2_carrier import rebuild_catalog
from meshcert.certify.formats.v2_layout import payload_entries, v2_artifact_entries
from meshcert.certify.report import CertReport
from meshcert.certify.sources.local import load_local_package
from meshcert.certify.sources.source_gguf import package_tensor_ranges
from meshcert.certify.view import CertOptions
from meshcert.core.errors import Refused
from meshcert.writer.certify_step import certify_written
from meshcert.writer.errors import Interrupted
from meshcert.writer.facts import source_facts
from meshcert.writer.stream import NullWriteProgress
from meshcert.writer.write import WriteRequest, WriteResult, prepare, write
from tests.conftest import certify_dir
from tests.writer.builders import MODEL_ID, header, moe_sources, tiny_source, write_package


def problems(report: CertReport) -> list[str]:
    return [f"{f.code}: {f.message}" for f in report.findings if f.severity != "info"]


def assert_certifies(result: WriteResult) -> CertReport:
    """Passed with the writer's own digests, and again with certify hashing everything."""
    reused = certify_written(result)
    assert reused.status == "passed", problems(reused)
    # the source identity as the writer asked it of the Hub, asked again
    alone = certify_dir(result.root, verify_sha256=True, source_gguf=result.prepared.source_ref,
                        source_identity=result.prepared.source_check is not None)
    assert alone.status == "passed", problems(alone)
    assert sorted(problems(alone)) == sorted(problems(reused))
    return reused


def _tensor_bytes(path: Path, offset: int, size: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read(size)


def test_a_v2_package_certifies_and_its_carrier_agrees_with_certifys_reading(
        tmp_path: Path) -> None:
    source = tiny_source(tmp_path)
    result = write_package(source, tmp_path / "pkg")
    report = assert_certifies(result)
    manifest = result.manifest
    assert report.package_id == manifest["package_id"] == compute_package_id(manifest)
    entries = v2_artifact_entries(manifest)
    catalog = rebuild_catalog(header(result.root / "shared/metadata.gguf"),
                              payload_entries(entries))
    assert catalog.usable, catalog.problems
    src = {t.name: t for t in result.plan.source.tensors}
    assert {t.name for t in catalog.tensors} == set(src)
    for t in catalog.tensors:  # every locator points at the source's bytes
        assert t.artifact is not None
        assert _tensor_bytes(result.root / str(t.artifact.path), t.offset, t.size) == \
            _tensor_bytes(source, src[t.name].start, src[t.name].n_bytes)
    assert os.path.getsize(result.root / "shared/metadata.gguf") == \
        header(result.root / "shared/metadata.gguf").data_offset  # no payload


def test_the_reused_digests_cover_every_tensor_certify_compares(tmp_path: Path) -> None:
    model, projector = moe_sources(tmp_path)
    for fmt in ("v2", "v1"):
        result = write_package(model, tmp_path / fmt, fmt=fmt, projectors=[str(projector)],
                               max_artifact_bytes=30_000)
        view = load_local_package(str(result.root), display_ref=str(result.root),
                                  options=CertOptions(verify_sha256=False))
        wanted = {(path, name) for path, ranges in package_tensor_ranges(view).items()
                  for name in ranges}
        facts = source_facts(result.plan, result.state, result.prepared.source_ref)
        assert wanted and wanted <= set(facts.package_tensor_digest)


def test_a_v1_package_is_the_real_writers_shape_and_certifies(tmp_path: Path) -> None:
    result = write_package(tiny_source(tmp_path), tmp_path / "pkg", fmt="v1")
    assert_certifies(result)
    m = result.manifest
    assert list(m) == ["schema_version", "model_id", "source_model", "format", "layer_count",
                       "activation_width", "shared", "layers", "skippy_abi_version",
                       "created_at_unix_secs"]
    assert [e["path"] for e in m["layers"]] == [f"layers/layer-{i:03d}.gguf" for i in range(4)]
    files = m["source_model"]["files"]
    assert files[0]["size_bytes"] == os.path.getsize(result.plan.source.primary.location)
    assert files[0]["sha256"] == m["source_model"]["sha256"]  # real values, not null
    assert m["source_model"]["path"] == result.plan.source.primary.location


def test_v1_fragments_carry_the_slice_keys_after_the_source_metadata(tmp_path: Path) -> None:
    result = write_package(tiny_source(tmp_path), tmp_path / "pkg", fmt="v1")
    expect = {"shared/metadata.gguf": (0, 0, 0, False, False),
              "shared/embeddings.gguf": (1, 0, 0, True, False),
              "shared/output.gguf": (2, 4, 4, False, True),
              "layers/layer-002.gguf": (1002, 2, 3, False, False)}
    source_keys = [k for k in result.plan.source.header.kv if not k.startswith("split.")]
    for path, values in expect.items():
        h = header(result.root / path)
        keys = list(h.kv)
        assert keys[:len(source_keys)] == source_keys  # every source entry, in order
        assert keys[len(source_keys):] == ["general.alignment", "skippy.slice.stage_index",
                                           "skippy.slice.layer_start", "skippy.slice.layer_end",
                                           "skippy.slice.include_embeddings",
                                           "skippy.slice.include_output"]
        got = tuple(h.kv[k] for k in keys[-5:])
        assert got == values
        assert [h.kv_types[k] for k in keys[-6:]] == [4, 5, 5, 5, 7, 7]  # u32, i32 x3, bool x2
        assert "tokenizer.ggml.tokens" in h.kv  # every fragment repeats the tokenizer


def test_the_moe_mtp_model_with_a_projector_certifies_as_v2(tmp_path: Path) -> None:
    model, projector = moe_sources(tmp_path)
    result = write_package(model, tmp_path / "pkg", projectors=[str(projector)])
    assert_certifies(result)
    m = result.manifest
    assert m["sidecars"] == [{"kind": "mmproj", "artifact_id": "projector-00000",
                              "name": "mmproj-tiny-F16.gguf"}]
    assert m["generation"]["speculative_decoding"]["strategies"]["mtp"]["layer_indices"] == [3]
    assert (result.root / "projectors/projector-00000.gguf").read_bytes() == \
        projector.read_bytes()
    common = {t.name for t in header(result.root / "shared/common.gguf").tensors}
    assert "rope_freqs.weight" in common
    for a in result.plan.payload:  # no skippy.* keys in payload parts, full tokenizer in each
        kv = header(result.root / a.path).kv
        assert not [k for k in kv if k.startswith("skippy.")]
        assert "tokenizer.chat_template" in kv and "tokenizer.ggml.tokens" in kv


def test_the_moe_mtp_model_as_v1_copies_rope_freqs_into_every_fragment(tmp_path: Path) -> None:
    model, projector = moe_sources(tmp_path)
    result = write_package(model, tmp_path / "pkg", fmt="v1", projectors=[str(projector)])
    fragments = [a for a in result.plan.artifacts if a.role != "projector"]
    copies = set()
    for a in fragments:
        h = header(result.root / a.path)
        t = next(t for t in h.tensors if t.name == "rope_freqs.weight")
        copies.add(_tensor_bytes(result.root / a.path, h.data_offset + t.offset, t.n_bytes))
    assert len(copies) == 1 and len(fragments) == 7  # byte-identical everywhere
    spec = result.manifest["generation"]["speculative_decoding"]
    assert spec["proposers"]["mtp"] == {"type": "native-mtp", "prediction_depth": 1,
                                        "layer_indices": [3]}
    assert spec["strategies"]["mtp"]["proposer"] == "mtp"
    assert result.manifest["projectors"][0]["tensor_count"] == 7


def test_the_moe_mtp_model_as_v1_certifies(tmp_path: Path) -> None:
    model, projector = moe_sources(tmp_path)
    assert_certifies(write_package(model, tmp_path / "pkg", fmt="v1",
                                   projectors=[str(projector)]))


def test_budget_parts_certify_warning_only_that_mesh_llm_cannot_select_common_parts(
        tmp_path: Path) -> None:
    result = write_package(tiny_source(tmp_path), tmp_path / "pkg", max_artifact_bytes=60_000,
                           source_repo="meshcert/tiny-llama",  # pinned: no publication warning
                           source_revision="5f1c2b3a4d5e6f708192a3b4c5d6e7f8091a2b3c")
    report = assert_certifies(result)
    paths = {e["path"] for e in result.manifest["artifact_catalog"]["entries"]}
    assert {"shared/common-part00.gguf", "layers/layer-00003-part01.gguf"} <= paths
    # meshcert/tiny-llama is on no Hub this test reaches: its identity stays claimed
    assert {f.code for f in report.findings if f.severity == "warning"} == {
        "mesh_certify_would_fail", "source_identity_unverified"}


@pytest.mark.parametrize("fmt", ["v2", "v1"])
def test_a_split_set_source_certifies_and_leaves_no_split_keys(tmp_path: Path,
                                                               fmt: str) -> None:
    result = write_package(tiny_source(tmp_path, split=10), tmp_path / "pkg", fmt=fmt)
    assert_certifies(result)
    assert len(result.manifest["source_model"]["files"]) == 4
    for a in result.plan.all_artifacts():
        kv = header(result.root / a.path).kv
        assert not [k for k in kv if k.startswith("split.")]
        if fmt == "v1":
            assert kv["skippy.package.materialized"] is True
            assert kv["skippy.package.part_count"] == 4


# --- refusals: nothing written or changed ---------------------------------------------------
def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()} if root.exists() else {}


def _refused(source: Path | str, out: Path, **options: object) -> Refused:
    before = _tree(out)
    with pytest.raises(Refused) as err:
        write_package(source, out, **options)
    assert _tree(out) == before  # nothing written or changed
    return err.value


def test_an_out_dir_with_a_manifest_is_refused(tmp_path: Path) -> None:
    source = tiny_source(tmp_path)
    write_package(source, tmp_path / "pkg")
    assert _refused(source, tmp_path / "pkg").code == "existing_manifest"
    assert _refused(source, tmp_path / "pkg", resume=True).code == "existing_manifest"


def test_existing_artifacts_are_refused_without_resume(tmp_path: Path) -> None:
    source = tiny_source(tmp_path)
    (tmp_path / "pkg/layers").mkdir(parents=True)
    (tmp_path / "pkg/layers/layer-00002.gguf").write_bytes(b"old")
    err = _refused(source, tmp_path / "pkg")
    assert err.code == "existing_artifacts" and "--resume" in err.message


def test_an_artifact_path_that_is_the_source_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    (out / "shared").mkdir(parents=True)
    source = tiny_source(tmp_path)
    os.link(source, out / "shared/common.gguf")  # the same file under an artifact's name
    assert _refused(source, out, resume=True).code == "artifact_is_source"
    inside = out / "layers" / "layer-00000.gguf"
    inside.parent.mkdir()
    os.replace(source, inside)  # the source itself sits where an artifact would go
    (out / "shared/common.gguf").unlink()
    assert _refused(inside, out, resume=True).code == "artifact_is_source"


def test_too_little_free_disk_is_refused_saying_how_much_is_needed(tmp_path: Path) -> None:
    err = _refused(tiny_source(tmp_path), tmp_path / "pkg", free_bytes=lambda _: 4096)
    assert err.code == "no_disk" and "needs" in err.message and "4,096" in err.message
    assert not (tmp_path / "pkg").exists()


def test_a_local_source_needs_a_model_id(tmp_path: Path) -> None:
    err = _refused(tiny_source(tmp_path), tmp_path / "pkg", model_id=None)
    assert err.code == "usage" and "--model-id" in err.message


def test_a_source_that_fails_inspection_is_refused(tmp_path: Path) -> None:
    from tests.core.gguf.ggufbuild import KV, GGUFFile, RawTensor, V

    bad = GGUFFile(kvs=[KV("general.architecture", V.STRING, "llama"),
                        KV("llama.block_count", V.UINT32, 1),
                        KV("llama.embedding_length", V.UINT32, 8)],
                   tensors=[RawTensor("blk.0.attn_norm.weight", (8,), 0, bytes(32), offset=4)])
    path = bad.write(tmp_path / "misaligned.gguf")
    err = _refused(path, tmp_path / "pkg", inspect=True)
    assert err.code == "hostile_source" and "gguf_misaligned_tensor" in err.message


# --- interrupt and --resume -------------------------------------------------------------------
class InterruptAfter(NullWriteProgress):
    """Ctrl-C as the main thread sees it, once `n` artifacts are done."""

    def __init__(self, n: int) -> None:
        self.n = n

    def artifact_done(self, path: str, done: int, total: int) -> None:
        if done == self.n:
            raise KeyboardInterrupt


def test_an_interrupted_write_leaves_no_manifest_and_resume_reverifies_everything(
        tmp_path: Path) -> None:
    source, out = tiny_source(tmp_path), tmp_path / "pkg"
    prepared = prepare(WriteRequest(str(source), str(out), model_id=MODEL_ID, inspect=False))
    with pytest.raises(Interrupted):
        write(prepared, InterruptAfter(2))
    assert not (out / "model-package.json").exists()
    assert _refused(source, out).code == "existing_artifacts"
    result = write_package(source, out, resume=True)
    assert result.reverified and result.rewritten == []
    assert_certifies(result)


def test_resume_rewrites_and_names_the_artifacts_that_fail_verification(tmp_path: Path) -> None:
    source, out = tiny_source(tmp_path), tmp_path / "pkg"
    first = write_package(source, out)
    (out / "model-package.json").unlink()  # as if the run had stopped before its last step
    with open(out / "layers/layer-00001.gguf", "r+b") as handle:  # one flipped tensor byte
        handle.seek(-100, os.SEEK_END)
        byte = handle.read(1)
        handle.seek(-100, os.SEEK_END)
        handle.write(bytes([byte[0] ^ 0xFF]))
    os.truncate(out / "layers/layer-00003.gguf", 1000)  # cut short
    (out / "layers/layer-00000.gguf").unlink()  # missing: written anew, not "rewritten"
    result = write_package(source, out, resume=True)
    assert result.rewritten == ["layers/layer-00001.gguf", "layers/layer-00003.gguf"]
    assert "layers/layer-00000.gguf" not in result.reverified
    assert {p: r.sha256 for p, r in result.state.artifacts.items()} == \
        {p: r.sha256 for p, r in first.state.artifacts.items()}
    assert_certifies(result)


def test_cancel_stops_the_stream_without_a_manifest(tmp_path: Path) -> None:
    source, out = tiny_source(tmp_path), tmp_path / "pkg"
    prepared = prepare(WriteRequest(str(source), str(out), model_id=MODEL_ID, inspect=False))
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Interrupted):
        write(prepared, cancel=cancel)
    assert not (out / "model-package.json").exists()
