"""Package v2: a writer-made package passes; breaking one rule gives that rule's code.

Packages are real: a tiny model written with the gguf library, split by packagegen into the
metadata carrier and payload artifacts (tests/certify/v2_packages.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from meshcert.certify.report import CertReport
from tests.certify.v2_packages import (
    build_v2,
    edit_manifest,
    refresh_artifact,
    rewrite_carrier,
    tensor_index,
)
from tests.conftest import certify_dir
from tests.support.splits import SplitPackage


def codes(report: CertReport) -> set[str]:
    return {f.code for f in report.findings}


def errors(report: CertReport) -> set[str]:
    return {f.code for f in report.findings if f.severity == "error"}


@pytest.fixture
def v2(tmp_path: Path) -> SplitPackage:
    return build_v2(tmp_path)


def test_writer_made_v2_package_passes(v2: SplitPackage) -> None:
    report = certify_dir(v2.root)
    assert report.status == "passed", [f.message for f in report.findings]
    assert report.package_format == "v2"
    assert report.package_id == v2.manifest["package_id"]
    assert [f.code for f in report.findings if f.severity != "info"] == []


def test_v2_report_fields_follow_mesh_llm(v2: SplitPackage) -> None:
    report = certify_dir(v2.root)
    carrier = str(v2.root / "shared/metadata.gguf")
    assert report.source_model_path == carrier
    assert report.source_model_bytes == v2.manifest["source_model"]["files"][0]["byte_size"]
    first, second = report.materialized_stages
    assert (first.layer_start, first.layer_end, second.layer_end) == (0, 2, 4)
    # carrier + common + the two layers of each half, all verified
    assert first.selected_part_count == first.verified_artifacts == 4
    assert second.selected_part_count == second.verified_artifacts == 4
    assert first.materialized_path == carrier
    assert {p.path for p in first.parts} == {"shared/metadata.gguf", "shared/common.gguf",
                                            "layers/layer-00000.gguf", "layers/layer-00001.gguf"}


def test_earlier_v2_layout_with_embeddings_and_output_passes(tmp_path: Path) -> None:
    pkg = build_v2(tmp_path, layout="legacy")
    report = certify_dir(pkg.root)
    assert report.status == "passed", [f.message for f in report.findings]
    first, second = report.materialized_stages
    assert "shared/embeddings.gguf" in {p.path for p in first.parts}
    assert "shared/embeddings.gguf" not in {p.path for p in second.parts}
    assert "shared/output.gguf" in {p.path for p in second.parts}


def test_split_parts_pass_but_common_parts_warn_that_mesh_llm_would_refuse(
        tmp_path: Path) -> None:
    pkg = build_v2(tmp_path, part_budget=20_000)
    paths = {e["path"] for e in pkg.manifest["artifact_catalog"]["entries"]}
    assert any("-part" in p and p.startswith("layers/") for p in paths)
    assert "shared/common-part00.gguf" in paths
    report = certify_dir(pkg.root)
    assert report.status == "passed", [f.message for f in report.findings if f.severity == "error"]
    assert "mesh_certify_would_fail" in codes(report)


def _drop_key(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda m: m.pop(key)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(m: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        obj: Any = m
        for part in parents:
            obj = obj[int(part)] if part.isdigit() else obj[part]
        if last.isdigit():
            obj[int(last)] = value
        else:
            obj[last] = value
    return edit


def _entries(m: dict[str, Any]) -> list[dict[str, Any]]:
    return m["artifact_catalog"]["entries"]


MANIFEST_RULES = [
    (_set("surprise", 1), "unknown_manifest_field"),
    (_set("source_model.surprise", 1), "unknown_manifest_field"),
    (_set("artifact_catalog.entries.1.surprise", 1), "unknown_manifest_field"),
    (_set("shared", {}), "v1_field_in_v2_manifest"),
    (_set("skippy_abi_version", "0.1.0"), "v1_field_in_v2_manifest"),
    (_set("activation_width", 64), "v1_field_in_v2_manifest"),
    (_set("generation", {"policy": {"profile": "glm-dsa-v1"}}), "v1_field_in_v2_manifest"),
    (_set("tensor_catalog", []), "inline_tensor_catalog"),
    (_set("model_metadata", {}), "inline_tensor_catalog"),
    # released since mesh-llm v0.77-v0.79: validated, not unreleased_manifest_extension
    (_set("publisher_metadata", {}), "invalid_manifest_field"),  # a list, not an object
    (_set("publisher_metadata", [{"role": "model_config"}]), "missing_value"),
    (_set("publisher_defaults", {"compute_dtype": {"dtype": "bf16", "artifact_id": "common",
                                                   "json_path": "/torch_dtype"}}),
     "source_identity_mismatch"),  # not bound to publisher_metadata
    (_set("generation", {"request_defaults": {}}), "missing_value"),  # selection, profiles
    (_set("generation", {"request_defaults": {"selection": {"default": "x"}, "profiles": {},
                                              "extra": 1}}), "unknown_manifest_field"),
    (_set("model_id", " "), "missing_value"),
    (_drop_key("generator_version"), "missing_value"),
    (_drop_key("native_abi_version"), "missing_value"),
    (_drop_key("created_at_unix_secs"), "missing_value"),
    (_set("layer_count", 0), "missing_value"),
    (_set("layer_count", 1), "too_few_layers"),
    (_set("source_model.sha256", "A" * 64), "invalid_digest"),
    (_set("source_model.files.0.byte_size", None), "missing_value"),
    (_set("source_model.files.0.sha256", "xyz"), "invalid_digest"),
    (_set("source_model.files.0.path", "../up.gguf"), "invalid_path"),
    (_set("source_model.primary_file", "other.gguf"), "unknown_source_file"),
    (_set("source_model.sha256", "e" * 64), "source_identity_mismatch"),
    (_set("source_model.metadata_artifact_id", "nope"), "unknown_artifact"),
    (_set("source_model.metadata_artifact_id", "layer-00000"), "invalid_metadata_carrier"),
    (_set("artifact_catalog.entries.2.id", "layer 0"), "invalid_identifier"),
    (_set("artifact_catalog.entries.2.path", "layers//layer-00000.gguf"), "invalid_path"),
    (_set("artifact_catalog.entries.2.path", "layers/"), "invalid_path"),
    (_set("artifact_catalog.entries.2.path", "/abs/layer.gguf"), "invalid_path"),
    (_set("artifact_catalog.entries.3.id", "layer-00000"), "duplicate_artifact"),
    (_set("artifact_catalog.entries.3.path", "layers/layer-00000.gguf"),
     "duplicate_artifact_path"),
    (_set("artifact_catalog.entries", []), "missing_value"),
    (lambda m: _entries(m)[2].update(sha256=_entries(m)[2]["sha256"].upper()), "invalid_digest"),
    (lambda m: _entries(m)[2].update(byte_size=_entries(m)[2]["byte_size"] + 1),
     "artifact_size_mismatch"),
    (lambda m: _entries(m)[2].update(sha256="0" * 64), "artifact_sha256_mismatch"),
    (lambda m: _entries(m).append({"id": "ghost", "path": "layers/ghost.gguf", "byte_size": 9,
                                   "sha256": "0" * 64}), "missing_artifact"),
    (_set("sidecars", [{"kind": "mmproj", "artifact_id": "nope"}]), "unknown_artifact"),
    (_set("sidecars", [{"kind": "audio", "artifact_id": "layer-00003"}]),
     "unsupported_projector_kind"),
    (_set("sidecars", [{"kind": "mmproj", "artifact_id": "layer-00003", "name": "a"},
                       {"kind": "mmproj", "artifact_id": "layer-00002", "name": "a"}]),
     "duplicate_sidecar"),
    (_set("generation", {"speculative_decoding": {"default": "mtp"}}), "unknown_strategy"),
]


@pytest.mark.parametrize(("edit", "code"), MANIFEST_RULES)
def test_each_v2_manifest_rule_gives_its_code(v2: SplitPackage, edit: Any, code: str) -> None:
    edit_manifest(v2, edit)
    report = certify_dir(v2.root)
    assert code in codes(report), [f.message for f in report.findings]
    assert report.status == "failed"


def test_released_mesh_llm_fields_are_accepted(v2: SplitPackage) -> None:
    """What test_each_v2_manifest_rule_gives_its_code used to call unreleased: an empty
    publisher_metadata, an empty publisher_defaults and a generation of its own."""
    edit_manifest(v2, lambda m: m.update(publisher_metadata=[], publisher_defaults={},
                                         generation={}))
    report = certify_dir(v2.root)
    assert report.status == "passed", [f.message for f in report.findings]
    assert "unreleased_manifest_extension" not in codes(report)


def test_a_hand_edited_manifest_fails_the_package_id(v2: SplitPackage) -> None:
    edit_manifest(v2, _set("model_id", "someone/else-GGUF:F32"), reid=False)
    assert "package_identity_mismatch" in codes(certify_dir(v2.root))
    edit_manifest(v2, _set("package_id", "sha256:ABC"), reid=False)
    assert "invalid_digest" in codes(certify_dir(v2.root))


def test_unknown_v2_keys_are_errors_not_notes(v2: SplitPackage) -> None:
    edit_manifest(v2, _set("surprise", 1))
    (found,) = [f for f in certify_dir(v2.root).findings if f.code == "unknown_manifest_field"]
    assert found.severity == "error"
    # the error says what to do (v1's note says the field is ignored: not so in v2)
    assert "Remove the field" in found.remediation and "upgrade" in found.remediation


def test_a_stray_gguf_is_undeclared(v2: SplitPackage) -> None:
    (v2.root / "layers/layer-00099.gguf").write_bytes(b"GGUF")
    assert "undeclared_artifact" in codes(certify_dir(v2.root))


def test_unsorted_sidecars_warn_that_mesh_llm_would_refuse(v2: SplitPackage) -> None:
    edit_manifest(v2, _set("sidecars", [
        {"kind": "mmproj", "artifact_id": "layer-00003", "name": "b"},
        {"kind": "mmproj", "artifact_id": "layer-00002", "name": "a"}]))
    assert "mesh_certify_would_fail" in codes(certify_dir(v2.root))


def _swap(a: int, b: int) -> Callable[[list[list[int]]], None]:
    def edit(rows: list[list[int]]) -> None:
        rows[a], rows[b] = rows[b], rows[a]
    return edit


def _row(index: int, column: int, value: int | Callable[[int], int]
         ) -> Callable[[list[list[int]]], None]:
    def edit(rows: list[list[int]]) -> None:
        current = rows[index][column]
        rows[index][column] = value(current) if callable(value) else value
    return edit


PART, OFFSET, SIZE, ALIGN = range(4)
CARRIER_RULES: list[tuple[Callable[[SplitPackage], dict[str, Any]], str]] = [
    (lambda p: {"edit": _row(0, ALIGN, 24)}, "invalid_alignment"),
    (lambda p: {"edit": _row(0, OFFSET, lambda o: o + 4)}, "misaligned_offset"),
    (lambda p: {"edit": _row(0, SIZE, 0)}, "invalid_stored_length"),
    (lambda p: {"edit": _row(0, SIZE, lambda s: s + 32)}, "invalid_stored_length"),
    (lambda p: {"edit": _row(0, OFFSET, 1 << 40)}, "storage_out_of_bounds"),
    (lambda p: {"edit": _row(0, PART, 99)}, "unknown_artifact"),
    (lambda p: {"edit": lambda rows: rows.pop()}, "invalid_metadata_carrier"),
    (lambda p: {"metadata_only": False}, "invalid_metadata_carrier"),
    (lambda p: {"metadata_only": 1}, "invalid_metadata_carrier"),
    (lambda p: {"locator_schema": 2}, "invalid_metadata_carrier"),
    (lambda p: {"part_count": 3}, "invalid_metadata_carrier"),
    # two same-size tensors of one layer trade places: each locator now points at the other's
    # bytes, which that artifact's own directory contradicts
    (lambda p: {"edit": _swap(tensor_index(p, "blk.0.attn_q.weight"),
                              tensor_index(p, "blk.0.attn_output.weight"))},
     "carrier_directory_mismatch"),
    (lambda p: {"edit": _row(tensor_index(p, "blk.0.attn_q.weight"), OFFSET,
                             lambda o: o - 32)}, "overlapping_storage"),
]


@pytest.mark.parametrize(("change", "code"), CARRIER_RULES)
def test_each_carrier_rule_gives_its_code(v2: SplitPackage, change: Any, code: str) -> None:
    rewrite_carrier(v2, **change(v2))
    report = certify_dir(v2.root)
    assert code in codes(report), [f.message for f in report.findings]
    assert report.status == "failed"


def test_a_layer_tensor_stored_in_another_layer_is_in_the_wrong_layer(v2: SplitPackage) -> None:
    q0, q1 = tensor_index(v2, "blk.0.attn_q.weight"), tensor_index(v2, "blk.1.attn_q.weight")
    rewrite_carrier(v2, edit=_swap(q0, q1))
    report = certify_dir(v2.root)
    assert "tensor_in_wrong_layer" in codes(report)


def test_a_carrier_with_payload_bytes_fails(v2: SplitPackage) -> None:
    carrier = v2.root / "shared/metadata.gguf"
    carrier.write_bytes(carrier.read_bytes() + b"\0" * 64)
    refresh_artifact(v2, "shared/metadata.gguf")
    assert "carrier_has_payload" in codes(certify_dir(v2.root))


def test_a_layer_ordinal_beyond_layer_count_is_out_of_bounds(v2: SplitPackage) -> None:
    edit_manifest(v2, _set("layer_count", 3))
    report = certify_dir(v2.root)
    assert {"layer_out_of_bounds", "layer_count_mismatch"} <= codes(report)


def test_a_tensor_the_architecture_needs_is_required(tmp_path: Path) -> None:
    pkg = build_v2(tmp_path, drop=("blk.2.attn_norm.weight",))
    report = certify_dir(pkg.root)
    assert "missing_required_tensor" in errors(report)


def test_a_tensor_listed_twice_in_the_carrier_is_a_duplicate(v2: SplitPackage) -> None:
    carrier = v2.root / "shared/metadata.gguf"
    data = carrier.read_bytes()
    assert data.count(b"blk.0.attn_k.weight") == 1
    carrier.write_bytes(data.replace(b"blk.0.attn_k.weight", b"blk.0.attn_q.weight"))
    refresh_artifact(v2, "shared/metadata.gguf")
    assert "duplicate_tensor" in codes(certify_dir(v2.root))


def test_a_zero_dimension_in_the_carrier_directory_is_invalid(v2: SplitPackage) -> None:
    from dataclasses import replace

    from tests.certify.v2_packages import carrier_locators
    from tests.support.splits import read_source, write_carrier

    carrier = v2.root / "shared/metadata.gguf"
    directory = list(read_source(carrier).tensors)
    directory[0] = replace(directory[0], shape=(0, *directory[0].shape[1:]))
    rows = carrier_locators(v2)
    write_carrier(carrier, v2.source_path, directory,
                  [(r[0], r[1], r[2], r[3]) for r in rows],
                  part_count=len(v2.manifest["artifact_catalog"]["entries"]) - 1)
    refresh_artifact(v2, "shared/metadata.gguf")
    assert "invalid_dimension" in codes(certify_dir(v2.root))


@pytest.mark.parametrize("target", ["notes", "layer-00003"])
def test_the_metadata_artifact_must_be_a_non_sidecar_gguf(v2: SplitPackage, target: str) -> None:
    (v2.root / "notes.txt").write_text("hello\n")

    def edit(m: dict[str, Any]) -> None:
        _entries(m).append({"id": "notes", "path": "notes.txt", "byte_size": 6,
                            "sha256": "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e8"
                                      "46f6be03"})
        m["source_model"]["metadata_artifact_id"] = target
        if target != "notes":
            m["sidecars"] = [{"kind": "mmproj", "artifact_id": target}]

    edit_manifest(v2, edit)
    assert "invalid_metadata_artifact" in codes(certify_dir(v2.root))


def test_source_with_other_metadata_is_a_source_metadata_mismatch(tmp_path: Path) -> None:
    from meshcert.testing import llama_spec, write_source_gguf

    pkg = build_v2(tmp_path / "a")
    spec = llama_spec(block_count=4)
    spec.name = "someone else's model"
    other = write_source_gguf(spec, tmp_path / "b" / "other.gguf")
    report = certify_dir(pkg.root, source_gguf=str(other))
    # one fault, one finding: not the declared file; why is said inside it (issue 34, item 5)
    [message] = [f.message for f in report.findings if f.check == "source_parity"]
    assert "is not the package's source" in message and "general.name" in message
    assert "source_sha256_mismatch" in codes(report)


def test_stage_plan_counts_the_bytes_each_v2_node_fetches(v2: SplitPackage) -> None:
    report = certify_dir(v2.root, stages=3)
    sizes = {e["path"]: e["byte_size"] for e in v2.manifest["artifact_catalog"]["entries"]}
    assert [(s.layer_start, s.layer_end) for s in report.stage_plan] == [(0, 2), (2, 3), (3, 4)]
    for stage in report.stage_plan:
        paths = {p.path for p in stage.parts}
        assert {"shared/metadata.gguf", "shared/common.gguf"} <= paths
        assert stage.materialized_bytes == sum(sizes[p] for p in paths)


# --- a package exactly as mesh-llm v0.79 writes it (mesh-llm-0.79.md §1.9, §2.2-2.5) ---------
def _v079_files() -> dict[str, bytes]:
    """The five publisher files in the HF job's (CLI) order."""
    import json

    from tests.certify.v2_packages import tiny_config_json

    def js(obj: Any) -> bytes:
        return json.dumps(obj, indent=2).encode()

    return {
        "config.json": js(tiny_config_json()),
        "generation_config.json": js({"bos_token_id": 1, "eos_token_id": 2,
                                      "temperature": 0.6, "top_p": 0.95, "top_k": 20}),
        "tokenizer_config.json": js({"model_max_length": 256, "bos_token": "<s>"}),
        "chat_template.jinja": b"{% for m in messages %}{{ m['content'] }}{% endfor %}\n",
        "hf_quant_config.json": js({"producer": {"name": "modelopt"},
                                    "kv_cache_quant_algo": "FP8"}),
    }


