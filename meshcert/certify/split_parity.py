"""Split parity: does the model reassembled from the package alone compute what the source does?

The whole model is composed from the package (every layer, through the same composition the
stages use: v1 parts' own headers, v2 the carrier's locators) into a temporary GGUF. The source
and the reassembled model are each loaded with llama.cpp (llama-cpp-python, CPU, fixed thread
count, one at a time, each in its own worker process: `meshcert.certify.workers.llama_decode`), and
for each prompt the greedy continuation of `tokens` tokens is run; the token ids and the logits at
every generated position must be identical (same llama.cpp, same threads, same bytes: bit-identical,
so exact equality is the honest bar). A worker that dies (a signal, an abort, its wall clock) makes
the result `crashed`: the gate is incomplete, and the report says how it died. The temporary
directory is removed in a `finally`, also on Ctrl-C.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from meshcert.certify.build_results import Divergence, ParityResult, ParityStatus
from meshcert.certify.manifest_model import layer_count
from meshcert.certify.materialize import ComposeError, compose, write_gguf
from meshcert.certify.stages import StageRange
from meshcert.certify.view import PackageView
from meshcert.certify.workers import llama_library
from meshcert.certify.workers.llama_decode import (
    DEFAULT_TIMEOUT_S,
    LlamaCppError,
    Run,
    greedy_runs,
)
from meshcert.certify.workers.llama_reopen import LlamaCppCrashed, LlamaParserUnavailable
from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.reader import read_header_file
from meshcert.core.progress import NullProgress, ProgressObserver, report_phase

DEFAULT_PROMPTS = (
    "The capital of France is",
    "def fibonacci(n):",
    "Once upon a time, in a small village,",
)
DEFAULT_TOKENS = 16
DEFAULT_MAX_BYTES = 8 << 30
MEMORY_FACTOR = 1.25  # a loaded model's resident size over its file size, with headroom


@dataclass
class ParityRequest:
    source: str
    prompts: list[str] = field(default_factory=lambda: list(DEFAULT_PROMPTS))
    tokens: int = DEFAULT_TOKENS
    max_bytes: int = DEFAULT_MAX_BYTES
    temp_dir: str | None = None  # where the reassembled model is written (default: system temp)
    timeout_s: float = DEFAULT_TIMEOUT_S  # wall clock of each llama.cpp worker (one per model)


def available_memory() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def preflight(model_bytes: int, source_bytes: int, request: ParityRequest, temp_dir: str
              ) -> str | None:
    """Why parity must not start (nothing written yet), or None."""
    if model_bytes > request.max_bytes:
        return (f"the reassembled model needs {model_bytes:,} bytes, more than "
                f"--parity-max-bytes {request.max_bytes:,}")
    free = shutil.disk_usage(temp_dir).free
    if free < model_bytes + (64 << 20):
        return (f"{temp_dir} has {free:,} bytes free; the reassembled model needs "
                f"{model_bytes:,} bytes (+64 MiB)")
    memory = available_memory()
    need = int(max(model_bytes, source_bytes) * MEMORY_FACTOR)
    if memory is not None and memory < need:
        return f"{memory:,} bytes of memory available; loading the model needs about {need:,}"
    return None


_SOURCE_RUNS: dict[tuple[Any, ...], list[Run]] = {}


def prompt_counter(progress: ProgressObserver, label: str, prompts: int, tokens: int
                   ) -> Callable[[int], None]:
    """`progress.advance` per generated token, plus a phase line as each prompt's `tokens`
    tokens are done ("parity: source model, prompt 2/3 done")."""
    generated = [0]

    def advance(amount: int) -> None:
        progress.advance(amount)
        before = generated[0] // tokens
        generated[0] += amount
        for done in range(before + 1, min(generated[0] // tokens, prompts) + 1):
            report_phase(progress, f"parity: {label} model, prompt {done}/{prompts} done")

    return advance


def source_runs(path: str, request: ParityRequest, progress: ProgressObserver) -> list[Run]:
    """The source's greedy runs, computed once per process for the same file (device, inode,
    size, mtime in ns) and prompts: certifying several packages of one source (or the test
    suite) loads the source once."""
    st = os.stat(path)
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, tuple(request.prompts),
           request.tokens)
    if key in _SOURCE_RUNS:
        report_phase(progress, "parity: source model runs reused (computed earlier in this "
                     "process)")
        return _SOURCE_RUNS[key]
    _SOURCE_RUNS.clear()  # keep one source's runs at most (logits rows are per vocab)
    _SOURCE_RUNS[key] = _greedy(path, request, progress, "source")
    return _SOURCE_RUNS[key]


def not_the_source(view: PackageView, path: str) -> str | None:
    """Why the --parity file is not the package's source (from its header and size, no model
    loaded), or None. Another model diverges at its first token; saying so is the finding."""
    header = read_header_file(path)
    if not isinstance(header, GGUFHeader):
        return None  # llama.cpp gives its own reason when it cannot load the file
    reasons: list[str] = []
    ours = _package_architecture(view)
    if header.architecture and ours and header.architecture != ours:
        reasons.append(f"it is a {header.architecture} model, the package a {ours} model")
    blocks = header.kv.get(f"{header.architecture}.block_count")
    layers = layer_count(view.manifest) if view.manifest is not None else None
    if isinstance(blocks, int) and isinstance(layers, int) and blocks != layers:
        reasons.append(f"it has {blocks} blocks, the package {layers} layers")
    declared = _declared_size(view.manifest, path)
    if declared is not None and header.file_size is not None and declared != header.file_size:
        reasons.append(f"it is {header.file_size:,} bytes, source_model.files says "
                       f"{declared:,}")
    if not reasons:
        return None
    return (f"the --parity file {path} is not the package's source ({'; '.join(reasons)}); "
            "no model was loaded")


def _package_architecture(view: PackageView) -> str | None:
    carrier = view.carrier_entry()
    first = view.headers.get(carrier.path) if carrier is not None and isinstance(
        carrier.path, str) else None
    headers = [first, *view.headers.values()]
    return next((h.architecture for h in headers
                 if isinstance(h, GGUFHeader) and h.architecture), None)


def _declared_size(manifest: dict[str, Any] | None, path: str) -> int | None:
    """The byte size source_model.files declares for this file (by base name, or the only
    file when the manifest lists one)."""
    source = manifest.get("source_model") if manifest else None
    files = source.get("files") if isinstance(source, dict) else None
    if not isinstance(files, list):
        return None
    entries = [f for f in files if isinstance(f, dict)]
    named = [f for f in entries if isinstance(f.get("path"), str)
             and os.path.basename(f["path"]) == os.path.basename(path)]
    chosen = named[0] if named else (entries[0] if len(entries) == 1 else None)
    if chosen is None:
        return None
    size = chosen.get("byte_size", chosen.get("size_bytes"))
    return size if isinstance(size, int) and not isinstance(size, bool) else None


def _greedy(path: str, request: ParityRequest, progress: ProgressObserver, label: str
            ) -> list[Run]:
    report_phase(progress, f"parity: loading the {label} model in llama.cpp, then "
                 f"{len(request.prompts)} prompt(s) x {request.tokens} greedy tokens")
    return greedy_runs(path, request.prompts, request.tokens,
                       label="source" if label == "source" else "reassembled package",
                       timeout_s=request.timeout_s,
                       advance=prompt_counter(progress, label, len(request.prompts),
                                              request.tokens))


def compare(prompts: list[str], source: list[Run], package: list[Run]) -> Divergence | None:
    """The first prompt/position where tokens or logits differ (None: identical)."""
    for i, (prompt, a, b) in enumerate(zip(prompts, source, package, strict=True)):
        if a.prompt_tokens != b.prompt_tokens:
            return Divergence(i, prompt, -1, None, None, 0.0)
        worst = 0.0
        for pos, (ta, tb, la, lb) in enumerate(zip(a.tokens, b.tokens, a.logits, b.logits,
                                                  strict=True)):
            diff = float(np.max(np.abs(la - lb))) if la.shape == lb.shape else float("inf")
            if np.isnan(diff):
                diff = float("inf")
            worst = max(worst, diff)
            if ta != tb or not np.array_equal(la, lb):
                return Divergence(i, prompt, pos, ta, tb, worst)
    return None


def run_parity(view: PackageView, request: ParityRequest,
               progress: ProgressObserver | None = None) -> ParityResult:
    """Reassemble, run both models, compare; the result also lands on `view.parity`."""
    progress = progress or NullProgress()
    result = _run(view, request, progress)
    view.parity = result
    return result


def _run(view: PackageView, request: ParityRequest, progress: ProgressObserver
         ) -> ParityResult:
    if not os.path.isfile(request.source):
        return ParityResult("not_run", f"source GGUF {request.source} is not a file")
    wrong = not_the_source(view, request.source)
    if wrong is not None:  # one finding, before minutes of loading two models to diverge
        return ParityResult("failed", wrong)
    if not llama_library.installed():
        return ParityResult("not_run", llama_library.NOT_INSTALLED)
    total = layer_count(view.manifest) if view.manifest is not None else None
    if not total or view.local_dir is None:
        return ParityResult("not_run", "the package has no layer_count or is not on local disk")
    try:
        comp = compose(view, StageRange("parity-full", 0, total), total)
    except ComposeError as exc:
        return ParityResult("failed", f"the whole model cannot be composed: {exc}")
    temp_root = request.temp_dir or tempfile.gettempdir()
    refusal = preflight(comp.tensor_bytes, os.path.getsize(request.source), request, temp_root)
    if refusal is not None:
        return ParityResult("not_run", f"refused before writing anything: {refusal}")
    timings: dict[str, float] = {}
    work = tempfile.mkdtemp(prefix="meshcert-parity-", dir=temp_root)
    try:
        started = time.perf_counter()
        assembled = Path(work) / "reassembled.gguf"
        report_phase(progress, f"parity: reassembling the model from the package "
                     f"({len(comp.tensors)} tensors, {comp.tensor_bytes:,} bytes)")
        progress.begin("parity: reassembling the model", comp.tensor_bytes)
        try:
            size = write_gguf(assembled, comp, progress.advance, timeout_s=request.timeout_s)
        except LlamaCppCrashed as exc:
            return ParityResult("crashed", f"re-opening the reassembled model: {exc}",
                                death=exc.death)
        except LlamaParserUnavailable as exc:
            return ParityResult("not_run", str(exc))
        except (ComposeError, ValueError) as exc:
            return ParityResult("failed", f"the reassembled model does not build: {exc}")
        finally:
            progress.end()
        timings["assemble_s"] = round(time.perf_counter() - started, 3)
        runs = {}
        for label, path in (("source", request.source), ("package", str(assembled))):
            started = time.perf_counter()
            progress.begin(f"parity: {label} model, greedy",
                           len(request.prompts) * request.tokens)
            try:
                runs[label] = (source_runs(path, request, progress) if label == "source"
                               else _greedy(path, request, progress, label))
            except LlamaCppCrashed as exc:
                return ParityResult("crashed", f"llama.cpp died running the {label} model: "
                                    f"{exc}", death=exc.death)
            except LlamaParserUnavailable as exc:
                return ParityResult("not_run", str(exc))
            except LlamaCppError as exc:
                status: ParityStatus = "not_run" if label == "source" else "failed"
                return ParityResult(status, f"llama.cpp could not run the {label} model: "
                                    f"{str(exc)[:300]}")
            finally:
                progress.end()
            timings[f"{label}_s"] = round(time.perf_counter() - started, 3)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    divergence = compare(request.prompts, runs["source"], runs["package"])
    if divergence is None:
        status, detail = "passed", (f"{len(request.prompts)} prompt(s) x {request.tokens} "
                                    "greedy tokens: token ids and logits identical")
    else:
        status, detail = "failed", describe(divergence)
    return ParityResult(status, detail, prompts=len(request.prompts), tokens=request.tokens,
                        divergence=divergence, assembled_bytes=size, timings_s=timings)


def describe(d: Divergence) -> str:
    where = (f"prompt {d.prompt_index} ({d.prompt[:40]!r})"
             + (" tokenizes differently" if d.position < 0 else f", generated position "
                f"{d.position}: source token {d.source_token}, package token "
                f"{d.package_token}"))
    return f"{where}; largest logit difference {d.max_logit_diff:.6g}"
