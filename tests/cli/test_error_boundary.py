"""Every command of the app, with a fault injected where it calls the library (the first
service function it reaches, replaced by one that raises), ends as the CLI's one error boundary
says (meshcert.cli.boundary): never a traceback, the exit status of the error's kind and its one
line on stderr (`refused: ...` for a refusal, `error: ...` otherwise); an operating-system
error is `error: <what the system said>: <file> ...` and exit 3; any other exception is a bug,
`internal error: <type> ...` and exit 3.

The commands are found by walking the app, so a new command without a case here fails
`test_every_command_has_a_case`.
"""

from __future__ import annotations

import ast
import errno
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

import meshcert
from meshcert.cli import app
from meshcert.cli.boundary import INTERNAL_ERROR
from meshcert.core.errors import ErrorKind, MeshcertError, Refused
from meshcert.core.exit_status import Exit

runner = CliRunner()
MESSAGE = "injected fault at the service layer"


class Case(NamedTuple):
    fault_at: str  # module:function the command calls first (replaced by one that raises)
    args: tuple[str, ...]  # after the command's path; {t} is a directory of inputs
    refused_as: str = "refused: {message}"  # the refusal's line, where a command says more


CASES: dict[str, Case] = {
    "models certify": Case("meshcert.certify.service:certify_package",
                           ("{t}/pkg", "--package-only")),
    "models inspect": Case("meshcert.certify.inspect_file:inspect_gguf", ("{t}/file.gguf",)),
    "report render": Case("meshcert.reports.loader:load_report",
                          ("{t}/report.json", "--md", "{t}/report.md")),
    "report merge": Case("meshcert.reports.loader:load_report", ("{t}/report.json",)),
    "report emit": Case("meshcert.hubjobs.report_channel:encode",
                        ("{t}/report.json", "--tag", "x")),
    "evidence ingest": Case("meshcert.evidence.ingest:ingest_files", ("{t}/bench.log",)),
    "evidence gate": Case("meshcert.evidence.service:gate_files", ("{t}/bench.log",)),
    "evidence report": Case("meshcert.evidence.service:report_files",
                            ("{t}/bench.log", "--out-dir", "{t}/out")),
    "evidence history": Case("meshcert.evidence.history_report:history_files",
                             ("{t}/history.jsonl",)),
    "evidence run": Case("meshcert.evidence.run:run_plan", ("--out-dir", "{t}/run", "--", "true")),
    # the writer's refusals say their code (docs/writing.md)
    "package write": Case("meshcert.writer.write:prepare",
                          ("{t}/file.gguf", "--out-dir", "{t}/out", "--model-id", "ns/m:Q4"),
                          "refused (injected): {message}"),
    "package plan": Case("meshcert.writer.write:open_source", ("{t}/file.gguf", "--stages", "2"),
                         "refused (injected): {message}"),
    "package publish": Case("meshcert.publish.service:refusal", ("{t}/pkg", "--target", "ns/r")),
    "package job": Case("meshcert.core.hub.access:find_token",
                        ("ns/repo:Q4_K_M", "--target", "ns/out")),
    "job list": Case("meshcert.core.hub.access:find_token", ()),
    "job status": Case("meshcert.core.hub.access:find_token", ("job-1",)),
    "job logs": Case("meshcert.core.hub.access:find_token", ("job-1",)),
    "job cancel": Case("meshcert.core.hub.access:find_token", ("job-1",)),
    "catalog certify": Case("meshcert.catalog.sources:open_catalog", ("{t}/pkg",)),
    "catalog recheck": Case("meshcert.serve.release_matrix:recheck_catalog",
                            ("{t}/pkg", "--mesh-llm", "0.1.0", "--matrix", "{t}/matrix.json")),
    "attest keygen": Case("meshcert.attest.keys:generate", ("--out", "{t}/key")),
    "attest verify": Case("meshcert.attest.verify:verify_ref",
                          ("{t}/pkg", "--trusted-key", "{t}/trusted.pub")),
    "demo": Case("meshcert.demo:run_demo", ("--out", "{t}/demo",)),
    "serve": Case("meshcert.serve.config:load_config", ("--config", "{t}/serve.toml")),
}


def _commands(group: TyperGroup, path: tuple[str, ...] = ()) -> Iterator[str]:
    for name, command in group.commands.items():
        if isinstance(command, TyperGroup):
            yield from _commands(command, (*path, name))
        else:
            yield " ".join((*path, name))


