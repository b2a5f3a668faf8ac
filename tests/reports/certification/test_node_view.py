"""The cert report's 'What a node will apply' and 'Which mesh-llm can load it' sections, in
HTML and Markdown, from a real certified v2 package with typed defaults and request profiles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from meshcert.certify.report import CertReport
from meshcert.reports.certification.html import render_cert_html
from meshcert.reports.certification.markdown import render_cert_markdown
from tests.certify.publisher_packages import TINY_CONFIG, build_published, json_bytes
from tests.certify.v2_packages import build_v1
from tests.conftest import certify_dir

PROVENANCE = {"source_repo": "meshcert/tiny-llama", "revision": "a" * 40, "file": "README.md",
              "section": "Best practices",
              "url": f"https://huggingface.co/meshcert/tiny-llama/blob/{'a' * 40}/README.md"}


def with_profiles(manifest: dict[str, Any]) -> None:
    manifest["generation"] = {"request_defaults": {
        "selection": {"default": "thinking", "reasoning_disabled": "direct"},
        "profiles": {"thinking": {"temperature": 0.6, "top_k": 20, "provenance": PROVENANCE},
                     "direct": {"temperature": 0.7, "provenance": PROVENANCE}}}}


@pytest.fixture
def report(tmp_path: Path) -> CertReport:
    config = TINY_CONFIG | {"quantization_config": {"kv_cache_quant_algo": "FP8"}}
    defaults = {
        "compute_dtype": {"dtype": "bf16", "artifact_id": "publisher-config-json",
                          "json_path": "/torch_dtype"},
        "kv_cache_dtype": {"dtype": "fp8", "artifact_id": "publisher-config-json",
                           "json_path": "/quantization_config/kv_cache_quant_algo"}}
    pkg = build_published(tmp_path, {"config.json": json_bytes(config)}, defaults=defaults,
                          edit=with_profiles)
    return certify_dir(pkg.root)


def test_html_names_what_a_node_applies(report: CertReport) -> None:
    page = render_cert_html(report)
    assert '<section id="node" class="section">' in page
    assert "What a node will apply" in page
    # fp8 is declared, but only q8_0/q4_0 change the live cache: F16/F16
    assert '<code class="mono">f16/f16</code>' in page
    assert "from the package&#39;s kv_cache_dtype" in page
    assert '<tr data-profile="thinking">' in page and '<tr data-profile="direct">' in page
    assert "reasoning_disabled" in page
    assert '<span class="label">temperature</span> <code class="mono">0.6</code>' in page
    assert "Which mesh-llm can load it" in page
    assert "&gt;= 0.78.1" in page


def test_markdown_names_what_a_node_applies(report: CertReport) -> None:
    md = render_cert_markdown(report)
    assert "### What a node will apply" in md
    assert "| KV cache (K/V) | <code>f16/f16</code>" in md
    assert "Request profiles:" in md
    assert "| <code>thinking</code> | default |" in md
    assert "&gt;= 0.78.1" in md


def test_v1_reports_have_no_node_section(tmp_path: Path) -> None:
    report = certify_dir(build_v1(tmp_path).root)
    assert '<section id="node"' not in render_cert_html(report)
    assert "What a node will apply" not in render_cert_markdown(report)
