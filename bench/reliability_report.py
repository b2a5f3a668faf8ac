"""Run the reliability suite with its fixed budgets and seeds, count what it tried, and write
docs/RELIABILITY.md (what is tried, the figures of this run, how to reproduce).

    python bench/reliability_report.py             # run, then (re)write docs/RELIABILITY.md
    python bench/reliability_report.py --check     # run only; exit 1 if anything was found
    python bench/reliability_report.py --out x.md  # write elsewhere

The suites are ordinary pytest files (CI runs them with the rest); this script runs them
in-process under a small pytest plugin that counts:
- examples per property: hypothesis' own statistics (test cases of the generate phase), and
  for the seeded-random GGUF fuzzer, the calls of its `check()`;
- faults injected per matrix: the `faults_injected` figure each cell records (faulty answers
  the fake servers actually served), and cells run;
- crashes (a failure whose error is not an assertion: an exception escaped), hangs (a
  pytest-timeout failure or a `HANG:` hang-guard assertion), property violations (any other
  assertion), secrets leaked (the `secrets_leaked` figure of the secrets tests).
It re-executes itself with PYTHONHASHSEED=0 so that set orders, and so the runs, repeat.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "RELIABILITY.md"

FUZZ_FILES = {
    "tests/certify/test_fuzz_manifest.py": "manifest (model-package.json)",
    "tests/core/gguf/test_gguf_fuzz.py": "GGUF header reader",
    "tests/reliability/test_fuzz_evidence_parsers.py": "evidence parsers",
}
HUB_MATRIX = "tests/reliability/test_fault_matrix_hub.py"
ENDPOINT_MATRIX = "tests/reliability/test_fault_matrix_endpoint.py"
SUITES: dict[str, list[str]] = {
    "fuzzing": list(FUZZ_FILES),
    "fault matrices": [HUB_MATRIX, ENDPOINT_MATRIX],
    "containment": ["tests/reliability/test_containment.py", "tests/certify/test_engine.py",
                    "tests/core/test_hashing.py"],
    "path and file safety": ["tests/reliability/test_path_safety.py",
                             "tests/certify/checks/test_artifact_checks.py"],
    "secrets": ["tests/reliability/test_secrets.py"],
    "related fault tests": ["tests/certify/runtime/test_gates_fake.py",
                            "tests/core/hub/test_errors.py"],
}
# seeded-random fuzzers (not hypothesis): module -> function whose calls are the cases
COUNTED_CALLS = {"tests.core.gguf.test_gguf_fuzz": "check"}


@dataclass
class Outcome:
    nodeid: str
    outcome: str = "passed"  # passed | failed | skipped
    kind: str | None = None  # for failures: crash | hang | violation
    message: str = ""
    duration: float = 0.0
    figures: dict[str, Any] = field(default_factory=dict)


class Counter:
    """The pytest plugin: outcomes, figures, hypothesis statistics, counted calls."""

    def __init__(self) -> None:
        self.outcomes: dict[str, Outcome] = {}
        self.examples: dict[str, dict[str, int]] = {}
        self.calls: dict[str, int] = defaultdict(int)
        self._current: str | None = None

    # hypothesis hands its statistics to `describe_statistics`, with the node id added
    def pytest_configure(self, config: pytest.Config) -> None:
        import hypothesis.statistics as statistics

        original = statistics.describe_statistics

        def spy(stats: Any) -> str:
            phases = [stats.get(p) or {} for p in ("explicit-phase", "reuse-phase",
                                                   "generate-phase")]
            cases = [c for phase in phases for c in phase.get("test-cases") or []]
            self.examples[str(stats.get("nodeid"))] = {
                "cases": len(cases),
                "valid": sum(1 for c in cases if c.get("status") in ("valid", "interesting")),
                "failing": sum(1 for c in cases if c.get("status") == "interesting"),
            }
            return original(stats)

        statistics.describe_statistics = spy  # type: ignore[assignment]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for module_name, attr in COUNTED_CALLS.items():
            module = sys.modules.get(module_name)
            if module is None or not hasattr(module, attr):
                continue
            real: Callable[..., Any] = getattr(module, attr)

            def counted(*args: Any, _real: Callable[..., Any] = real, **kwargs: Any) -> Any:
                if self._current is not None:
                    self.calls[self._current] += 1
                return _real(*args, **kwargs)

            setattr(module, attr, counted)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        self._current = item.nodeid
        yield
        self._current = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        entry = self.outcomes.setdefault(report.nodeid, Outcome(report.nodeid))
        entry.figures.update(dict(report.user_properties))
        if report.when == "call":
            entry.duration = report.duration
        if report.skipped and entry.outcome == "passed":
            entry.outcome = "skipped"
        if report.failed:
            entry.outcome = "failed"
            entry.kind, entry.message = classify(report)


def classify(report: pytest.TestReport) -> tuple[str, str]:
    text = report.longreprtext
    crash = getattr(report.longrepr, "reprcrash", None)
    message = str(getattr(crash, "message", "") or text.strip().splitlines()[-1:] or "")
    if "Timeout >" in text or "HANG" in message:
        return "hang", message
    if message.startswith(("AssertionError", "assert ")) or "AssertionError" in message[:40]:
        return "violation", message
    return "crash", message


def run_suites(extra: list[str]) -> tuple[Counter, float, int]:
    counter = Counter()
    files = [f for files in SUITES.values() for f in files]
    started = time.monotonic()
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", *files, *extra],
                       plugins=[counter])
    return counter, time.monotonic() - started, int(code)


# -- figures ---------------------------------------------------------------------------------
def _in(nodeid: str, path: str) -> bool:
    return nodeid.split("::", 1)[0] == path


def _cell_id(nodeid: str) -> str:
    return nodeid.rsplit("[", 1)[1].rstrip("]") if "[" in nodeid else nodeid


@dataclass
class Figures:
    counter: Counter
    seconds: float

    def outcomes(self, paths: list[str] | None = None) -> list[Outcome]:
        return [o for o in self.counter.outcomes.values()
                if paths is None or any(_in(o.nodeid, p) for p in paths)]

    def failures(self, kind: str) -> list[Outcome]:
        return [o for o in self.outcomes() if o.outcome == "failed" and o.kind == kind]

    def examples(self, nodeid: str) -> int | None:
        if nodeid in self.counter.examples:
            return self.counter.examples[nodeid]["valid"]
        return self.counter.calls.get(nodeid)

    def fuzz_rows(self) -> list[tuple[str, str, int | None, str]]:
        rows = []
        for path, what in FUZZ_FILES.items():
            for o in sorted(self.outcomes([path]), key=lambda o: o.nodeid):
                rows.append((what, o.nodeid.split("::", 1)[1], self.examples(o.nodeid),
                             o.outcome))
        return rows

    def properties(self) -> list[tuple[str, str, int | None, str]]:
        """The fuzz rows that generated cases (the files also hold plain tests)."""
        return [row for row in self.fuzz_rows() if row[2] is not None]

    def total_examples(self) -> int:
        return sum(n or 0 for *_, n, _ in self.fuzz_rows())

    def matrix(self, path: str) -> dict[str, Outcome]:
        return {_cell_id(o.nodeid): o for o in self.outcomes([path])
                if "[" in o.nodeid}

    def injected(self, path: str) -> int:
        return sum(int(o.figures.get("faults_injected", 0)) for o in self.matrix(path).values())

    def secrets(self) -> tuple[int, int]:
        outs = self.outcomes(SUITES["secrets"])
        scanned = sum(int(o.figures.get("artefacts_scanned", 0)) for o in outs)
        leaked = sum(int(o.figures.get("secrets_leaked", 0)) for o in outs)
        return scanned, leaked


# -- the document ----------------------------------------------------------------------------
def _mark(outcome: Outcome | None) -> str:
    if outcome is None:
        return "not run"
    return {"passed": "ok", "skipped": "skipped"}.get(outcome.outcome,
                                                     f"**{outcome.kind or 'failed'}**")


def _md(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _git_commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT,
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


def hub_table(figures: Figures) -> list[str]:
    from tests.reliability.test_fault_matrix_hub import CELLS

    cells = figures.matrix(HUB_MATRIX)
    lines = ["| cell | fault | how it is injected | expected | finding | faulty answers "
             "served | result |", "| --- | --- | --- | --- | --- | ---: | --- |"]
    for c in CELLS:
        o = cells.get(c.id)
        served = o.figures.get("faults_injected", "") if o else ""
        lines.append(f"| `{c.id}` | {_md(c.fault)} | {_md(c.how)} | {c.status} | "
                     f"{'`' + c.code + '`' if c.code else '-'} | {served} | {_mark(o)} |")
    return lines


def endpoint_table(figures: Figures) -> list[str]:
    from tests.reliability.test_fault_matrix_endpoint import CELLS, GATE_ORDER

    cells = figures.matrix(ENDPOINT_MATRIX)
    short = ["models", "chat", "resp", "stream", "max_tok", "determ", "unk_model", "concur"]
    assert len(short) == len(GATE_ORDER)
    lines = ["| cell | fault | how it is injected | " + " | ".join(short)
             + " | overall | --strict | result |",
             "| --- | --- | --- | " + " | ".join(":-:" for _ in short) + " | --- | --- | --- |"]
    for c in CELLS:
        runs = [cells.get(f"{c.id}-default"), cells.get(f"{c.id}-strict")]
        marks = {_mark(o) for o in runs}
        result = "ok" if marks == {"ok"} else ", ".join(sorted(marks))
        lines.append(f"| `{c.id}` | {_md(c.fault)} | {_md(c.how)} | "
                     + " | ".join(c.gates.split()) + f" | {c.overall} | {c.strict} | {result} |")
    return lines


def render(figures: Figures, exit_code: int) -> str:
    import hypothesis

    crashes, hangs = figures.failures("crash"), figures.failures("hang")
    violations = figures.failures("violation")
    scanned, leaked = figures.secrets()
    hub_cells, endpoint_cells = figures.matrix(HUB_MATRIX), figures.matrix(ENDPOINT_MATRIX)
    all_outcomes = figures.outcomes()
    count = {k: sum(1 for o in all_outcomes if o.outcome == k)
             for k in ("passed", "failed", "skipped")}
    fuzz = figures.properties()
    plain = len(figures.fuzz_rows()) - len(fuzz)
    lines: list[str] = [
        "# Reliability and security: what is tried, and the figures of the last run",
        "",
        "<!-- generated by bench/reliability_report.py: edit the script, not this file -->",
        "",
        "A certifier is trusted exactly as far as it never says `passed` when it should not. "
        "This page lists what the test suite throws at meshcert to make it say so, and what "
        "came out the last time it ran. Everything here runs in CI as ordinary pytest tests "
        "with a fixed budget and seed; this page is regenerated by "
        "`python bench/reliability_report.py`.",
        "",
        "## Figures of the last run",
        "",
        f"- run: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}, commit "
        f"{_git_commit()}, Python {platform.python_version()}, hypothesis "
        f"{hypothesis.__version__}, pytest {pytest.__version__}, {os.cpu_count()} CPU(s), "
        f"{figures.seconds:.0f} s wall",
        f"- tests: {len(all_outcomes)} run, {count['passed']} passed, {count['failed']} "
        f"failed, {count['skipped']} skipped (pytest exit code {exit_code})",
        f"- **fuzzing**: {len(fuzz)} properties, **{figures.total_examples()} generated "
        f"cases** in all (per property below; plus {plain} plain tests in the same files)",
        f"- **Hub fault matrix**: {len(hub_cells)} cells, **{figures.injected(HUB_MATRIX)} "
        "faulty answers served**",
        f"- **endpoint fault matrix**: {len(endpoint_cells)} runs ({len(endpoint_cells) // 2} "
        f"cells, default and --strict), **{figures.injected(ENDPOINT_MATRIX)} faulty answers "
        "served** (requests or connections the faulty server took)",
        f"- **crashes: {len(crashes)}** (an exception escaped where a report or a result was "
        "due)",
        f"- **hangs: {len(hangs)}** (a hang guard or pytest-timeout fired)",
        f"- property violations: {len(violations)}",
        f"- **secrets leaked: {leaked}** ({scanned} artefacts scanned: reports, HTML, "
        "Markdown, JUnit, stdout, stderr, logs, contained exceptions)",
        "",
    ]
    problems = crashes + hangs + violations
    if problems:
        lines += ["### Failures", ""]
        lines += [f"- {o.kind}: `{o.nodeid}`: {_md(o.message[:300])}" for o in problems]
        lines.append("")
    lines += [
        "### Cases per fuzz property", "",
        "| target | property | cases | result |", "| --- | --- | ---: | --- |",
        *[f"| {what} | `{_md(name)}` | {n if n is not None else '-'} | {res} |"
          for what, name, n, res in fuzz],
        "",
        "Cases: hypothesis test cases actually run (fixed by `max_examples`, "
        "`derandomize=True`, no example database; a property may run fewer when its "
        "space is smaller); for the GGUF fuzzer (seeded `random.Random`), headers read.",
        "",
        "## What is tried", "",
        "### 1. Fuzzing (no exception escapes; a result is always produced)", "",
        "- **Manifest** (`tests/certify/test_fuzz_manifest.py`): structure-aware mutations of "
        "a real glm-dsa manifest (values replaced by any JSON, keys deleted), arbitrary bytes "
        "as the manifest, harmless variations that must stay error-free, and every MUST rule "
        "broken one at a time must fail.",
        "- **GGUF header reader** (`tests/core/gguf/test_gguf_fuzz.py`): truncation at "
        "every offset of a real header, random bit flips, huge lengths and counts, type "
        "confusion and deletions in real fragments, random garbage; every answer is a header "
        "or a catalogued error, and nothing is read past the file.",
        "- **Evidence parsers** (`tests/reliability/test_fuzz_evidence_parsers.py`): every "
        "parser of `meshcert.evidence.parsers` on mutated REAL lines from "
        "`tests/evidence/samples/` "
        "(numbers turned into `1.2.3`, `nan`, `1e999`; lines cut, joined, split, duplicated, "
        "dropped, swapped; ANSI codes, NUL, quotes, other formats' markers pasted in; files "
        "cut short, CRLF, BOM); a corrupted measurement line must still give a row or a "
        "problem; `detect` + `ingest_texts` on any mix; meshcert's own evidence JSON with "
        "wrong types anywhere.",
        "",
        "### 2. Containment (`tests/reliability/test_containment.py`, `tests/certify/"
        "test_engine.py`, `tests/core/test_hashing.py`)", "",
        "- a registered check that raises, through the CLI: `internal_error` naming the "
        "check, overall `incomplete`, exit 3, the JSON, HTML, Markdown and JUnit reports all "
        "written; the other checks still run;",
        "- a bug while loading the package, or in the runtime layer: `incomplete`, exit 3, "
        "a report (never a traceback);",
        "- Ctrl-C (a real SIGINT to the CLI) while artifacts are hashed: a partial report "
        "marked `incomplete` with `check_not_run`, exit 3;",
        "- report files are replaced atomically (temp file + rename): a write failing midway "
        "(disk full, Ctrl-C), a failing rename, or the process SIGKILLed mid-write leave the "
        "previous report intact (or no file), never a partial one;",
        "- resource bounds: manifest > 16 MiB refused unread (`manifest_too_large`), header "
        "reads bounded (GGUF fuzzing checks nothing is read past the file), response bodies "
        "capped at 8 MiB (`oversized-body` cell), every request bounded by `--timeout` even "
        "when the server trickles bytes (slow-loris cells), and all runtime gates by "
        "`--deadline` (a CLI test with `--timeout 60 --deadline 1.5`).",
        "",
        "### 3. Path and file safety (`tests/reliability/test_path_safety.py`, "
        "`tests/certify/checks/test_artifact_checks.py`)", "",
        "Each has a finding and a test, and never passes: traversal (`../`, `layers/../../`), "
        "absolute paths, Windows drive (`C:/`, `C:\\`, `c:x`), UNC (`\\\\server\\share`, "
        "`//server/share`), device namespaces (`\\\\?\\`, `\\\\.\\`), backslashes, NUL and "
        "dot components (`unsafe_artifact_path`, in real manifests, locally and on the Hub, "
        "where such a path never becomes a request); symlinks leaving the package, to "
        "`/dev/zero`, to a device inside it, a symlinked parent directory leaving it, FIFOs, "
        "real character devices (`os.mknod`), directories (`artifact_not_file`, never read); "
        "special files as manifest or README (never opened); hard links "
        "(`artifact_hard_link`, a warning: the bytes are hashed, and a change through the "
        "other name is an `artifact_sha256_mismatch`); files growing or shrinking while "
        "hashed (`artifact_sha256_unreadable`).",
        "",
        "### 4. Fault matrices", "",
        "Tables in the tests, every cell asserted end to end (`certify_package` on a real "
        "package; the real huggingface_hub client against the fake Hub on 127.0.0.1; the "
        "runtime gates against the fake OpenAI server or a raw TCP server). Each cell also "
        "asserts that its fault was really served, so a fault that silently stopped being "
        "injected fails. No cell is `passed` where something required could not be checked; "
        "only faults that go away on retry (or whose lie lies past every byte needed) pass.",
        "",
        "#### Hub (`tests/reliability/test_fault_matrix_hub.py`)", "",
        "Faulty answers served: the answers the fake Hub faulted (injected statuses, drops, "
        "delays, cut or mutated bodies, or the error answers of a repo in a bad state); "
        "`refused` has none: nothing listens. `verify_sha256` is off (the CLI default for "
        "hf:// refs) except in `stream-garbage`.",
        "",
        *hub_table(figures),
        "",
        "#### Endpoint (`tests/reliability/test_fault_matrix_endpoint.py`)", "",
        "Gates: mesh-llm's three (`v1_models`, `v1_chat_completions`, `v1_responses`) decide "
        "the status; the others are warnings unless `--strict`. P passed, F failed, "
        "I incomplete. Per-request timeout 0.5 s.",
        "",
        *endpoint_table(figures),
        "",
        "### 5. Secrets (`tests/reliability/test_secrets.py`)", "",
        "Distinctive values of `HF_TOKEN` and of the API key (`MESH_LLM_API_KEY` and "
        "`--api-key`) are set; the real CLI runs in a subprocess against the fake Hub "
        "(which requires the token) and the fake OpenAI server (which requires the key), with "
        "`--report-out`, `--html`, `--md`, `--junit` and `--json`, on success and on error "
        "paths where both servers echo the credential back (a 401 and a 403 from the Hub "
        "quoting the token, 500s from the endpoint echoing every request header); then "
        "stdout, stderr, every written file and huggingface_hub's home are grepped for each "
        "secret and for its first 8 characters. In process, all loggers at DEBUG and "
        "contained crashes whose text quotes the secrets are grepped too. The servers' logs "
        "prove the secrets were sent, so the test can fail.",
        "",
        "## Found and fixed by this suite", "",
        "- Runtime gates: a server trickling response-header bytes (slow loris) held a "
        "request forever: httpx's timeouts are per read, and neither `--timeout` nor "
        "`--deadline` was checked before the headers were complete. Every socket read and "
        "write now waits at most what is left of the request's budget "
        "(`meshcert/certify/runtime/client.py`, `_BudgetBackend`). Cells `slow-loris-headers`, "
        "`silent`; the `--deadline` CLI test.",
        "- Hub: the manifest (and README) were used as downloaded, unchecked against the "
        "listing: a short Content-Length gave `invalid_manifest_json` (the package blamed), "
        "and a same-size corrupted manifest passed. Downloads are now checked against the "
        "listed size and git blob id (LFS sha256 for LFS files), retried, then "
        "`hub_unreachable` (`meshcert/certify/sources/hub.py`, `listed_content_problem`). Cells "
        "`length-short-manifest`, `tampered-manifest`.",
        "- A bug while loading the package or reading `--source` (outside any check) escaped "
        "as a traceback with no report; it is now `internal_error`, `incomplete`, exit 3, "
        "secrets redacted; a crash of the runtime layer makes the gates `incomplete` "
        "(`meshcert/certify/service.py`).",
        "- Evidence: a perf row whose number read `1.2.3` crashed the test-backend-ops "
        "console parser (`[0-9.]+` then `float()`); malformed `K/N backends passed` / "
        "`N/M tests passed` summaries and perplexity statistics (`Mean PPL(Q): x`, `Cor(...): "
        "1.2.3%`) vanished silently instead of becoming problems; an evidence JSON with a "
        "wrongly typed row or source value (or a non-list `rows`) crashed ingestion. Fixed in "
        "`meshcert/evidence/parsers/tbo_rows.py`, `tbo_console.py`, `perplexity.py`, "
        "`evidence_json.py`.",
        "- Hub: `model_info` and the file reads had no wall-clock bound, so a Hub or storage "
        "host trickling bytes held the certification. The runtime gates' per-request budget "
        "moved to `meshcert/core/http_budget.py` and now bounds every Hub range and manifest read "
        "(timeout plus the size at 256 KiB/s); `model_info` runs under a deadline like the "
        "listings. Cell `slow-loris-storage`.",
        "- A `model-package.json` or `README.md` that links out of the package was read "
        "through the link; it is now `artifact_not_file` (manifest) or unread (README) "
        "(`meshcert/certify/sources/local.py`).",
        "- An unwritable `--report-out` ended in a traceback; it is now one `error:` line and "
        "exit 3 (`meshcert/cli/models_cmd.py`).",
        "",
        "## Known limits", "",
        "- httpcore's own DEBUG trace prints raw response headers, so a server that echoes a "
        "token in a response header shows it there if an application turns that logger on. "
        "meshcert configures no logging (the CLI never prints below WARNING), and the scan "
        "leaves that one trace out.",
        "- `--verify-sha256` streams of whole artifacts (GBs) are bounded per read only, not "
        "by a wall-clock budget: a storage host trickling just under the read timeout slows "
        "them without end. Header, manifest and API reads are bounded.",
        "- A hard link is a warning, not an error: its content is still hashed against the "
        "manifest.",
        "- `unknown_model_rejected` (a warning-level gate) passes when the endpoint refuses "
        "every request with 401: a 4xx with a JSON error object is what the rule asks for "
        "(cell `wrong-api-key`; the mesh gates fail there).",
        "",
        "## How to reproduce", "",
        "```",
        "python bench/reliability_report.py            # runs the suites, rewrites this page",
        "python bench/reliability_report.py --check    # CI: exit 1 on any crash, hang, leak",
        "python -m pytest -m reliability               # tests/reliability only",
        "```",
        "",
        "Budgets: hypothesis `max_examples` per property (250 manifest, 200 evidence), "
        "`derandomize=True`, `database=None`; GGUF: `random.Random(seed)` with fixed seeds; "
        "the script sets `PYTHONHASHSEED=0`. Suites run: "
        + "; ".join(f"{k}: {', '.join(f'`{f}`' for f in v)}" for k, v in SUITES.items())
        + ".",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="run only; write nothing")
    parser.add_argument("--out", type=Path, default=DOC, help="where to write the page")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments")
    args = parser.parse_args()
    if os.environ.get("PYTHONHASHSEED") != "0":
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    counter, seconds, code = run_suites(args.pytest_args)
    figures = Figures(counter, seconds)
    found = (figures.failures("crash") or figures.failures("hang")
             or figures.failures("violation") or figures.secrets()[1])
    if not args.check:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_name(f".{args.out.name}.tmp")
        tmp.write_text(render(figures, code), encoding="utf-8")
        os.replace(tmp, args.out)
        print(f"wrote {args.out}")
    print(f"examples {figures.total_examples()}, hub faults {figures.injected(HUB_MATRIX)}, "
          f"endpoint faults {figures.injected(ENDPOINT_MATRIX)}, crashes "
          f"{len(figures.failures('crash'))}, hangs {len(figures.failures('hang'))}, "
          f"violations {len(figures.failures('violation'))}, secrets leaked "
          f"{figures.secrets()[1]}")
    return 1 if found or code not in (0, 5) else 0


if __name__ == "__main__":
    sys.exit(main())
