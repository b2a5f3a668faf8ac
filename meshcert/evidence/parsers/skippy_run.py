"""skippy-bench `run --execute-remote`: `<work_dir>/<run_id>/driver-result.json` (spec section 1).

The driver result names no model: the setup key comes from its siblings, `deployment-plan.json`
(model_identity, topology_id, hosts, stages[{host, layer_start, layer_end}]) and
`configs/stage-N.json` (cache_type_k/v, ctx_size, n_gpu_layers, load_mode), read from the
driver result's folder when they are there (`setup.missing` notes when not). Rows: every numeric
field of `summary` (op `skippy-bench run`) and of each `results[i]` (op `skippy-bench run
prompt`, `sample` = i + 1). Not lab evidence: stage layer counts differing by more than one.
"""

from __future__ import annotations

import json
import os
from typing import Any

from meshcert.evidence.parsers.base import SKIPPY_RUN, ParsedFile
from meshcert.evidence.parsers.mesh_json import (
    JsonLines,
    MetricRows,
    Setup,
    items,
    load,
    loads_strict,
    model_identity,
    pointer,
    refuse,
    refuse_debug,
    setup_params_cached,
)

_RUN_KEYS = ("max_new_tokens", "prefill_chunk_size", "prompt_count")
_STAGE_KEYS = ("cache_type_k", "cache_type_v", "ctx_size", "n_gpu_layers", "load_mode")


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _decoded(data: bytes | None) -> Any | None:
    if data is None:
        return None
    try:
        return loads_strict(data)
    except ValueError:
        return None


_SETUPS: dict[tuple[bytes | None, tuple[bytes | None, ...]],
              tuple[Setup, list[int], list[str]]] = {}
_SETUPS_MAX = 256


def sibling_setup(source: str) -> tuple[Setup, list[int], list[str]]:
    """(setup keys, stage layer counts, what was missing) from the run folder's siblings.
    The siblings are read every time; a plan and configs with bytes already seen (runs of one
    deployment repeat them) are not decoded again."""
    folder = os.path.dirname(source)
    prefix = folder + os.sep if folder else ""
    try:
        names = os.listdir(prefix + "configs")
    except OSError:
        names = []
    configs = [prefix + "configs" + os.sep + n for n in sorted(names)
               if n.startswith("stage-") and n.endswith(".json")]
    key = (_read(prefix + "deployment-plan.json"), tuple(_read(p) for p in configs))
    known = _SETUPS.get(key)
    if known is None:
        if len(_SETUPS) >= _SETUPS_MAX:
            _SETUPS.clear()
        known = _SETUPS[key] = _setup_of(_decoded(key[0]), [_decoded(c) for c in key[1]],
                                         bool(configs))
    setup, layers, missing = known
    return dict(setup), list(layers), list(missing)


def _setup_of(plan: Any, stage_docs: list[Any], has_configs: bool
              ) -> tuple[Setup, list[int], list[str]]:
    setup: Setup = {}
    missing: list[str] = []
    layers: list[int] = []
    if isinstance(plan, dict):
        setup.update(model_identity(plan.get("model_identity")))
        setup["topology_id"] = plan.get("topology_id")
        stages = items(plan, "stages")
        ranges = []
        for s in stages:
            if isinstance(s, dict) and isinstance(s.get("layer_start"), int) \
                    and isinstance(s.get("layer_end"), int):
                layers.append(s["layer_end"] - s["layer_start"])
                ranges.append(f"{s.get('host')}:{s['layer_start']}-{s['layer_end']}")
        setup["stage_count"] = len(stages)
        setup["stages"] = tuple(ranges)
    else:
        missing.append("deployment-plan.json")
    docs = [c for c in stage_docs if isinstance(c, dict)]
    for key in _STAGE_KEYS:
        values = sorted({str(c.get(key)) for c in docs if c.get(key) is not None})
        if values:
            setup[key] = values[0] if len(values) == 1 else tuple(values)
    if not has_configs:
        missing.append("configs/stage-N.json")
    return setup, layers, missing


def parse(text: str, source: str) -> ParsedFile:
    out = ParsedFile(SKIPPY_RUN)
    doc = load(text, source, out, "skippy-bench driver result")
    if not isinstance(doc, dict) or refuse_debug(text, source, out):
        return out
    setup, layers, missing = sibling_setup(source)
    if layers and max(layers) - min(layers) > 1:
        refuse(out, source, None, "stages", "stage layer counts "
               f"{'/'.join(map(str, layers))} differ by more than one (not lab evidence)")
        return out
    for key in _RUN_KEYS:
        setup[key] = doc.get(key)
    corpus = doc.get("corpus")
    if isinstance(corpus, str | int):
        setup["corpus"] = corpus
    if missing:
        out.note("setup.missing", len(missing))
    shared = setup_params_cached(setup)
    lines = JsonLines(text)
    summary = MetricRows(out, source, SKIPPY_RUN, "skippy-bench run", shared, lines=lines)
    summary.add_all(doc.get("summary"), pointer("summary"))
    summary.add_all({k: doc.get(k) for k in _RUN_KEYS}, "")
    prompts = MetricRows(out, source, SKIPPY_RUN, "skippy-bench run prompt", shared,
                         lines=lines)
    results = items(doc, "results")
    for i, result in enumerate(results):
        if isinstance(result, dict):
            prompts.add_all(result, pointer("results", i), sample=i + 1,
                            skip=("token_ids", "predicted_tokens", "prompt_id", "category"))
    if not out.rows and not out.problems:
        out.problem(source, 1, json.dumps(doc)[:120], "driver result without a summary or "
                    "results")
    return out
