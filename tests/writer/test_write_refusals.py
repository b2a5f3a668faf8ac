"""`package write` refuses, before a byte is written, what it would write and then fail: a
model id that is not an `owner/name:QUANT` coordinate, a --source-file that is not the source
given, a source repo that is not owner/name, an output it could not deliver. Whatever it
accepts, its own model card passes its own `readme` check."""

from __future__ import annotations

import string
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from meshcert.certify.service import CertRequest, certify_package
from meshcert.cli import app
from meshcert.core.errors import Refused
from meshcert.writer.identity_rules import is_model_coordinate
from tests.writer.builders import MODEL_ID, tiny_source, write_package

runner = CliRunner()
SOURCE_NAME = "tiny-llama-F16.gguf"


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_source(tmp_path_factory.mktemp("src"))


@pytest.mark.parametrize("text, ok", [
    ("org/repo:Q4_K_M", True), ("Qwen/Qwen3-235B-A22B-GGUF:UD-Q4_K_XL", True),
    ("a.b/c_d-e:F16", True), ("org/repo", False), ("notacoord", False), ("org/repo:", False),
    ("a|b/c:Q", False), ("org/re po:Q4", False), ("../repo:Q4", False), ("org/repo:Q4:x", False),
    ("o/r/x:Q4", False), (f"org/{'r' * 129}:Q4", False),
])
def test_a_model_id_is_a_coordinate(text: str, ok: bool) -> None:
    assert is_model_coordinate(text) is ok


@pytest.mark.parametrize("flags, says", [
    (["--model-id", "notacoord"], "is not a model coordinate"),
    (["--model-id", "a|b/c:Q4"], "is not a model coordinate"),
    (["--model-id", MODEL_ID, "--source-file", "other.gguf"],
     f"is not the source given ({SOURCE_NAME})"),
    (["--model-id", MODEL_ID, "--source-repo", "not a repo"], "is not a Hub repo owner/name"),
    (["--model-id", MODEL_ID, "--source-revision", " "], "--source-revision"),
    (["--model-id", MODEL_ID, "--html", "/nonexistent-dir/r.html"], "/nonexistent-dir"),
])
def test_refused_before_any_byte_is_written(source: Path, tmp_path: Path, flags: list[str],
                                            says: str) -> None:
    out = tmp_path / "pkg"
    result = runner.invoke(app, ["package", "write", str(source), "--out-dir", str(out),
                                 *flags])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("refused") and says in result.stderr, result.stderr
    assert not out.exists()


def test_an_existing_out_dir_is_left_as_it_was(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = runner.invoke(app, ["package", "write", str(source), "--out-dir", str(out),
                                 "--model-id", MODEL_ID, "--source-file", "renamed.gguf"])
    assert result.exit_code == 2
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    again = runner.invoke(app, ["package", "write", str(source), "--out-dir", str(out),
                                "--model-id", MODEL_ID, "--source-file", f"q/{SOURCE_NAME}"])
    assert again.exit_code == 0, again.output  # nothing left behind blocks the next write


_PART = st.text(string.ascii_letters + string.digits + "._-", min_size=1, max_size=12)
_COORDINATE = st.builds(lambda o, n, q: f"{o}/{n}:{q}", _PART, _PART, _PART)
_ANY = st.text(max_size=20)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model_id=st.one_of(_COORDINATE, _ANY),
       repo=st.one_of(st.none(), st.builds(lambda o, n: f"{o}/{n}", _PART, _PART), _ANY),
       revision=st.one_of(st.none(), st.text("0123456789abcdef", min_size=40, max_size=40),
                          _ANY),
       source_file=st.one_of(st.none(), st.just(SOURCE_NAME),
                             st.builds(lambda d: f"{d}/{SOURCE_NAME}", _PART), _ANY))
def test_whatever_it_accepts_its_card_passes_its_own_readme_check(
        source: Path, model_id: str, repo: str | None, revision: str | None,
        source_file: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "pkg"
        try:
            write_package(source, out, model_id=model_id, source_repo=repo,
                          source_revision=revision, source_file=source_file)
        except Refused:
            assert not out.exists()  # refused before writing
            return
        report = certify_package(CertRequest(model=str(out)))
    readme = [f for f in report.findings if f.check == "readme" or f.code.startswith("readme")]
    assert readme == [] and report.status == "passed", (report.status, report.findings)
