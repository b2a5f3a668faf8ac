"""`package write` with publisher metadata and generation defaults, in process: the files copied
byte for byte and catalogued where mesh-llm v0.79's writer puts them, the manifest in its field
order and serde_json's pretty layout, an MTP declaration kept beside request defaults, refusals
that leave nothing written, and the five files picked up at a Hub source's revision."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, cast

import pytest

from meshcert.certify.formats.package_id import compute_package_id
from meshcert.core.errors import Refused
from meshcert.writer.manifest import manifest_bytes
from meshcert.writer.write import WriteResult
from tests.conftest import certify_dir
from tests.support.hub_server import FakeHub
from tests.writer.builders import moe_sources, tiny_source, write_package
from tests.writer.test_publisher import QWEN3_CONFIG

REPO = "meshcert/tiny-llama"
REV = "0123456789abcdef0123456789abcdef01234567"
MOE_REPO = "meshcert/tiny-moe-mtp-GGUF"
ROOT_ORDER = ["schema_version", "package_id", "model_id", "source_model", "format",
              "layer_count", "artifact_catalog", "sidecars", "publisher_metadata",
              "publisher_defaults", "generation", "native_abi_version", "generator_version",
              "created_at_unix_secs"]


def request_defaults(repo: str = REPO, revision: str = REV) -> dict[str, Any]:
    """Shaped as mesh-llm's reviewed profiles (integer literals in float fields, a reasoning
    budget of 0); values invented."""
    prov = {"source_repo": repo, "revision": revision, "file": "generation_config.json",
            "section": "generation_config", "url": f"https://huggingface.co/{repo}/blob/"
                                                   f"{revision}/generation_config.json"}
    return {"selection": {"default": "recommended", "reasoning_disabled": "direct"},
            "profiles": {
                "recommended": {"temperature": 0.6, "top_p": 0.95, "top_k": 20, "min_p": 0,
                                "provenance": prov},
                "direct": {"temperature": 1, "reasoning": {"enabled": "off", "budget": 0},
                           "provenance": prov}}}


def inputs(base: Path, config: dict[str, Any] | None = None) -> dict[str, Path]:
    base.mkdir(parents=True, exist_ok=True)
    files = {
        "config.json": json.dumps(config or QWEN3_CONFIG, indent=2).encode(),
        "generation_config.json": b'{\n  "temperature": 0.6,\n  "top_p": 0.95\n}\n',
        "tokenizer_config.json": json.dumps({"chat_template": "{{ messages }}",
                                             "model_max_length": 256}).encode(),
        "chat_template.jinja": "{% for m in messages %}{{ m.content }}\u2014{% endfor %}".encode(),
        "defaults.json": json.dumps(request_defaults()).encode(),
    }
    for name, data in files.items():
        (base / name).write_bytes(data)
    return {name: base / name for name in files}


def manifest(result: WriteResult) -> dict[str, Any]:
    return cast(dict[str, Any], result.manifest)


def problems(report: Any) -> list[str]:
    return [f"{f.code}: {f.message}" for f in report.findings if f.severity != "info"]


def written(tmp_path: Path, names: list[str], **options: Any) -> tuple[WriteResult, dict]:
    given = inputs(tmp_path / "inputs")
    options.setdefault("source_repo", REPO)
    options.setdefault("source_revision", REV)
    result = write_package(options.pop("source", None) or tiny_source(tmp_path),
                           tmp_path / "pkg",
                           publisher_metadata=[str(given[n]) for n in names], **options)
    return result, given


def test_publisher_files_are_copied_catalogued_and_listed_in_mesh_llms_order(
        tmp_path: Path) -> None:
    names = ["tokenizer_config.json", "config.json", "chat_template.jinja"]
    result, given = written(tmp_path, names)
    m = manifest(result)
    ids = [e["id"] for e in m["artifact_catalog"]["entries"]]
    assert ids[0] == "metadata" and ids[-3:] == ["publisher-tokenizer-config-json",
                                                 "publisher-config-json",
                                                 "publisher-chat-template-jinja"]
    assert ids[1:-3] == sorted(ids[1:-3])  # the payload parts in plan (id) order
    for entry in m["artifact_catalog"]["entries"][-3:]:
        data = (result.root / entry["path"]).read_bytes()
        source = given[Path(entry["path"]).name].read_bytes()
        assert data == source  # byte for byte
        assert (entry["byte_size"], entry["sha256"]) == (len(data),
                                                         hashlib.sha256(data).hexdigest())
    assert m["publisher_metadata"] == [
        {"role": role, "artifact_id": f"publisher-{name.replace('.', '-').replace('_', '-')}",
         "source_repo": REPO, "source_revision": REV, "source_path": name}
        for role, name in (("tokenizer_config", "tokenizer_config.json"),
                           ("model_config", "config.json"),
                           ("chat_template", "chat_template.jinja"))]
    assert m["publisher_defaults"] == {"compute_dtype": {
        "dtype": "bf16", "artifact_id": "publisher-config-json", "json_path": "/torch_dtype"}}
    assert "generation" not in m  # a dense model, no defaults: none
    assert list(m) == [k for k in ROOT_ORDER if k in m]
    assert m["package_id"] == compute_package_id(m)


def test_the_manifest_file_is_serde_jsons_pretty_layout(tmp_path: Path) -> None:
    result, given = written(tmp_path, ["config.json"],
                            generation_defaults=str(tmp_path / "inputs" / "defaults.json"))
    raw = (result.root / "model-package.json").read_bytes()
    assert raw == manifest_bytes(manifest(result))
    text = raw.decode()
    # f64 fields as serde writes them (the file said 1 and 0), integers stay integers
    assert '"temperature": 1.0,' in text and '"min_p": 0.0,' in text
    assert '"top_k": 20,' in text and '"budget": 0' in text
    rd = manifest(result)["generation"]["request_defaults"]
    assert list(rd["profiles"]) == ["direct", "recommended"]  # a BTreeMap: sorted
    assert list(rd["profiles"]["recommended"]) == ["temperature", "top_p", "top_k", "min_p",
                                                   "provenance"]  # struct order
    assert json.loads(raw)["publisher_defaults"]["compute_dtype"]["dtype"] == "bf16"


def test_manifest_bytes_matches_serde_json_to_string_pretty() -> None:
    from meshcert.certify.formats.package_id import F64

    # hand-derived from serde_json's PrettyFormatter (two spaces, "key": value, empty
    # collections as {} and [], UTF-8 unescaped, f64 in ryu's spelling)
    value: dict[str, Any] = {"a": [], "b": {}, "c": [1, {"d": F64(1), "e": F64(1e-6)}], "f": "é\n",
             "g": None, "h": True}
    assert manifest_bytes(value).decode() == (
        '{\n  "a": [],\n  "b": {},\n  "c": [\n    1,\n    {\n      "d": 1.0,\n'
        '      "e": 1e-6\n    }\n  ],\n  "f": "é\\n",\n  "g": null,\n  "h": true\n}\n')


def test_a_package_with_publisher_files_and_defaults_certifies_passed(tmp_path: Path) -> None:
    names = ["config.json", "generation_config.json", "tokenizer_config.json",
             "chat_template.jinja"]
    result, _ = written(tmp_path, names,
                        generation_defaults=str(tmp_path / "inputs" / "defaults.json"))
    report = certify_dir(result.root, verify_sha256=True, source_gguf=result.prepared.source_ref)
    assert report.status == "passed", problems(report)
    assert report.package_id == manifest(result)["package_id"]


def test_generation_defaults_keep_the_inferred_mtp_declaration(tmp_path: Path) -> None:
    model, _ = moe_sources(tmp_path)
    defaults = tmp_path / "defaults.json"
    defaults.write_text(json.dumps(request_defaults()))
    result = write_package(model, tmp_path / "pkg", generation_defaults=str(defaults))
    generation = manifest(result)["generation"]
    assert list(generation) == ["request_defaults", "speculative_decoding"]  # mesh-llm drops
    assert generation["speculative_decoding"]["default"] == "mtp"  # the second; we keep it
    assert generation["speculative_decoding"]["strategies"]["mtp"]["layer_indices"] == [
        result.plan.layer_count - 1]


@pytest.mark.parametrize(("defaults", "words"), [
    ({"selection": {"default": "x"}, "profiles": {"x": {"temperature": 0.6}}, "extra": 1},
     "extra: unknown_manifest_field"),
    ({"selection": {"default": "x"}, "profiles": {"x": {"temperature": 0.6}}},
     "profiles[x].provenance: missing_value"),
    ({"selection": {"default": "nope"}, "profiles": {}}, "profiles: missing_value"),
    ([], "must hold a JSON object"),
])
def test_invalid_generation_defaults_are_refused_before_anything_is_written(
        tmp_path: Path, defaults: Any, words: str) -> None:
    path = tmp_path / "defaults.json"
    path.write_text(json.dumps(defaults))
    with pytest.raises(Refused) as err:
        write_package(tiny_source(tmp_path), tmp_path / "pkg", generation_defaults=str(path))
    assert err.value.code == "generation_defaults" and words in err.value.message
    assert not (tmp_path / "pkg").exists()


def test_a_bad_temperature_is_refused_with_the_certifiers_rule(tmp_path: Path) -> None:
    bad = request_defaults()
    bad["profiles"]["recommended"]["temperature"] = 1e400  # parses as infinity
    path = tmp_path / "defaults.json"
    path.write_text(json.dumps(bad).replace("Infinity", "1e400"))
    with pytest.raises(Refused) as err:
        write_package(tiny_source(tmp_path), tmp_path / "pkg", generation_defaults=str(path))
    assert "profiles[recommended].temperature: invalid_generation_value" in err.value.message


@pytest.mark.parametrize(("options", "code"), [
    ({"publisher_metadata": ["geometry"]}, "publisher_config_conflict"),
    ({"source_revision": "main"}, "publisher_metadata"),
    ({"source_repo": None}, "publisher_metadata"),
    ({"fmt": "v1"}, "usage"),
])
def test_publisher_refusals_come_before_any_payload(tmp_path: Path, options: dict[str, Any],
                                                    code: str) -> None:
    given = inputs(tmp_path / "inputs")
    bad = tmp_path / "bad" / "config.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps({**QWEN3_CONFIG, "num_hidden_layers": 36}))
    files = [str(bad) if p == "geometry" else p for p in options.pop("publisher_metadata", [
        str(given["config.json"])])]
    fields = {"source_repo": REPO, "source_revision": REV} | options
    with pytest.raises(Refused) as err:
        write_package(tiny_source(tmp_path), tmp_path / "pkg", publisher_metadata=files,
                      **fields)
    assert err.value.code == code
    assert not (tmp_path / "pkg").exists()


def test_the_mtp_source_with_hfs_layer_count_is_written_and_certifies(tmp_path: Path) -> None:
    # the moe source's GGUF has block_count 4 with the NextN block last; a GLM-4.x-style HF
    # config.json counts 3 hidden layers (+1 nextn): mesh-llm's writer refuses, meshcert writes
    model, _ = moe_sources(tmp_path)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "glm4_moe", "num_hidden_layers": 3,
                                  "num_nextn_predict_layers": 1, "hidden_size": 64,
                                  "torch_dtype": "bfloat16"}))
    result = write_package(model, tmp_path / "pkg", publisher_metadata=[str(config)],
                           source_repo=REPO, source_revision=REV)
    assert manifest(result)["publisher_defaults"]["compute_dtype"]["dtype"] == "bf16"
    report = certify_dir(result.root, verify_sha256=True, source_gguf=str(model))
    assert report.status == "passed", problems(report)


def test_resume_rewrites_a_publisher_file_that_differs_and_the_hook_sees_each(
        tmp_path: Path) -> None:
    source = tiny_source(tmp_path)
    given = inputs(tmp_path / "inputs")
    seen = tmp_path / "seen.txt"
    fields: dict[str, Any] = {"source_repo": REPO, "source_revision": REV,
                              "publisher_metadata": [str(given["config.json"])],
                              "after_artifact_command": f"echo $SKIPPY_PACKAGE_ARTIFACT_"
                                                        f"RELATIVE_PATH >> {seen}"}
    first = write_package(source, tmp_path / "pkg", **fields)
    assert "metadata/config.json" in seen.read_text().split()
    (first.root / "model-package.json").unlink()
    (first.root / "metadata/config.json").write_bytes(b"{}")
    again = write_package(source, tmp_path / "pkg", resume=True, **fields)
    assert again.rewritten == ["metadata/config.json"]
    assert (again.root / "metadata/config.json").read_bytes() == given["config.json"].read_bytes()


# --- a Hub source ------------------------------------------------------------------------------
def _publish(hub: FakeHub, tmp_path: Path, *names: str) -> tuple[str, Path]:
    model, _ = moe_sources(tmp_path)
    folder = model.parent
    (folder / "mmproj-tiny-F16.gguf").unlink()
    given = inputs(tmp_path / "inputs", {"num_hidden_layers": 3, "hidden_size": 64,
                                         "torch_dtype": "float16"})
    for name in names:
        (folder / name).write_bytes(given[name].read_bytes())
    (folder / "README.md").write_text("a model\n")
    return hub.publish_dir(MOE_REPO, folder), model


def test_a_hub_source_picks_up_the_publisher_files_at_its_revision(hub: FakeHub,
                                                                   tmp_path: Path) -> None:
    commit, model = _publish(hub, tmp_path, "tokenizer_config.json", "config.json")
    result = write_package(f"{MOE_REPO}@main:Q3_K", tmp_path / "pkg", model_id=None)
    m = manifest(result)
    # mesh-llm's job passes them in the order of its five basenames
    assert [(e["source_path"], e["source_repo"], e["source_revision"])
            for e in m["publisher_metadata"]] == [("config.json", MOE_REPO, commit),
                                                  ("tokenizer_config.json", MOE_REPO, commit)]
    assert (result.root / "metadata/config.json").read_bytes() == \
        hub.file_bytes(MOE_REPO, commit, "config.json")
    assert m["publisher_defaults"]["compute_dtype"]["dtype"] == "f16"
    report = certify_dir(result.root, verify_sha256=True, source_gguf=str(model))
    assert report.status == "passed", problems(report)


def test_no_publisher_metadata_opts_out_and_a_named_file_wins(hub: FakeHub,
                                                              tmp_path: Path) -> None:
    _publish(hub, tmp_path, "config.json", "generation_config.json")
    none = write_package(f"{MOE_REPO}@main:Q3_K", tmp_path / "none", model_id=None,
                         pick_up_publisher_metadata=False)
    assert "publisher_metadata" not in manifest(none)
    assert "publisher_defaults" not in manifest(none)
    mine = tmp_path / "mine" / "config.json"
    mine.parent.mkdir()
    mine.write_text(json.dumps({"num_hidden_layers": 3, "torch_dtype": "float32"}))
    both = write_package(f"{MOE_REPO}@main:Q3_K", tmp_path / "both", model_id=None,
                         publisher_metadata=[str(mine)])
    assert [e["source_path"] for e in manifest(both)["publisher_metadata"]] == [
        "config.json", "generation_config.json"]
    assert (both.root / "metadata/config.json").read_bytes() == mine.read_bytes()
    assert manifest(both)["publisher_defaults"]["compute_dtype"]["dtype"] == "f32"
