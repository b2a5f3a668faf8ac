"""A second opinion on GGUF files from llama.cpp's own parser (the one every mesh node runs).

llama-cpp-python (the `live` extra) ships llama.cpp's ggml libraries; `libggml-base` exports
`gguf_init_from_file` (found by `meshcert.certify.workers.llama_library`). It is called with
``no_alloc = true`` and no ggml context, so llama.cpp parses and validates the header and the
tensor-info layout (docs/gguf-rules.md) and allocates no tensor, loads no model and reads no
tensor data.

A hostile file may make a C parser abort (GGML_ASSERT) or crash, so the parser never runs in
this process: `LlamaCppGGUF.check` starts one worker (`llama_gguf_worker.py` run as a
script by ``python -S``: ctypes and json only, so it starts in milliseconds and needs no install)
that reads file paths as JSON on stdin and writes one JSON verdict per line. A worker that
dies on a file yields a rejection for that file ("llama.cpp crashed") and a new worker takes
the rest. llama.cpp's log text (GGML_LOG_ERROR lines) is captured through `ggml_log_set`.

The verdicts are data on the view (`view.source_facts[LLAMA_CPP_FACTS_KEY]`); the pure check
`meshcert/certify/checks/llama_cpp_gguf.py` turns them into findings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from meshcert.certify.processes.death import WorkerDeath, stderr_tail
from meshcert.certify.workers.llama_gguf_worker import LOG_CAP, READY
from meshcert.certify.workers.llama_library import NOT_INSTALLED, find_library

if TYPE_CHECKING:
    from meshcert.certify.processes.spare import SpareProcess
    from meshcert.certify.view import PackageView

LLAMA_CPP_FACTS_KEY = "llama_cpp_gguf"
WORKER_SCRIPT = Path(__file__).with_name("llama_gguf_worker.py")
PARALLEL_FROM = 8  # files: from here two workers may share them (see `split_pays`)
# llama.cpp's parse is paced by the header bytes: one worker read the real models' split
# packages at 200-202 MB/s (SmolLM2 v2, 32 fragments, 56.7 MB of header: 282 ms; Gemma 3 v2,
# 130 MB: 644 ms). SHA-256 runs at ~1.6 GB/s a core from the page cache here. Both rounded
# down, so a split is chosen when in doubt.
PARSE_BYTES_PER_S = 200e6
HASH_BYTES_PER_S = 1.5e9


@dataclass(frozen=True)
class LlamaCppVerdict:
    path: str  # as given (the package-relative artifact path for certify)
    accepted: bool
    log: str = ""  # llama.cpp's own error text, when it printed any
    n_tensors: int | None = None
    n_kv: int | None = None
    tensor_end: int | None = None  # asked with `bounds`: the largest tensor data end
    death: WorkerDeath | None = None  # the parser's worker died on this file


@dataclass
class LlamaCppFacts:
    """What llama.cpp said about each file, or why it could not be asked."""

    verdicts: dict[str, LlamaCppVerdict] = field(default_factory=dict)
    unavailable: str | None = None  # llama-cpp-python missing, or its library unusable
    library: str | None = None  # the libggml-base that parsed the files


class GGUFSecondOpinion(Protocol):
    """Anything that can tell whether llama.cpp accepts each of some local GGUF files."""

    def check(self, files: dict[str, Path]) -> LlamaCppFacts: ...


@dataclass
class LlamaCppGGUF:
    """Ask llama.cpp (in a worker process) about files; `timeout_s` bounds one worker run."""

    library: Path | None = None
    timeout_s: float = 120.0
    split: bool = True  # two workers from PARALLEL_FROM files (False: one, in order)
    bounds: bool = False  # also report where each file's last tensor ends (llama_reopen)

    def check(self, files: dict[str, Path]) -> LlamaCppFacts:
        library = self.library or find_library()
        if library is None:
            return LlamaCppFacts(unavailable=f"{NOT_INSTALLED}; llama.cpp's parser was not "
                                 "asked")
        items = list(files.items())
        if not self.split or len(items) < PARALLEL_FROM or (os.cpu_count() or 1) < 2:
            return self._check_in_order(library, items)
        # Two workers, each on half the files: parsing a header that repeats a big vocabulary
        # costs llama.cpp ~12 ms a file (SmolLM2 split in 30 fragments: ~0.35 s in one worker)
        import threading

        halves = [items[: len(items) // 2], items[len(items) // 2:]]
        results: list[LlamaCppFacts] = [LlamaCppFacts(), LlamaCppFacts()]

        def run(i: int) -> None:
            results[i] = self._check_in_order(library, halves[i])

        other = threading.Thread(target=run, args=(1,), name="llama-cpp-gguf", daemon=True)
        other.start()
        run(0)
        other.join()
        facts = LlamaCppFacts(library=str(library),
                              unavailable=results[0].unavailable or results[1].unavailable)
        for name, _ in items:  # verdicts in the files' order
            for part in results:
                if name in part.verdicts:
                    facts.verdicts[name] = part.verdicts[name]
        return facts

    def _check_in_order(self, library: Path, items: list[tuple[str, Path]]) -> LlamaCppFacts:
        """One worker after another over `items` (a new one after a worker dies on a file)."""
        facts = LlamaCppFacts(library=str(library))
        pending = items
        while pending:
            done = self._run_worker(library, pending, facts)
            if done < 0:  # the worker could not even start
                return facts
            pending = pending[done:]
        return facts

    def _run_worker(self, library: Path, pending: list[tuple[str, Path]],
                    facts: LlamaCppFacts) -> int:
        """Run one worker over `pending`; returns how many files it settled (-1: not run)."""
        request = json.dumps({"library": str(library), "bounds": self.bounds,
                              "files": [os.fspath(p) for _, p in pending]}).encode()
        try:
            spare = spare_worker().take() if library == find_library() else None
            proc = spare or subprocess.Popen(worker_argv(library), stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                out, err = proc.communicate(request, timeout=self.timeout_s)
                returncode: int | None = proc.returncode
                stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
            except subprocess.TimeoutExpired:
                proc.kill()
                out, _ = proc.communicate()
                stdout = out.decode(errors="replace")
                returncode, stderr = None, ""
        except OSError as exc:
            facts.unavailable = f"cannot start the llama.cpp worker: {exc.strerror or exc}"
            return -1
        lines = stdout.splitlines()
        if not lines or parse_json_line(lines[0]) != READY:
            death = WorkerDeath("the llama.cpp worker", None, returncode, stderr_tail(stderr),
                                timeout_s=self.timeout_s)
            facts.unavailable = f"llama.cpp's library {library} could not be used: " \
                f"{death.describe()}"
            return -1
        settled = 0
        for line in lines[1:]:
            item = parse_json_line(line)
            if item is None or settled >= len(pending):
                continue
            name = pending[settled][0]
            facts.verdicts[name] = LlamaCppVerdict(
                path=name, accepted=bool(item.get("accepted")),
                log=str(item.get("log", ""))[:LOG_CAP],
                n_tensors=_int_or_none(item.get("n_tensors")),
                n_kv=_int_or_none(item.get("n_kv")),
                tensor_end=_int_or_none(item.get("tensor_end")))
            settled += 1
        if settled < len(pending) and returncode != 0:
            name, path = pending[settled]
            death = WorkerDeath("llama.cpp's GGUF parser", os.fspath(path), returncode,
                                stderr_tail(stderr), timeout_s=self.timeout_s)
            facts.verdicts[name] = LlamaCppVerdict(
                path=name, accepted=False, log=f"llama.cpp's GGUF parser {death.how} on this "
                f"file" + (f" (stderr: {death.stderr[-300:]})" if death.stderr else ""),
                death=death)
            settled += 1
        elif settled < len(pending):  # a clean exit that skipped files: never pass them
            for name, _ in pending[settled:]:
                facts.verdicts[name] = LlamaCppVerdict(
                    path=name, accepted=False, log="the llama.cpp worker gave no verdict")
            settled = len(pending)
        return settled


def parse_json_line(line: str) -> dict[str, Any] | None:
    try:
        item = json.loads(line)
    except ValueError:
        return None
    return item if isinstance(item, dict) else None


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def asks_before_headers(paths: list[str]) -> bool:
    """Whether llama.cpp can be asked about `paths` before their headers are read: below
    PARALLEL_FROM files one worker parses them whatever the headers hold (the split question,
    which needs the header sizes, does not arise), so its parse overlaps the header reading
    instead of following it."""
    return len(paths) < PARALLEL_FROM


def attach_verdicts(view: PackageView, opinion: GGUFSecondOpinion | None = None,
                    paths: list[str] | None = None) -> None:
    """Ask llama.cpp about every GGUF of a local package whose header was read (or, before
    the headers are read, about `paths`: the ones the loader is about to read)."""
    if view.local_dir is None:
        if view.headers:  # remote (hf://) fragments are read by byte ranges, never whole
            view.source_facts[LLAMA_CPP_FACTS_KEY] = LlamaCppFacts(
                unavailable="the package is remote: its fragments are read by header byte "
                "ranges, and llama.cpp's parser needs the file")
        return
    files: dict[str, Path] = {}
    for path in (list(view.headers) if paths is None else paths):
        fact = view.files.get(path)
        if fact is None or fact.kind == "file":
            files[path] = Path(view.local_dir, *path.split("/"))
    if files:
        opinion = opinion or LlamaCppGGUF(split=paths is None and split_pays(view, files))
        view.source_facts[LLAMA_CPP_FACTS_KEY] = opinion.check(files)


def split_pays(view: PackageView, files: dict[str, Path]) -> bool:
    """Whether a second worker would shorten the certification: only when one worker's parse
    would outlast the hashing that runs meanwhile. Otherwise the second interpreter and library
    load (~35 ms of CPU) only take a core from the hashing (bench/whole_process.py `big`)."""
    from meshcert.core.gguf.model import GGUFHeader  # loaded by then; not at prestart, before typer

    header_bytes = sum(header.header_end for path, header in view.headers.items()
                       if path in files and isinstance(header, GGUFHeader))
    hashed_bytes = sum(fact.size or 0 for fact in view.files.values()
                       if fact.kind == "file") if view.options.verify_sha256 else 0
    cores = os.cpu_count() or 1
    return header_bytes / PARSE_BYTES_PER_S > hashed_bytes / (HASH_BYTES_PER_S * cores)


def worker_argv(library: Path) -> list[str]:
    """No site: the worker needs only ctypes and json; it loads `library` before it reads
    its request, so a prestarted one is warm."""
    return [sys.executable, "-S", str(WORKER_SCRIPT), os.fspath(library)]


def _spare_argv() -> list[str] | None:
    library = find_library()
    return worker_argv(library) if library is not None else None


_SPARE: list[SpareProcess] = []


def spare_worker() -> SpareProcess:
    """The prestarted worker (`meshcert.certify.processes.spare`), created on first use."""
    if not _SPARE:
        from meshcert.certify.processes.spare import SpareProcess

        _SPARE.append(SpareProcess(_spare_argv))
    return _SPARE[0]
