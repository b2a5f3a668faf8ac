"""Every command example in the README and docs/ runs as written, or is named below with the
reason it cannot run here.

An example is a line of a fenced block that starts with `meshcert ` (after `NAME=value `
settings, if any) or with a `$ ` prompt, its `\\` continuation lines joined. The examples of
one page run in order, with bash, in a directory of their own that holds what the pages call
their inputs, made from one `meshcert demo` run: `pkg`, `smol` (the demo's v2 package),
`GLM-5.2-layers` (its v1 GLM-DSA package), `model.gguf` and `Qwen3-8B-Q4_K_M.gguf` (its
source GGUF), `logs/` and `kernel-sweep/` (the bundled evidence logs). A page that writes
`pkg` itself (`package write ... --out-dir pkg`) gets none. `meshcert` is this checkout's, and
the Hub is an address that refuses connections, so an example that would need the network
fails instead of reaching it.

Each must exit with its documented status: 0, or the one in EXIT_STATUS (the page says so).
What needs the network, the Hub, HF Jobs, a token, llama.cpp or files the demo cannot make is
in SKIPPED with its reason: a new example is either run or listed there on purpose.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")))
EXAMPLE = re.compile(r"^(?:\$ |(?:[A-Z][A-Z0-9_]*=\S* )*meshcert )")
COMMENT = re.compile(r"\s+# .*$")

HUB = "needs the Hub"
JOBS = "submits HF Jobs (the Hub, a token, money)"
# without --confirm `package job` submits nothing: it checks the token's right to write the
# target, then plans from the source's Hub listing and the Hub's hardware prices
JOB_PLAN = "needs the Hub and a token that may write the target (a dry run: it submits nothing)"
SYNOPSIS = "a synopsis of the command's forms, not a command"
WALKTHROUGH = ("the serve walk-through, run as written against the in-repo Hub by "
               "tests/serve/test_walkthrough.py")
LLAMA = "needs llama.cpp (the slow tier runs it on the real models)"

# (page, example without its trailing comment) -> why it is not run here
SKIPPED: dict[tuple[str, str], str] = {
    ("docs/serve.md", "meshcert serve --config serve.toml --host 0.0.0.0 --port 8080"):
        "a long-running service; the walk-through starts it on the in-repo Hub "
        "(tests/serve/test_walkthrough.py)",
    ("docs/serve.md", "meshcert catalog recheck hf://datasets/meshllm/catalog --mesh-llm 0.76.2 "
                      "--runtime-abi 0.1.53 --matrix release-matrix.json --open-discussions"):
        HUB + " (tests/serve/test_release_recheck.py runs it on the in-repo Hub)",
    ("docs/serve.md", "HF_TOKEN=hf_bot meshcert serve --config serve.toml --port 8080 2> "
                      "serve.log &"): WALKTHROUGH,
    ("docs/serve.md", "meshcert attest verify hf://meshllm/demo-layers --attestation-repo "
                      "meshllm/meshcert-attestations --trusted-key release.pub"): WALKTHROUGH,
    ("README.md", "meshcert package write Qwen/Qwen3-8B-GGUF@main:Q4_K_M --out-dir pkg "
                  "--report-out cert.json"): HUB,
    ("README.md", "meshcert package publish pkg --target meshllm/Qwen3-8B-layers --catalog "
                  "meshllm/catalog"): HUB + " and a token that may write",
    ("README.md", "meshcert package job Qwen/Qwen3-235B-A22B-GGUF@main:UD-Q4_K_XL --target "
                  "meshllm/Qwen3-235B-layers"): JOB_PLAN,
    ("README.md", "meshcert package job Qwen/Qwen3-235B-A22B-GGUF@main:UD-Q4_K_XL --target "
                  "meshllm/Qwen3-235B-layers --confirm --follow --max-cost-usd 0.50"): JOBS,
    ("README.md", "meshcert models certify hf://ns/pkg@<sha> --package-only --report-out "
                  "cert.json"): HUB,
    ("README.md", "meshcert models certify hf://ns/pkg@<sha> --api-base http://127.0.0.1:9337 "
                  "--html cert.html"): HUB + " and a running mesh-llm endpoint",
    ("README.md", "meshcert models certify ./pkg --package-only --materialize --parity "
                  "SRC.gguf"): LLAMA,
    ("README.md", "meshcert models certify hf://ns/pkg@<sha> --package-only --hf-job --stages 4 "
                  "--confirm"): JOBS,
    ("README.md", "meshcert catalog certify hf://datasets/meshllm/catalog --out-dir "
                  "catalog-report/"): HUB,
    ("docs/attestation.md", "meshcert attest verify PKG --attestation FILE (--trusted-key "
                            "PUB... | --trust trust.toml) [--json]"): SYNOPSIS,
    ("docs/catalog.md", "meshcert catalog certify hf://datasets/meshllm/catalog"): HUB,
    ("docs/catalog.md", "meshcert catalog certify hf://datasets/meshllm/catalog@<sha> "
                        "--runtime-abi 0.1.54 --out-dir out"): HUB,
    ("docs/catalog.md", "meshcert catalog certify ./catalog-checkout --md "
                        "\"$GITHUB_STEP_SUMMARY\" --junit catalog.xml"):
        HUB + ": a catalog checkout lists hf:// packages",
    ("docs/catalog.md", "meshcert catalog certify ./catalog-checkout --sarif catalog.sarif"):
        HUB + ": a catalog checkout lists hf:// packages",
    ("docs/catalog.md", "meshcert catalog certify ./catalog-checkout --since out/catalog.json "
                        "--out-dir out"): HUB + ": a catalog checkout lists hf:// packages",
    ("docs/catalog.md", "meshcert catalog certify ./catalog-checkout --write-pins pins/"):
        HUB + ": a catalog checkout lists hf:// packages",
    ("docs/certify.md", "meshcert models certify hf://ns/GLM-5.2-layers@<40-hex-sha> "
                        "--package-only --report-out cert.json"): HUB,
    ("docs/certify.md", "meshcert models certify hf://ns/GLM-5.2-layers@<sha> --api-base "
                        "http://127.0.0.1:9337 --report-out cert.json --html cert.html "
                        "--junit cert.xml"): HUB + " and a running mesh-llm endpoint",
    ("docs/certify.md", "meshcert models certify hf://ns/pkg@<sha> --package-only "
                        "--verify-sha256 --stage I/4 --report-out node-I.json"): HUB,
    ("docs/certify.md", "meshcert report merge node-0.json node-1.json node-2.json node-3.json "
                        "--report-out cert.json --html cert.html"):
        "merges the four node reports of the hf:// example before it",
    ("docs/certify.md", "meshcert models certify ./SmolLM2-layers --package-only --materialize "
                        "--parity SmolLM2-135M-Instruct.Q4_1.gguf --report-out cert.json"): LLAMA,
    ("docs/certify.md", "$ meshcert package write SmolLM2-135M-Instruct.Q4_1.gguf --out-dir smol "
                        "... --source-revision <sha> --publisher-metadata config.json "
                        "--publisher-metadata generation_config.json --generation-defaults "
                        "defaults.json"): "elided; needs the real SmolLM2 source and its "
                                          "publisher files (tests/writer writes it)",
    ("docs/certify.md", "meshcert models certify hf://ns/pkg@<sha> --package-only --hf-job "
                        "--stages 4"): HUB + " (a dry run, still the Hub's listing and prices)",
    ("docs/certify.md", "meshcert models certify hf://ns/pkg@<sha> --package-only --hf-job "
                        "--stages 4 --confirm --max-cost-usd 0.20 --report-out cert.json "
                        "--html cert.html"): JOBS,
    ("docs/evidence.md", "meshcert evidence ingest runs/*/driver-result.json spec-bench.json "
                         "comparison.json history.jsonl"):
        "needs mesh-llm's own run outputs (tests/evidence reads real ones)",
    ("docs/evidence.md", "meshcert evidence history history.jsonl --out-dir review/history/ "
                         "--gate"): "needs a nightly performance history (tests/evidence)",
    ("docs/evidence.md", "meshcert evidence history hf://datasets/meshllm/perf-history@main "
                         "--json"): HUB,
    ("docs/evidence.md", "meshcert evidence history history.jsonl --out-dir review/history/ "
                         "--quiet"): "needs a nightly performance history (tests/evidence)",
    ("docs/evidence.md", "meshcert evidence run --out-dir sweep/ -n 5 --variant default --env "
                         "q3-k-mul-mv-id-nsg-4:SWEEP_NSG=4 -- test-backend-ops perf -o "
                         "MUL_MAT_ID"): LLAMA + " (test-backend-ops)",
    ("docs/evidence.md", "meshcert evidence run --out-dir argmax/ -n 3 --args 'small:-p "
                         "\"ne=\\[32,10,1,1\\]\"' --args 'large:-p \"ne=\\[1024,10,1,1\\]\"' "
                         "--check 'test-backend-ops test -b CPU -o ARGMAX' -- test-backend-ops "
                         "perf -b CPU -o ARGMAX"): LLAMA + " (test-backend-ops)",
    ("docs/inspect.md", "meshcert models inspect model-00001-of-00004.gguf --json"):
        "needs a split GGUF set (tests/certify/test_inspect*.py makes them)",
    ("docs/publishing.md", "meshcert package publish ./pkg --target "
                           "meshllm/Model-Q4_K_M-layers --catalog meshllm/catalog"):
        HUB + " and a token that may write",
    ("docs/publishing.md", "meshcert package write Qwen/Qwen3-8B-GGUF@main:Q4_K_M --out-dir "
                           "/tmp/pkg --publish meshllm/Qwen3-8B-Q4_K_M-layers "
                           "--delete-after-upload --catalog meshllm/catalog"):
        HUB + " and a token that may write",
    ("docs/publishing.md", "meshcert package job Qwen/Qwen3-235B-A22B-GGUF@main:UD-Q4_K_XL "
                           "--target meshllm/Qwen3-235B-layers"): JOB_PLAN,
    ("docs/publishing.md", "meshcert package job Qwen/Qwen3-235B-A22B-GGUF@main:UD-Q4_K_XL "
                           "--target meshllm/Qwen3-235B-layers --confirm --follow "
                           "--max-cost-usd 0.50"): JOBS,
    ("docs/publishing.md", "meshcert job list | status JOB | logs JOB [--follow] | cancel JOB"):
        SYNOPSIS,
    ("docs/writing.md", "meshcert package write Qwen/Qwen3-8B-GGUF@main:Q4_K_M --out-dir pkg "
                        "--report-out cert.json"): HUB,
    ("docs/writing.md", "meshcert package write Qwen3-8B-Q4_K_M.gguf --out-dir pkg --model-id "
                        "Qwen/Qwen3-8B-GGUF:Q4_K_M --source-repo Qwen/Qwen3-8B-GGUF "
                        "--source-revision <40-hex commit> --publisher-metadata config.json "
                        "--publisher-metadata generation_config.json --publisher-metadata "
                        "tokenizer_config.json --generation-defaults profiles.json"):
        "needs the source's publisher files and commit (tests/writer has them)",
    ("docs/writing.md", "meshcert package write Qwen/Qwen3-8B-GGUF@main:Q4_K_M --out-dir pkg"):
        HUB,
    ("docs/writing.md", "meshcert package plan Qwen/Qwen3-8B-GGUF@main:Q4_K_M --stages 2"): HUB,
}

# (page, example) -> the exit status of each of its runs in the page, when one is not 0
EXIT_STATUS: dict[tuple[str, str], tuple[int, ...]] = {
    # "exit 2 on any gate failure": the bundled GLM-5.2 rows miss Phase E rows
    ("README.md", "GLM52_PHASE_E_REQUIRE_GATES=1 meshcert evidence gate evidence.json"): (2,),
    ("docs/evidence.md", "GLM52_PHASE_E_REQUIRE_GATES=1 meshcert evidence gate evidence.json"):
        (2,),
    # VALID, then INVALID (attestation_subject_mismatch) once a byte was added
    ("README.md", "$ meshcert attest verify ./smol --attestation cert.intoto.jsonl "
                  "--trusted-key release.pub"): (0, 1),
}


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    text: str  # as written, continuation lines joined

    @property
    def key(self) -> tuple[str, str]:
        return self.page, COMMENT.sub("", self.text)

    @property
    def command(self) -> str:
        return self.text[2:] if self.text.startswith("$ ") else self.text


def examples(page: str) -> list[Example]:
    found: list[Example] = []
    fenced = False
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line, start = lines[i], i + 1
        i += 1
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced or not EXAMPLE.match(line):
            continue
        parts = [line.rstrip()]
        while parts[-1].endswith("\\") and i < len(lines):
            parts[-1] = parts[-1][:-1].rstrip()
            parts.append(lines[i].strip())
            i += 1
        found.append(Example(page, start, " ".join(parts)))
    return found


ALL = [example for page in PAGES for example in examples(page)]


def test_every_example_is_run_or_listed_with_its_reason() -> None:
    keys = {e.key for e in ALL}
    stale = sorted(set(SKIPPED) - keys) + sorted(set(EXIT_STATUS) - keys)
    assert not stale, f"listed here but no longer in the docs: {stale}"
    counts = Counter(e.key for e in ALL)
    wrong = {k: v for k, v in EXIT_STATUS.items() if len(v) != counts[k]}
    assert not wrong, f"one status per run of the example: {wrong}"
    run = [e for e in ALL if e.key not in SKIPPED]
    assert len(run) >= 20, [e.text for e in run]  # the offline ones really run


# -- running them ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docs-demo") / "meshcert-demo"
    done = subprocess.run([sys.executable, "-m", "meshcert", "demo", "--out", str(out)],
                          cwd=out.parent, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _workspace(page: str, demo: Path, where: Path) -> Path:
    where.mkdir()
    source = next((demo / "source").glob("*.gguf"))
    for name in ("model.gguf", "Qwen3-8B-Q4_K_M.gguf"):
        (where / name).symlink_to(source)
    packages = {"smol": "package-v2", "GLM-5.2-layers": "package"}
    if not any("--out-dir pkg" in e.text for e in examples(page) if e.key not in SKIPPED):
        packages["pkg"] = "package-v2"
    for name, package in packages.items():
        shutil.copytree(demo / package, where / name)
    data = ROOT / "meshcert" / "evidence" / "data"
    (where / "logs").mkdir()
    shutil.copy(data / "glm52-metal-headline.console.log", where / "logs")
    shutil.copytree(data / "kernel-sweep", where / "kernel-sweep")
    bin_dir = where.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "meshcert"  # this checkout's meshcert, under the test's interpreter
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m meshcert "$@"\n')
    shim.chmod(0o755)
    return where


def _environment(where: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "MESH_LLM_API_KEY")}
    return env | {"PATH": f"{where.parent / 'bin'}:{env.get('PATH', '')}",
                  "PYTHONPATH": str(ROOT), "HF_ENDPOINT": "http://127.0.0.1:9",
                  "HF_HUB_OFFLINE": "1", "GITHUB_STEP_SUMMARY": str(where / "summary.md"),
                  "COLUMNS": "100"}


PAGES_THAT_RUN = [page for page in PAGES
                  if any(e.key not in SKIPPED for e in examples(page))]


@pytest.mark.parametrize("page", PAGES_THAT_RUN)
def test_the_examples_of_a_page_run_as_written(page: str, demo: Path, tmp_path: Path) -> None:
    where = _workspace(page, demo, tmp_path / "work")
    env = _environment(where)
    seen: Counter[tuple[str, str]] = Counter()
    failed = []
    for example in examples(page):
        if example.key in SKIPPED:
            continue
        expected = EXIT_STATUS.get(example.key, (0,) * (seen[example.key] + 1))
        want = expected[seen[example.key]]
        seen[example.key] += 1
        done = subprocess.run(["bash", "-c", example.command], cwd=where, env=env,
                              capture_output=True, text=True, timeout=300)
        if done.returncode != want:
            failed.append(f"{page}:{example.line}: {example.text}\n  exit {done.returncode}, "
                          f"documented {want}\n{done.stdout[-800:]}{done.stderr[-1500:]}")
    assert not failed, "\n".join(failed)
