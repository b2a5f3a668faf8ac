"""llama-bench's default output, the markdown table (`-o md`), as people paste it.

    | model                  |       size |     params | backend    | ngl |  test |          t/s |
    | ---------------------- | ---------: | ---------: | ---------- | --: | ----: | -----------: |
    | llama 7B Q4_0          |   3.56 GiB |     6.74 B | CUDA       |  99 | pp512 | 4125.44 ± 2.1 |
    | llama 7B Q4_0          |   3.56 GiB |     6.74 B | CUDA       |  99 | tg128 |  137.09 ± 0.1 |

    build: 8e672efe (2401)

The table may sit among stderr lines, code fences and prose (those lines are ignored, even
between rows: stderr interleaves with stdout; a row belongs to the last header above it). Every
row becomes one `bench` row: metric `avg_ts`, value_err the `± stddev`, op the test (`pp512`,
`tg128`, `pp512+tg128`, `pp512@d4096`; 2023 builds printed `pp 512`), backend from the table's
own `backend` column, params the model type and the run-configuration columns (display names
mapped back to llama-bench's field names: `ngl` -> `n_gpu_layers`, `threads` -> `n_threads`,
...). Never silently wrong: a row with the wrong number of cells, a t/s cell that is not
`<avg> ± <stddev>` (cut, or rounded away) or a test cell llama-bench never prints is a problem
with its line, not a value.
"""

from __future__ import annotations

import re
from typing import Any

from meshcert.evidence.parsers.base import LLAMA_BENCH, ParsedFile, Row, strip_ansi, to_float
from meshcert.evidence.parsers.params import format_params, parse_value

# with outer pipes as llama-bench prints it, or without them as copied from a rendered page
HEADER = re.compile(r"^[ \t>]*\|?(?:[^|\n]*\|)+[ \t]*t/s[ \t]*\|?[ \t]*$", re.MULTILINE)
_SEPARATOR = re.compile(r"^\|?(?:\s*:?-+:?\s*\|)+(?:\s*:?-+:?\s*)?\|?$")
_TS = re.compile(r"(\d+(?:\.\d+)?)\s*(?:±|Â±|\+/-)\s*(\d+(?:\.\d+)?)")
_TEST = re.compile(r"(pp ?\d+|tg ?\d+|pp ?\d+ ?\+ ?tg ?\d+|pg ?\d+,\d+)(?: @ d(\d+))?")
_BUILD = re.compile(r"build: ([0-9a-fA-F]{6,40}) \((\d+)\)")
FIELD_NAMES = {"ngl": "n_gpu_layers", "threads": "n_threads", "sm": "split_mode",
               "nkvo": "no_kv_offload", "fa": "flash_attn", "lm": "load_mode",
               "embd": "embeddings", "nopo": "no_op_offload", "noh": "no_host",
               "rpk": "repack", "dev": "devices", "ts": "tensor_split",
               "ot": "tensor_buft_overrides", "n_gpu_layers": "n_gpu_layers"}
_FACT_COLUMNS = {"size": "model_size", "params": "model_n_params"}


def has_table(text: str) -> bool:
    """A llama-bench header line anywhere in the text (only lines holding `t/s` are tried:
    a regex over every line of a big log would cost ~80 ms per MB)."""
    pos = text.find("t/s")
    while pos != -1:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        end = len(text) if end == -1 else end
        if HEADER.fullmatch(text, start, end) is not None:
            return True
        pos = text.find("t/s", end)
    return False


def _table_line(line: str, header: list[str] | None) -> bool:
    """A `| a | b |` line, or `a | b | c` (outer pipes lost) with as many cells as a header
    (or, before any header, a header itself)."""
    if line.startswith("|"):
        return True
    if line.count("|") < 2:
        return False
    cells = _cells(line)
    return ("t/s" in cells and "test" in cells) if header is None else \
        len(cells) == len(header) or len(cells) > 2


def _cells(line: str) -> list[str]:
    body = line.strip().lstrip(">").strip()
    return [c.strip() for c in body.strip("|").split("|")]


def parse(text: str, source: str, out: ParsedFile | None = None) -> ParsedFile:
    out = out or ParsedFile(LLAMA_BENCH)
    header: list[str] | None = None
    table = 0
    pending_build: list[int] = []           # indexes in out.rows still waiting for `build:`
    for lineno, raw in enumerate(text.split("\n"), 1):
        line = strip_ansi(raw).strip()
        quoted = line.lstrip(">").strip()
        if not _table_line(quoted, header):      # stderr, fences, prose: the table goes on
            m = _BUILD.search(line)
            if m is not None:
                for i in pending_build:
                    out.rows[i] = out.rows[i]._replace(build_commit=m.group(1))
                out.build_commit = out.build_commit or m.group(1)
                pending_build = []
            elif "Final estimate: PPL" in line or "KLD:" in line:
                out.problem(source, lineno, line, "a llama-perplexity result inside a "
                            "llama-bench file is not read here: ingest it as a file of its own")
            elif line:
                out.ignored += 1
            continue
        cells = _cells(quoted)
        if "t/s" in cells and "test" in cells:
            header = cells
            table += 1
            continue
        if header is None:
            out.problem(source, lineno, line, "table row outside a llama-bench table (no "
                        "`| model | ... | test | t/s |` header above it)")
            continue
        if _SEPARATOR.match(quoted.replace(" ", "")):
            continue
        row = _row(header, cells, lineno, line, source, out, table)
        if row is not None:
            pending_build.append(len(out.rows))
            out.rows.append(row)
    if table and not out.rows and not out.problems:
        out.problem(source, None, "", "llama-bench table without result rows")
    return out


def _row(header: list[str], cells: list[str], lineno: int, line: str, source: str,
         out: ParsedFile, table: int) -> Row | None:
    if len(cells) != len(header):
        out.problem(source, lineno, line, f"{len(header)} columns in the table header but "
                    f"{len(cells)} here (a cut or wrapped row?)")
        return None
    values = dict(zip(header, cells, strict=True))
    ts = _TS.fullmatch(values["t/s"])
    if ts is None:
        out.problem(source, lineno, line, f"t/s cell {values['t/s']!r} is not `<avg> ± "
                    "<stddev>` (cut or rounded?)")
        return None
    test = _TEST.fullmatch(values["test"])
    if test is None:
        out.problem(source, lineno, line, f"test cell {values['test']!r} is not a llama-bench "
                    "test (pp512, tg128, pp512+tg128, pp512 @ d4096)")
        return None
    op = test.group(1).replace(" ", "") + (f"@d{test.group(2)}" if test.group(2) else "")
    params: dict[str, Any] = {}
    extra: dict[str, Any] = {"output": "md", "table": table}
    backend: str | None = None
    for name, value in values.items():
        if name in ("t/s", "test"):
            continue
        if name == "backend":
            backend = value or None
        elif name == "model":
            params["model_type"] = value
        elif name in _FACT_COLUMNS:
            extra[_FACT_COLUMNS[name]] = value
        else:
            params[FIELD_NAMES.get(name, name)] = parse_value(value)
    return Row(lineno, LLAMA_BENCH, "bench", backend, None, None, op, format_params(params),
               params, metric="avg_ts", value=to_float(ts.group(1)),
               value_err=to_float(ts.group(2)), extra=extra)
