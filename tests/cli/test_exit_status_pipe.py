"""A reader that leaves early (`meshcert ... | head -1`) never changes a command's exit status.

Every command group, run on real inputs (packages written by meshcert.testing, the in-repo
Hub on 127.0.0.1, benchmark logs and a performance history), once with its stdout read to the
end and once into a pipe closed after the first line: the two statuses are equal, and no
traceback or BrokenPipeError reaches stderr. (docs/certify.md promises it for every command;
the entry point, meshcert.cli.main, keeps it: meshcert.cli.pipe.)"""

from __future__ import annotations

from tests.support.hub_env import prepare_process_env

prepare_process_env()  # before anything imports huggingface_hub

import os  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from meshcert.testing import llama_spec, write_package  # noqa: E402
from tests.evidence.mesh_history import jsonl, series  # noqa: E402
from tests.evidence.samples import SAMPLES  # noqa: E402
from tests.support.catalog_packages import variant, write_entry  # noqa: E402
from tests.support.hub_server import FakeHub  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "hf_pipe_test_token"
PERF = str(SAMPLES / "phase-e-perf.console.log")
PARITY = str(SAMPLES / "phase-e-parity.console.log")

# (id, argv): `{name}` is a path of the inputs below, `{out}` a fresh folder per run
COMMANDS: list[tuple[str, list[str]]] = [
    ("version", ["--version"]),
    ("models certify passed", ["models", "certify", "{package}", "--package-only"]),
    ("models certify failed", ["models", "certify", "{broken}", "--package-only"]),
    ("models certify json", ["models", "certify", "{package}", "--package-only", "--json"]),
    ("models inspect", ["models", "inspect", "{layer}"]),
    ("report render", ["report", "render", "{cert}", "--md", "{out}/cert.md"]),
    ("report merge", ["report", "merge", "{slice1}", "{slice2}"]),
    ("package plan", ["package", "plan", "{source}", "--stages", "2"]),
    ("catalog certify", ["catalog", "certify", "{catalog}", "--out-dir", "{out}"]),
    ("attest keygen", ["attest", "keygen", "--out", "{out}/signing"]),
    ("job list", ["job", "list", "--json"]),
    ("job status unknown", ["job", "status", "no-such-job"]),
    ("evidence ingest", ["evidence", "ingest", PERF, PARITY]),
    ("evidence gate enforced", ["evidence", "gate", PERF, "--require-gates"]),
    ("evidence report", ["evidence", "report", PERF, PARITY, "--out-dir", "{out}"]),
    ("evidence report fail-on", ["evidence", "report", PERF, "--out-dir", "{out}",
                                 "--fail-on", "failed"]),
    ("evidence history gate", ["evidence", "history", "{history}", "--gate"]),
    ("evidence run", ["evidence", "run", "--out-dir", "{out}", "-n", "2", "--", "cat", PERF]),
    ("demo", ["demo", "--out", "{out}/demo"]),
]


@pytest.fixture(scope="module")
def hub() -> Iterator[FakeHub]:
    fake = FakeHub().start()
    fake.add_token(TOKEN, user="alice")
    try:
        yield fake
    finally:
        fake.stop()


def _certify(package: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "meshcert", "models", "certify", str(package),
                    "--package-only", *args], env=_env(None), capture_output=True,
                   timeout=120, check=False)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    work = tmp_path_factory.mktemp("pipe-inputs")
    info = write_package(llama_spec(), work / "pkg", source_dir=work / "src")
    broken = write_package(llama_spec(), work / "broken", source_dir=None).root
    layer = broken / "layers" / "layer-000.gguf"
    data = bytearray(layer.read_bytes())
    data[-1] ^= 0xFF
    layer.write_bytes(bytes(data))
    cert, slice1, slice2 = work / "cert.json", work / "slice1.json", work / "slice2.json"
    _certify(info.root, "--report-out", str(cert))
    _certify(info.root, "--stage", "0/2", "--report-out", str(slice1))
    _certify(info.root, "--stage", "1/2", "--report-out", str(slice2))
    assert cert.exists() and slice1.exists() and slice2.exists()
    catalog = work / "catalog"
    write_entry(catalog, "meshcert/tiny-llama", {"F16": variant("ns/not-published")})
    history = work / "history.jsonl"
    history.write_text(jsonl(series("mesh", [(400.0, 180.0), (401.0, 181.0), (399.0, 180.0),
                                             (300.0, 180.0)])))
    assert info.source_path is not None
    return {"package": str(info.root), "broken": str(broken),
            "layer": str(info.root / "layers" / "layer-000.gguf"), "cert": str(cert),
            "slice1": str(slice1), "slice2": str(slice2), "source": str(info.source_path),
            "catalog": str(catalog), "history": str(history)}


def _env(hub: FakeHub | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    for key in ("FORCE_COLOR", "GLM52_PHASE_E_REQUIRE_GATES", "HF_TOKEN"):
        env.pop(key, None)
    if hub is not None:
        env.update(HF_ENDPOINT=hub.url, HF_TOKEN=TOKEN)
    return env


def _argv(template: list[str], inputs: dict[str, str], out: Path) -> list[str]:
    out.mkdir(parents=True)
    return [arg.format(out=out, **inputs) for arg in template]


def _run(argv: list[str], env: dict[str, str], *, close_after_first_line: bool
         ) -> tuple[int, bytes, bytes]:
    process = subprocess.Popen([sys.executable, "-m", "meshcert", *argv],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert process.stdout is not None
    if close_after_first_line:
        first = process.stdout.readline()
        process.stdout.close()   # the reader leaves, as `head -1` does
        process.stdout = None
        _, stderr = process.communicate(timeout=300)
        return process.returncode, first, stderr
    stdout, stderr = process.communicate(timeout=300)
    return process.returncode, stdout, stderr


@pytest.mark.parametrize("template", [c[1] for c in COMMANDS], ids=[c[0] for c in COMMANDS])
def test_the_status_is_the_same_into_a_pipe_closed_after_the_first_line(
        template: list[str], inputs: dict[str, str], hub: FakeHub, tmp_path: Path) -> None:
    env = _env(hub)
    status, stdout, _ = _run(_argv(template, inputs, tmp_path / "whole"), env,
                             close_after_first_line=False)
    piped, first, stderr = _run(_argv(template, inputs, tmp_path / "piped"), env,
                                close_after_first_line=True)
    assert piped == status, (stdout[-2000:], stderr[-2000:])
    if stdout:   # the same first line (its own output folder named)
        assert first.replace(b"/piped", b"/whole") == stdout.splitlines(keepends=True)[0]
    assert not re.search(rb"Traceback|BrokenPipe|Exception ignored", stderr), stderr[-2000:]


def test_the_table_holds_every_command_group() -> None:
    from meshcert.cli.root import GROUP_MODULES

    named = {argv[0] for _, argv in COMMANDS}
    assert set(GROUP_MODULES) | {"demo", "--version"} <= named