def _faults() -> list[tuple[str, BaseException]]:
    faults: list[tuple[str, BaseException]] = []
    for kind in ErrorKind:
        if kind is ErrorKind.REFUSAL:
            error: MeshcertError = Refused(MESSAGE, code="injected")
        else:
            error = MeshcertError(MESSAGE)
            error.kind = kind  # an instance narrows its kind (meshcert.core.errors)
        faults.append((kind.name.lower(), error))
    return [*faults, ("os", OSError(errno.ENOSPC, "No space left on device", "/out/x.html")),
            ("bug", RuntimeError(f"{MESSAGE}: hf_secret_token_text"))]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Files the commands' arguments name, enough for typer to accept them."""
    from meshcert.attest.keys import generate

    t = tmp_path_factory.mktemp("inputs")
    (t / "pkg").mkdir()
    (t / "pkg" / "model-package.json").write_text("{}")
    (t / "file.gguf").write_bytes(b"GGUF")
    (t / "report.json").write_text("{}")
    (t / "bench.log").write_text("")
    (t / "history.jsonl").write_text("")
    (t / "serve.toml").write_text("")
    generate(str(t / "trusted"))
    return t


def test_every_command_has_a_case() -> None:
    assert sorted(_commands(typer.main.get_command(app))) == sorted(CASES)  # type: ignore[arg-type]


@pytest.mark.parametrize(("fault_name", "fault"), _faults(), ids=[n for n, _ in _faults()])
@pytest.mark.parametrize("command", sorted(CASES))
def test_a_fault_ends_the_command_by_its_kind(
        command: str, fault_name: str, fault: BaseException, inputs: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[command]
    module_name, function = case.fault_at.split(":")
    module = importlib.import_module(module_name)
    getattr(module, function)  # loaded (a lazy export) before it is replaced

    def raising(*_args: Any, **_kwargs: Any) -> None:
        raise fault

    monkeypatch.setattr(module, function, raising)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    args = [*command.split(), *(arg.format(t=inputs) for arg in case.args)]
    # catch_exceptions=False: an exception that escapes the boundary fails the test
    result = runner.invoke(app, args, catch_exceptions=False)

    output = result.stdout + result.stderr
    assert "Traceback" not in output
    if isinstance(fault, MeshcertError):
        refused = fault.kind is ErrorKind.REFUSAL
        line = case.refused_as.format(message=MESSAGE) if refused else f"error: {MESSAGE}"
        assert result.exit_code == fault.exit_status, output
    elif isinstance(fault, OSError):  # the system's words and the file, not "a bug"
        line = "error: No space left on device: /out/x.html (the command did not finish)"
        assert result.exit_code == Exit.INCOMPLETE, output
    else:
        line = INTERNAL_ERROR.format(name="RuntimeError")
        assert result.exit_code == Exit.INCOMPLETE, output
        assert "hf_secret_token_text" not in output  # a bug's text may quote a secret
    assert result.stderr.splitlines()[-1] == line, output
    assert line not in result.stdout


def _meshcert_error_names() -> set[str]:
    """The names of every MeshcertError class meshcert defines."""
    names = set()
    root = Path(meshcert.__file__).parent
    for path in root.rglob("*.py"):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and node.bases:
                try:
                    cls = getattr(importlib.import_module(module), node.name)
                except ImportError:  # an optional part's extra is not installed
                    continue
                if isinstance(cls, type) and issubclass(cls, MeshcertError):
                    names.add(node.name)
    return names


def _names_in(node: ast.AST) -> set[str]:
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(node)
            if isinstance(n, ast.Name | ast.Attribute)}


def _caught(function: ast.AST, handler: ast.ExceptHandler) -> set[str]:
    """The names an except clause catches, through a tuple assigned in its function."""
    assert handler.type is not None
    names = _names_in(handler.type)
    for node in ast.walk(function):
        if isinstance(node, ast.AnnAssign | ast.Assign) and node.value is not None:
            targets: list[ast.expr] = (node.targets if isinstance(node, ast.Assign)
                                       else [node.target])
            if set().union(*map(_names_in, targets)) & names:
                names |= _names_in(node.value)
    return names


def test_commands_catch_a_meshcert_error_only_to_say_more() -> None:
    """The except clauses of the CLI that name a meshcert error class: the root's, and those
    that add to a command's ending (issue 44: at most 5 besides option_errors')."""
    family = _meshcert_error_names()
    found = []
    cli = Path(meshcert.__file__).parent / "cli"
    for path in sorted(cli.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.ExceptHandler) and node.type is not None:
                    caught = sorted(_caught(function, node) & family)
                    if caught:
                        found.append(f"{path.name}:{function.name}: {', '.join(caught)}")
    assert sorted(set(found)) == [
        # the root: any meshcert error, by its kind
        "boundary.py:invoke: MeshcertError",
        # the verdict is known but cannot be delivered: exit 3, never a success
        "catalog_cmd.py:_deliver: PinError",
        # each unusable input's line, then the refusal
        "evidence_exit.py:refusing_unusable: UnusableInputError",
        # a usage error for the option that named it (typer's usage line of the command)
        "option_errors.py:option_errors: OptionError",
        # the writer's refusal and abort codes, and what --resume continues
        "package_cmd.py:_write_errors: Aborted, Interrupted, Refused",
    ]