def _v079_generation(revision: str) -> dict[str, Any]:
    prov = {"source_repo": "meshcert/tiny-llama", "revision": revision, "file": "README.md",
            "section": "Best Practices",
            "url": f"https://huggingface.co/meshcert/tiny-llama/blob/{revision}/README.md"}
    return {"request_defaults": {
        "selection": {"default": "thinking", "reasoning_enabled": "thinking",
                      "reasoning_disabled": "direct"},
        "profiles": {
            "thinking": {"temperature": 0.6, "top_p": 0.95, "top_k": 20, "min_p": 0,
                         "provenance": prov},
            "direct": {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "min_p": 0,
                       "presence_penalty": 1.5,
                       "reasoning": {"enabled": "off", "budget": 0}, "provenance": prov},
        }}}


def test_a_package_as_mesh_llm_v079_writes_it_passes_with_the_right_id(
        v2: SplitPackage) -> None:
    import hashlib

    from meshcert.certify.formats.package_id import canonical_bytes
    from tests.certify.v2_packages import PINNED_REVISION, add_publisher_files

    files = _v079_files()
    defaults = {  # the writer's typed defaults: config.json /torch_dtype, hf_quant's KV algo
        "compute_dtype": {"dtype": "bf16", "artifact_id": "publisher-config-json",
                          "json_path": "/torch_dtype"},
        "kv_cache_dtype": {"dtype": "fp8", "artifact_id": "publisher-hf-quant-config-json",
                           "json_path": "/kv_cache_quant_algo"}}
    pinned = json.loads(json.dumps(v2.manifest))
    pinned["source_model"]["revision"] = PINNED_REVISION
    base = canonical_bytes(pinned).decode()  # the writer's part, tested elsewhere
    add_publisher_files(v2, files, defaults=defaults,
                        generation=_v079_generation(PINNED_REVISION))
    written = json.loads((v2.root / "model-package.json").read_text())
    assert [e["source_path"] for e in written["publisher_metadata"]] == list(files)  # CLI order
    assert written["generation"]["request_defaults"]["profiles"]["direct"]["min_p"] == 0

    report = certify_dir(v2.root)
    assert report.status == "passed", [f.message for f in report.findings]
    # the format accepts the upper-case revision; mesh-llm's HF publication job does not (§6.1)
    [warning] = [f for f in report.findings if f.severity != "info"]
    assert warning.code == "mesh_llm_publish_would_refuse" and "upper-case" in warning.message

    # The id, derived by hand (no real mesh-llm id exists for this package): the writer's
    # canonical bytes with the publisher parts spliced in as mesh-llm-0.79.md §1.6 orders them
    # (catalog by id; publisher_metadata by role's enum order, not CLI order; publisher_defaults
    # in struct order; request_defaults' profiles by name, `"min_p":0` hashed as `0.0`).
    def art(name: str) -> str:
        ident = "publisher-" + name.replace(".", "-").replace("_", "-")
        data = files[name]
        return (f'{{"id":"{ident}","path":"metadata/{name}","byte_size":{len(data)},'
                f'"sha256":"{hashlib.sha256(data).hexdigest()}"}}')

    def meta(role: str, name: str) -> str:
        ident = "publisher-" + name.replace(".", "-").replace("_", "-")
        return (f'{{"role":"{role}","artifact_id":"{ident}","source_repo":"meshcert/tiny-llama",'
                f'"source_revision":"{PINNED_REVISION}","source_path":"{name}"}}')

    prov = ('"provenance":{"source_repo":"meshcert/tiny-llama","revision":"' + PINNED_REVISION
            + '","file":"README.md","section":"Best Practices","url":"https://huggingface.co/'
            'meshcert/tiny-llama/blob/' + PINNED_REVISION + '/README.md"}')
    spliced = (
        "," + ",".join(art(n) for n in ("chat_template.jinja", "config.json",
                                        "generation_config.json", "hf_quant_config.json",
                                        "tokenizer_config.json")) + "]},"
        '"publisher_metadata":[' + ",".join((
            meta("model_config", "config.json"),
            meta("generation_config", "generation_config.json"),
            meta("tokenizer_config", "tokenizer_config.json"),
            meta("chat_template", "chat_template.jinja"),
            meta("hf_quant_config", "hf_quant_config.json"))) + "],"
        '"publisher_defaults":{"compute_dtype":{"dtype":"bf16","artifact_id":'
        '"publisher-config-json","json_path":"/torch_dtype"},"kv_cache_dtype":{"dtype":"fp8",'
        '"artifact_id":"publisher-hf-quant-config-json","json_path":"/kv_cache_quant_algo"}},'
        '"generation":{"request_defaults":{"selection":{"default":"thinking",'
        '"reasoning_enabled":"thinking","reasoning_disabled":"direct"},"profiles":{'
        '"direct":{"temperature":0.7,"top_p":0.8,"top_k":20,"min_p":0.0,'
        '"presence_penalty":1.5,"reasoning":{"enabled":"off","budget":0},' + prov + '},'
        '"thinking":{"temperature":0.6,"top_p":0.95,"top_k":20,"min_p":0.0,' + prov + '}}}},'
        '"native_abi_version"')
    assert base.count(']},"native_abi_version"') == 1
    expected = base.replace(']},"native_abi_version"', spliced)
    assert canonical_bytes(written).decode() == expected
    want = "sha256:" + hashlib.sha256(expected.encode()).hexdigest()
    assert report.package_id == written["package_id"] == want


def test_stage_zeros_slice_covers_the_publisher_files_and_no_stage_loads_them(
        v2: SplitPackage) -> None:
    from meshcert.certify.formats.v2_layout import v2_artifact_entries
    from meshcert.certify.scope import Selection, parse_stage
    from meshcert.certify.stages import StageRange, stage_parts
    from tests.certify.v2_packages import add_publisher_files

    add_publisher_files(v2, {"config.json": _v079_files()["config.json"]})
    entries = v2_artifact_entries(v2.manifest)
    slices = [Selection.resolve(parse_stage(f"{i}/2"), v2.manifest, "v2", entries)
              for i in range(2)]
    assert [s.includes("metadata/config.json") for s in slices] == [True, False]
    loaded = stage_parts(entries, "v2", StageRange("all", 0, 4), 4)
    assert "metadata/config.json" not in {e.path for e in loaded}
