"""Publisher files, beyond mesh-llm (which never reads them): each JSON file a bounded JSON
object, config.json's geometry against the carrier, typed defaults against their file, and the
chat templates a node may render, audited in the sandbox. Real packages: the tiny v2 package
with files added as mesh-llm's writer adds them (tests/certify/publisher_packages.py).

The expected values are derived by hand from mesh-llm-0.79.md §2.3-2.4 (no real mesh-llm
package carries these contradictions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from meshcert.certify.chat_template import CODE_EXECUTION
from meshcert.certify.report import CertReport
from meshcert.core.findings import Finding
from tests.certify.chat_template.corpus import HOSTILE, LOOP
from tests.certify.publisher_packages import (
    TINY_CONFIG,
    build_published,
    compute_default,
    json_bytes,
)
from tests.conftest import certify_dir

CONFIG = "metadata/config.json"


def found(report: CertReport, code: str) -> list[Finding]:
    return [f for f in report.findings if f.code == code]


def publisher_codes(report: CertReport) -> set[str]:
    return {f.code for f in report.findings
            if f.check is not None and f.check.startswith("publisher_")}


def test_writer_made_publisher_files_raise_nothing(tmp_path: Path) -> None:
    report = certify_dir(build_published(tmp_path).root)
    assert publisher_codes(report) == set()
    runs = {c.name for c in report.checks}
    assert {"publisher_json", "publisher_config_geometry", "publisher_defaults_files",
            "publisher_chat_templates"} <= runs


def test_contradicted_config_json_is_a_geometry_error(tmp_path: Path) -> None:
    config = TINY_CONFIG | {"hidden_size": 4096, "num_key_value_heads": 8}
    report = certify_dir(build_published(tmp_path, {"config.json": json_bytes(config)}).root)
    hits = found(report, "publisher_config_geometry_mismatch")
    assert [(f.path, f.severity) for f in hits] == [(CONFIG, "error")] * 2
    assert "/hidden_size = 4096 conflicts with GGUF llama.embedding_length = 64" in \
        hits[0].message
    assert "/num_key_value_heads = 8 conflicts with GGUF llama.attention.head_count_kv = 4" \
        in hits[1].message
    assert report.status == "failed"


def test_a_non_integer_side_is_not_compared(tmp_path: Path) -> None:
    # §2.4: compared only when both sides are unsigned integers
    config = TINY_CONFIG | {"hidden_size": "4096", "max_position_embeddings": -1}
    report = certify_dir(build_published(tmp_path, {"config.json": json_bytes(config)}).root)
    assert found(report, "publisher_config_geometry_mismatch") == []


def test_nested_text_config_is_not_read(tmp_path: Path) -> None:
    config = {k: v for k, v in TINY_CONFIG.items() if k != "hidden_size"}
    config["text_config"] = {"hidden_size": 9999}
    report = certify_dir(build_published(tmp_path, {"config.json": json_bytes(config)}).root)
    assert found(report, "publisher_config_geometry_mismatch") == []


def test_typed_default_that_disagrees_with_its_file(tmp_path: Path) -> None:
    # config.json says bfloat16, the manifest declares f16 at /torch_dtype
    pkg = build_published(tmp_path, defaults=compute_default("f16"))
    hits = found(certify_dir(pkg.root), "publisher_default_mismatch")
    assert [(f.path, f.severity) for f in hits] == [(CONFIG, "error")]
    assert hits[0].message == (
        "publisher_defaults.compute_dtype: declared dtype 'f16', but metadata/config.json at "
        "/torch_dtype holds 'bfloat16', which maps to 'bf16' by the writer's mapping")


def test_typed_default_whose_json_path_does_not_resolve(tmp_path: Path) -> None:
    pkg = build_published(tmp_path, defaults=compute_default("bf16", "/no_such_key"))
    report = certify_dir(pkg.root)
    hits = found(report, "publisher_default_mismatch")
    assert [f.message for f in hits] == [
        "publisher_defaults.compute_dtype: json_path '/no_such_key' does not resolve in "
        "metadata/config.json"]
    # and the writer would have declared /torch_dtype: reported as a difference
    redo = found(report, "publisher_defaults_not_rederived")
    assert [(f.path, f.severity) for f in redo] == [(CONFIG, "warning")]
    assert "json_path '/torch_dtype'" in redo[0].message


def test_kv_cache_default_read_through_an_object_dtype(tmp_path: Path) -> None:
    # §2.3: a KV pointer may yield an object with a string `dtype`; int8 maps to q8_0
    config = TINY_CONFIG | {"quantization_config": {"kv_cache_scheme": {"dtype": "int8"}}}
    defaults = compute_default() | {"kv_cache_dtype": {
        "dtype": "q8_0", "artifact_id": "publisher-config-json",
        "json_path": "/quantization_config/kv_cache_scheme"}}
    pkg = build_published(tmp_path, {"config.json": json_bytes(config)}, defaults=defaults)
    report = certify_dir(pkg.root)
    assert publisher_codes(report) == set()
    assert report.node_defaults is not None
    assert (report.node_defaults.kv_cache_type, report.node_defaults.kv_cache_from) == \
        ("q8_0", "kv_cache_dtype")


def test_a_default_the_writer_would_have_declared_is_reported_missing(tmp_path: Path) -> None:
    pkg = build_published(tmp_path, defaults={})
    hits = found(certify_dir(pkg.root), "publisher_defaults_not_rederived")
    assert [f.message for f in hits] == [
        "publisher_defaults.compute_dtype: the manifest declares none; mesh-llm's writer would "
        "declare {dtype 'bf16', artifact_id 'publisher-config-json', json_path '/torch_dtype'} "
        "from these files"]
    assert hits[0].path == CONFIG


def test_an_unmapped_kv_value_is_one_the_writer_refuses(tmp_path: Path) -> None:
    config = TINY_CONFIG | {"kv_cache_dtype": "float"}
    pkg = build_published(tmp_path, {"config.json": json_bytes(config)})
    hits = found(certify_dir(pkg.root), "publisher_defaults_not_rederived")
    assert [f.message for f in hits] == [
        "metadata/config.json at /kv_cache_dtype holds 'float': mesh-llm's writer refuses it "
        "(unsupported publisher KV-cache dtype)"]


@pytest.mark.parametrize(("data", "code", "says"), [
    (b"\xff\xfe{}", "publisher_file_not_utf8", "is not UTF-8 (byte 0)"),
    (b"{\"a\": NaN}", "publisher_file_invalid_json", "is not valid JSON"),
    (b"{\"a\": 1} trailing", "publisher_file_invalid_json", "is not valid JSON"),
    (b"[" * 70 + b"]" * 70, "publisher_file_too_deep", "nests deeper than 64 levels"),
    (b"[1, 2, 3]", "publisher_file_not_object", "must hold a JSON object, found a JSON array"),
    (b"\"text\"", "publisher_file_not_object", "must hold a JSON object, found a JSON string"),
])
def test_bad_publisher_json(tmp_path: Path, data: bytes, code: str, says: str) -> None:
    pkg = build_published(tmp_path, {"generation_config.json": data}, defaults={})
    hits = found(certify_dir(pkg.root), code)
    path = "metadata/generation_config.json"
    assert [(f.path, f.severity) for f in hits] == [(path, "error")]
    assert hits[0].message.startswith(f"{path} (generation_config) {says}")


def test_a_huge_publisher_file_is_not_read(tmp_path: Path) -> None:
    # 16 MiB + 1 byte of valid JSON: refused by size, never parsed
    data = b"{\"pad\": \"" + b"x" * (16 * 1024 * 1024 - 10) + b"\"}"
    assert len(data) == 16 * 1024 * 1024 + 1
    pkg = build_published(tmp_path, {"tokenizer_config.json": data}, defaults={})
    report = certify_dir(pkg.root)
    hits = found(report, "publisher_file_too_large")
    assert [(f.path, f.severity) for f in hits] == [("metadata/tokenizer_config.json", "error")]
    assert "is 16777217 bytes, over the 16777216 byte limit" in hits[0].message
    assert found(report, "publisher_file_invalid_json") == []


def test_a_publisher_jinja_that_is_not_utf8(tmp_path: Path) -> None:
    pkg = build_published(tmp_path, {"chat_template.jinja": b"{{ x }}\xc3"}, defaults={})
    hits = found(certify_dir(pkg.root), "publisher_file_not_utf8")
    assert [f.path for f in hits] == ["metadata/chat_template.jinja"]


def test_hostile_chat_template_jinja_is_caught_in_the_sandbox(tmp_path: Path) -> None:
    template, code = HOSTILE["ssti_cycler_chain"]
    pkg = build_published(tmp_path, {"chat_template.jinja": template.encode()}, defaults={})
    report = certify_dir(pkg.root)
    hits = [f for f in found(report, code) if f.check == "publisher_chat_templates"]
    assert hits and {f.path for f in hits} == {"metadata/chat_template.jinja"}
    assert report.status == "failed"


@pytest.mark.parametrize("name", ["range_bomb", "endless_macro", "hidden_instruction"])
def test_hostile_template_in_tokenizer_config_string(tmp_path: Path, name: str) -> None:
    template, code = HOSTILE[name]
    config = {"chat_template": template, "eos_token": "</s>"}
    pkg = build_published(tmp_path, {"tokenizer_config.json": json_bytes(config)}, defaults={})
    hits = [f for f in found(certify_dir(pkg.root), code)
            if f.check == "publisher_chat_templates"]
    assert hits and {f.path for f in hits} == {"metadata/tokenizer_config.json"}
    assert all("/chat_template" in f.message for f in hits)


def test_hostile_named_template_in_a_tokenizer_config_list(tmp_path: Path) -> None:
    config: dict[str, Any] = {"chat_template": [
        {"name": "default", "template": LOOP},
        {"name": "tool_use", "template": HOSTILE["import"][0]}]}
    pkg = build_published(tmp_path, {"tokenizer_config.json": json_bytes(config)}, defaults={})
    hits = [f for f in found(certify_dir(pkg.root), CODE_EXECUTION)
            if f.check == "publisher_chat_templates"]
    assert hits and all("/chat_template/1/template ('tool_use')" in f.message for f in hits)
    assert {f.path for f in hits} == {"metadata/tokenizer_config.json"}


def test_a_tokenizer_chat_template_of_another_type(tmp_path: Path) -> None:
    config = {"chat_template": 42}
    pkg = build_published(tmp_path, {"tokenizer_config.json": json_bytes(config)}, defaults={})
    hits = [f for f in found(certify_dir(pkg.root), "chat_template_render_error")
            if f.check == "publisher_chat_templates"]
    assert [f.message for f in hits] == [
        "metadata/tokenizer_config.json: /chat_template is a JSON int, not a string or a list "
        "of {name, template}"]


def test_a_plain_template_in_both_places_is_clean(tmp_path: Path) -> None:
    files = {"tokenizer_config.json": json_bytes({"chat_template": LOOP}),
             "chat_template.jinja": LOOP.encode()}
    report = certify_dir(build_published(tmp_path, files, defaults={}).root)
    assert publisher_codes(report) == set()


def test_v1_and_file_less_v2_packages_have_no_publisher_checks(tmp_path: Path) -> None:
    from tests.certify.v2_packages import build_v2

    report = certify_dir(build_v2(tmp_path).root)
    assert publisher_codes(report) == set()
    assert json.loads(report.to_json())["node_defaults"]["kv_cache_type"] == "f16"


def test_mtp_config_that_leaves_out_the_nextn_block_is_an_info(tmp_path: Path) -> None:
    # GLM-DSA tiny model: GGUF block_count 4 = HF num_hidden_layers 3 + nextn_predict_layers 1
    from tests.certify.publisher_packages import add_publisher_files
    from tests.certify.v2_packages import build_v2

    config = {"num_hidden_layers": 3, "hidden_size": 64, "num_attention_heads": 4,
              "num_key_value_heads": 1, "max_position_embeddings": 4096}
    pkg = add_publisher_files(build_v2(tmp_path, kind="glm"),
                              {"config.json": json_bytes(config)}, defaults={})
    report = certify_dir(pkg.root)
    assert found(report, "publisher_config_geometry_mismatch") == []
    hits = found(report, "publisher_config_nextn_block")
    assert [(f.path, f.severity) for f in hits] == [(CONFIG, "info")]
    assert "/num_hidden_layers = 3 and GGUF glm-dsa.block_count = 4 differ by " \
        "glm-dsa.nextn_predict_layers = 1" in hits[0].message


def test_a_declaration_the_writer_would_not_make(tmp_path: Path) -> None:
    # config.json without torch_dtype/dtype: the writer declares no compute_dtype, but the
    # manifest binds one to /architectures/0 (which resolves, and maps to no dtype)
    config = {k: v for k, v in TINY_CONFIG.items() if k != "torch_dtype"}
    pkg = build_published(tmp_path, {"config.json": json_bytes(config)},
                          defaults=compute_default("bf16", "/architectures/0"))
    report = certify_dir(pkg.root)
    assert [f.message for f in found(report, "publisher_default_mismatch")] == [
        "publisher_defaults.compute_dtype: declared dtype 'bf16', but metadata/config.json at "
        "/architectures/0 holds 'LlamaForCausalLM', which maps to no publisher dtype by the "
        "writer's mapping"]
    redo = found(report, "publisher_defaults_not_rederived")
    assert [(f.path, f.severity) for f in redo] == [(CONFIG, "warning")]
    assert "mesh-llm's writer would declare nothing from these files" in redo[0].message


def test_a_list_of_many_templates_is_audited_up_to_a_cap(tmp_path: Path) -> None:
    config = {"chat_template": [{"name": f"t{i}", "template": LOOP + "x" * i}
                                for i in range(20)]}
    pkg = build_published(tmp_path, {"tokenizer_config.json": json_bytes(config)}, defaults={})
    hits = [f for f in found(certify_dir(pkg.root), "chat_template_render_error")
            if f.check == "publisher_chat_templates"]
    assert hits[0].message == ("metadata/tokenizer_config.json: 4 more chat template(s) after "
                               "the first 16 were not audited")
    # of the 16 audited, the first 8 are rendered (MAX_RENDERS), the other 8 say they were not
    assert len(hits) == 1 + 8
    assert all("was not rendered" in f.message for f in hits[1:])


def test_a_tool_use_template_in_a_tokenizer_config_list_passes(tmp_path: Path) -> None:
    """The Hub's tool_use layout: the named template lists `tools` with no guard. Rendered with
    the context transformers passes (tools=None, then a sample tool list), it is clean; before,
    it failed with "Object of type Undefined is not JSON serializable"."""
    tool_use = ("{{ bos_token }}{% for tool in tools %}{{ tool | tojson }}\n{% endfor %}"
                + LOOP + "{% if add_generation_prompt %}assistant:{% endif %}")
    config: dict[str, Any] = {"chat_template": [
        {"name": "default", "template": "{% if tools %}{{ tools | tojson }}{% endif %}" + LOOP},
        {"name": "tool_use", "template": tool_use}]}
    files = {"tokenizer_config.json": json_bytes(config),
             "chat_template.jinja": ("Tools: {{ tools | tojson }}\n" + LOOP).encode()}
    pkg = build_published(tmp_path, files, defaults={})
    report = certify_dir(pkg.root)
    template_findings = [f for f in report.findings if f.check == "publisher_chat_templates"]
    assert template_findings == [] and report.status == "passed", template_findings
