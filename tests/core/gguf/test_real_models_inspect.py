"""No false positive on real models: both inspect clean, and llama.cpp's parser accepts them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.certify.inspect_file import inspect_gguf
from meshcert.certify.workers.llama_gguf import LlamaCppGGUF, find_library
from meshcert.cli import app
from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.reader import read_header_file
from tests.support.real_models import gemma3_path, smollm2_path

MODELS = [pytest.param(smollm2_path, id="smollm2-q4_1"),
          pytest.param(gemma3_path, id="gemma3-270m-q4_k_m")]
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("model", MODELS)
def test_a_real_model_inspects_clean(model: Callable[[], Path], tmp_path: Path) -> None:
    path = model()
    result = CliRunner().invoke(app, ["models", "inspect", str(path), "-q",
                                      "--report-out", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    report = inspect_gguf(str(path))
    assert [f for f in report.findings if f.severity != "info"] == [], report.findings
    header = read_header_file(path)
    assert isinstance(header, GGUFHeader)
    assert header.invalid_utf8 == [] and header.invalid_bools == []


@pytest.mark.skipif(find_library() is None, reason="llama-cpp-python (the live extra) missing")
@pytest.mark.parametrize("model", MODELS)
def test_llama_cpp_accepts_a_real_model(model: Callable[[], Path]) -> None:
    path = model()
    facts = LlamaCppGGUF().check({"m": path})
    verdict = facts.verdicts["m"]
    assert verdict.accepted, verdict.log
    header = read_header_file(path)
    assert isinstance(header, GGUFHeader)
    assert verdict.n_tensors == len(header.tensors)
