"""The chat_templates check over real GGUF files: every hostile template of the corpus in a
single GGUF (no manifest, as `models inspect` audits it) and in a package's metadata.gguf
(certify)."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.certify.chat_template import CODE_EXECUTION, HIDDEN_INSTRUCTION, RENDER_ERROR
from meshcert.certify.template_audits import MAX_RENDERS
from meshcert.testing import llama_spec, write_source_gguf
from tests.certify.chat_template.corpus import HOSTILE, LOOP
from tests.certify.checks.gguf_edits import (
    Typed,
    V,
    edit_package,
    fragment_paths,
    load_safety_findings,
    rewrite_gguf,
    single_file_view,
)
from tests.conftest import PackageFactory, certify_dir, codes

KEY = "tokenizer.chat_template"
CORPUS = HOSTILE  # every rule of the auditor, each written into a real GGUF


def _model_file(tmp_path: Path, key: str, value: object) -> Path:
    path = write_source_gguf(llama_spec(), tmp_path / "model.gguf")
    rewrite_gguf(path, lambda kv: kv.__setitem__(key, value))
    return path


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_hostile_template_in_a_single_gguf(tmp_path: Path, name: str) -> None:
    template, code = CORPUS[name]
    found = load_safety_findings(single_file_view(_model_file(tmp_path, KEY, template)))
    assert {f.code for f in found} == {code}, found
    assert all(f.path == "model.gguf" for f in found)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_hostile_template_in_a_package_fails_certify(packages: PackageFactory, name: str
                                                     ) -> None:
    template, code = CORPUS[name]
    info = packages.build()
    edit_package(info, lambda kv: kv.__setitem__(KEY, template))
    report = certify_dir(info.root)
    assert code in codes(report)
    hit = [f for f in report.findings if f.code == code]
    assert all(f.path == "shared/metadata.gguf" and f.check == "chat_templates" for f in hit)
    run = next(c for c in report.checks if c.name == "chat_templates")
    if code == HIDDEN_INSTRUCTION:  # a warning: reported, the check warns, nothing fails
        assert run.status == "warning"
    else:
        assert report.status == "failed" and run.status == "failed"


def test_a_named_template_is_audited_too(tmp_path: Path) -> None:
    path = _model_file(tmp_path, "tokenizer.chat_template.tool_use",
                       LOOP + "{{ self.__dict__ }}")
    found = load_safety_findings(single_file_view(path))
    assert [f.code for f in found] == [CODE_EXECUTION, CODE_EXECUTION]
    assert all("tokenizer.chat_template.tool_use" in f.message for f in found)


def test_a_template_that_is_not_a_string_is_a_render_error(tmp_path: Path) -> None:
    path = _model_file(tmp_path, KEY, Typed([1, 2, 3], V.ARRAY, V.INT32))
    found = load_safety_findings(single_file_view(path))
    assert [f.code for f in found] == [RENDER_ERROR]
    assert "is not a string" in found[0].message


def test_a_template_repeated_in_every_fragment_is_audited_once(packages: PackageFactory
                                                                ) -> None:
    info = packages.build()
    template = LOOP + "{{ request.args }}"
    edit_package(info, lambda kv: kv.__setitem__(KEY, template), fragment_paths(info))
    report = certify_dir(info.root)
    hits = [f for f in report.findings if f.code == CODE_EXECUTION]
    assert len(hits) == 1
    assert hits[0].path == "shared/metadata.gguf"
    assert f"also in {len(fragment_paths(info)) - 1} other file(s)" in hits[0].message
    assert "tokenizer_copies_differ" not in codes(report)  # the copies agree


def test_the_demo_template_is_clean_and_was_audited(packages: PackageFactory) -> None:
    for kind in ("llama", "glm-dsa"):
        report = certify_dir(packages.build(kind).root)
        run = next(c for c in report.checks if c.name == "chat_templates")
        assert run.status == "passed" and run.findings == 0
        assert report.status == "passed"


def test_renders_per_view_are_bounded(tmp_path: Path) -> None:
    names = [f"tokenizer.chat_template.t{i:02d}" for i in range(MAX_RENDERS + 2)]
    path = write_source_gguf(llama_spec(), tmp_path / "model.gguf")
    rewrite_gguf(path, lambda kv: kv.update({n: LOOP + f"<|{n}|>" for n in names}))
    found = load_safety_findings(single_file_view(path))
    # the model's own tokenizer.chat_template comes first and is one of the rendered ones
    assert [(f.code, f.message.split(":")[1].split()[0]) for f in found] == [
        (RENDER_ERROR, n) for n in names[MAX_RENDERS - 1:]]
    assert all("was not rendered" in f.message for f in found)


def test_a_named_tool_use_template_that_lists_tools_passes(packages: PackageFactory) -> None:
    """`tokenizer.chat_template.tool_use` with `{{ tools | tojson }}`: rendered as a node
    renders it (tools passed, None or a sample list), the package passes."""
    info = packages.build()
    edit_package(info, lambda kv: kv.__setitem__(f"{KEY}.tool_use",
                                                 "{{ tools | tojson }}\n" + LOOP))
    report = certify_dir(info.root)
    assert [f for f in report.findings if f.check == "chat_templates"] == []
    assert report.status == "passed"
