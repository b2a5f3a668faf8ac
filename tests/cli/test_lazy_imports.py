"""`import meshcert.cli` loads typer and the command registry, nothing heavy: the commands
import pandas, numpy, jinja2, httpx, huggingface_hub, gguf and the engines when they run.

A module list, never a time: each case runs a fresh interpreter and reads `sys.modules`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "numpy", "jinja2", "httpx", "huggingface_hub", "gguf", "pydantic",
         "markupsafe", "rich.progress", "rich.table", "rich.markdown", "typer.rich_utils",
         "meshcert.evidence.ingest", "meshcert.evidence.report", "meshcert.certify.engine",
         "meshcert.certify.service",
         "meshcert.certify.report", "meshcert.reports.outputs", "meshcert.demo", "meshcert.testing")


def loaded_after(code: str) -> set[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"FORCE_COLOR", "TTY_COMPATIBLE"}}
    env["PYTHONPATH"] = str(ROOT)  # and no colour forced: rich's answer would depend on it
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys, json\n"
                          "print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, env=env, cwd=ROOT,
                         timeout=120).stdout
    return set(json.loads(out.splitlines()[-1]))


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(h for h in HEAVY if h in modules)


def test_import_meshcert_cli_loads_no_command_group() -> None:
    modules = loaded_after("import meshcert.cli")
    assert "typer" in modules
    assert not [m for m in modules if m.endswith(("_cmd", "_group"))]


def test_the_whole_app_loads_every_group_and_no_heavy_module() -> None:
    modules = loaded_after("from meshcert.cli import app")
    assert {"meshcert.cli.models_cmd", "meshcert.cli.job_group"} <= modules
    assert heavy_in(modules) == []


def test_a_command_loads_only_its_own_group() -> None:
    modules = loaded_after("from meshcert.cli import app_for\n"
                           "try:\n    app_for(['models', '--help'])(['models', '--help'])\n"
                           "except SystemExit:\n    pass")
    assert "meshcert.cli.models_cmd" in modules
    assert {"meshcert.cli.evidence_cmd", "meshcert.cli.package_cmd",
            "meshcert.cli.catalog_cmd"}.isdisjoint(modules)


def test_help_loads_no_heavy_module() -> None:
    modules = loaded_after("from meshcert.cli import app\n"
                           "try:\n    app(['--help'])\nexcept SystemExit:\n    pass")
    assert heavy_in(modules) == []


@pytest.mark.parametrize("module", ["meshcert.certify.sources.local", "meshcert.certify.checks"])
def test_local_certification_needs_no_numpy_or_gguf_package(module: str) -> None:
    """gguf-py's tables are generated into the repository (meshcert.core.gguf.gguf_tables)."""
    modules = loaded_after(f"import {module}")
    assert {"numpy", "gguf", "jinja2", "pandas", "httpx"}.isdisjoint(modules)


SMALL_LOG = "meshcert/evidence/data/kernel-sweep/mul-mm-id-min-1.console.log"


@pytest.mark.parametrize("flags", [[], ["--json"]], ids=["summary", "json"])
def test_ingest_of_a_small_log_loads_no_pandas_or_numpy(flags: list[str]) -> None:
    """The summary counts rows without the DataFrame (it is built when something reads
    `result.table`: gate, report, --out)."""
    modules = loaded_after("from meshcert.cli import app\n"
                           f"try:\n    app(['evidence', 'ingest', {SMALL_LOG!r}, *{flags!r}])\n"
                           "except SystemExit as exc:\n    assert not exc.code, exc.code")
    assert "meshcert.evidence.ingest" in modules
    assert {"pandas", "numpy"}.isdisjoint(modules)


def test_ingest_files_loads_pandas_only_for_the_table() -> None:
    code = ("from meshcert.evidence.ingest import ingest_files\n"
            f"result = ingest_files([{SMALL_LOG!r}])\n"
            "assert (result.row_count, result.rows_by_kind()) == (1, {'perf': 1})\n"
            "import sys\nassert 'pandas' not in sys.modules and 'numpy' not in sys.modules\n"
            "assert len(result.table) == 1")
    assert {"pandas", "numpy"} <= loaded_after(code)


def test_the_heavy_list_is_real() -> None:
    """The probe sees the modules it looks for: the full CLI run of a command loads them."""
    modules = loaded_after("import meshcert.cli.models_cmd, meshcert.evidence.ingest, "
                           "meshcert.evidence.table, meshcert.reports.outputs, "
                           "meshcert.reports.certification.html, gguf")
    assert {"pandas", "numpy", "jinja2", "gguf", "pydantic"} <= modules


def test_prestarting_the_workers_loads_no_template_engine() -> None:
    """The CLI starts the workers first thing, before the engine is imported."""
    modules = loaded_after("from meshcert.certify.workers import prestart_workers\n"
                           "prestart_workers()")
    assert {"jinja2", "pydantic", "meshcert.certify.engine"}.isdisjoint(modules)


def test_certifying_a_package_with_a_chat_template_never_loads_jinja2_here(
        tmp_path: Path) -> None:
    """The template is audited and rendered in the worker
    (meshcert.certify.chat_template.isolated)."""
    from meshcert.testing import glm_dsa_spec, write_package

    root = write_package(glm_dsa_spec(), tmp_path / "pkg", source_dir=tmp_path / "src").root
    modules = loaded_after(
        "from meshcert.cli import app\n"
        f"try:\n    app(['models', 'certify', {str(root)!r}, '--package-only', '--quiet'])\n"
        "except SystemExit as exc:\n    assert exc.code == 0, exc.code")
    assert "meshcert.certify.checks.chat_templates" in modules  # the check ran
    assert "jinja2" not in modules


@pytest.mark.parametrize("flags", [[], ["--quiet"]], ids=["summary", "quiet"])
def test_certifying_to_a_pipe_never_loads_rich(tmp_path: Path, flags: list[str]) -> None:
    """Off a terminal there is no colour and no bar: the summary is written as plain text
    (meshcert.cli.terminal), so rich is not imported at all."""
    from meshcert.testing import llama_spec, write_package

    root = write_package(llama_spec(), tmp_path / "pkg", source_dir=None).root
    modules = loaded_after(
        "from meshcert.cli import app\n"
        f"try:\n    app(['models', 'certify', {str(root)!r}, '--package-only', *{flags!r}])\n"
        "except SystemExit as exc:\n    assert exc.code == 0, exc.code")
    assert "meshcert.certify.engine" in modules  # it certified
    assert "rich" not in modules


def test_the_llama_cpp_worker_script_imports_only_the_standard_library() -> None:
    """Every import of the worker is paid by every certification, before it can answer."""
    import ast

    worker = ROOT / "meshcert" / "certify" / "workers" / "llama_gguf_worker.py"
    tree = ast.parse(worker.read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {str(node.module).split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "ctypes", "json", "os", "sys", "typing"}, imported
