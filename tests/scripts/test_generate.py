"""scripts/generate.py: the one entry for every file the repository derives from code. Each
generated file is what it would write today, and no module of meshcert carries a generator of
its own (`python -m meshcert.X`); the workers are scripts the certifier starts, not generators."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "generate.py"
WORKER_SCRIPTS = {"meshcert/certify/chat_template/worker.py",
                  "meshcert/certify/workers/llama_gguf_worker.py",
                  "meshcert/certify/workers/llama_decode_worker.py"}


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generate", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_generated_file_is_current() -> None:
    generate = load()
    files = generate.outputs(list(generate.GENERATORS))
    assert ROOT / "docs" / "cert.schema.json" in files
    assert [str(p.relative_to(ROOT)) for p in generate.stale(files)] == []
    assert generate.main(["--check"]) == 0


def test_every_schema_in_docs_has_its_generator() -> None:
    generate = load()
    written = {p.name for name in generate.GENERATORS
               if name.endswith("-schema") for p in generate.GENERATORS[name]()}
    assert written == {p.name for p in (ROOT / "docs").glob("*.schema.json")}


def test_check_names_a_stale_file_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    generate = load()
    doc = ROOT / "docs" / "finding-codes.md"
    generate.GENERATORS["codes"] = lambda: {doc: doc.read_text(encoding="utf-8") + "drift\n"}
    assert generate.main(["--check", "codes"]) == 1
    assert "stale: docs/finding-codes.md" in capsys.readouterr().err


def test_an_unknown_name_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        load().main(["cert-schemas"])
    assert exit_info.value.code == 2
    assert "unknown name(s) cert-schemas" in capsys.readouterr().err


def test_no_module_of_meshcert_is_a_generator_of_its_own() -> None:
    mains = set()
    for path in (ROOT / "meshcert").rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
                mains.add(str(path.relative_to(ROOT)))
    # and `python -m meshcert`, guarded so that a spawned process (meshcert serve's
    # certification pool imports it as __mp_main__) does not run the command line again
    assert mains == WORKER_SCRIPTS | {"meshcert/__main__.py"}
