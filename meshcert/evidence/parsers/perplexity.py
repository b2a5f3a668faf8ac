"""llama-perplexity output: the quality evidence for quant recipes.

    Final estimate: PPL = 5.4007 +/- 0.03313
With `--kl-divergence` (format strings of tools/perplexity/perplexity.cpp):
    Mean PPL(Q)                   :   6.234567 ±   0.038000        -> ppl_q
    Mean PPL(base)                :   6.100000 ±   0.037000        -> ppl_base
    Cor(ln(PPL(Q)), ln(PPL(base))):  99.87%                        -> cor_ln_ppl (percent)
    Mean ln(PPL(Q)/PPL(base))     :   0.011872 ±   0.000456        -> ln_ppl_ratio
    Mean PPL(Q)/PPL(base)         :   1.011943 ±   0.000461        -> ppl_ratio
    Mean PPL(Q)-PPL(base)         :   0.073000 ±   0.002800        -> ppl_diff
    Mean    KLD:   0.009876 ±   0.000234  (Maximum / 99.9% / Median / ... KLD)
                                  -> kld_mean, kld_max, kld_p99_9, kld_p95, kld_median
    Mean    Δp: -0.123 ± 0.012 %  (Maximum / 99.9% / ... Δp, RMS Δp)  -> delta_p_* (percent)
    Same top p: 93.123 ± 0.123 %                                     -> same_top_p (percent)
Each number is one `quality` row (op `perplexity`, metric, value, value_err). `params` names
the model file and context (`model=x.gguf,n_ctx=512`) when the log says them; `build: N (hash)`
gives the build commit. Per-chunk progress and the chunk table are ignored.

Real output also has: a log prefix (`0.01.361.084 I Final estimate: ...`, removed); a fork's
`Final estimate: PPL over 4 chunks for n_ctx=256 = 6.1234 +/- 0.12345`; the first KL
statistics of early 2024 (`===== KL-divergence statistics`, `Average: x ± y`, `Median : x`,
`KLD_99 : x`); a `±` mangled to `_` or `Â±` by a paste. Never silently wrong: a result
without the `± err` part its format always has (`Final estimate: PPL = 6`), or a last line
that ends the file in the middle of a number, is a problem, not a value.
"""

from __future__ import annotations

import os
import re
from typing import Any

from meshcert.evidence.parsers.base import (
    INCOMPLETE,
    PERPLEXITY,
    ParsedFile,
    Row,
    strip_ansi,
    to_float,
)
from meshcert.evidence.parsers.params import format_params

_PM = r"\s*(?:Â±|±|\+/-|_)\s*"
_NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|-?nan|-?inf)"
_FINAL = re.compile(r"Final estimate: PPL(?: over (\d+) chunks for n_ctx=(\d+))? = " + _NUM
                    + r"(?:" + _PM + _NUM + r")?\s*$")
_LOG_PREFIX = re.compile(r"\d+\.\d+\.\d+\.\d+ [IWEDT] ")
_OLD_KLD = re.compile(r"(Average|Median|Minimum|Maximum|KLD_(\d+(?:\.\d+)?))\s*:\s*" + _NUM
                      + r"(?:" + _PM + _NUM + r")?\s*$")
_OLD_KLD_LABEL = re.compile(r"(?:Average|Median|Minimum|Maximum|KLD_\d+(?:\.\d+)?)\s*:\s*$")
_OLD_KLD_NAMES = {"Average": "kld_mean", "Median": "kld_median", "Minimum": "kld_min",
                  "Maximum": "kld_max"}
# metrics whose line always carries a `± error` part
_WITH_ERROR = frozenset({"ppl", "ppl_q", "ppl_base", "ln_ppl_ratio", "ppl_ratio", "ppl_diff",
                         "kld_mean", "same_top_p", "delta_p_mean", "delta_p_rms"})
_STATS = re.compile(r"Mean\s+(PPL\(Q\)|PPL\(base\)|ln\(PPL\(Q\)/PPL\(base\)\)|"
                    r"PPL\(Q\)/PPL\(base\)|PPL\(Q\)-PPL\(base\))\s*:\s*" + _NUM
                    + r"(?:" + _PM + _NUM + r")?")
_STAT_NAMES = {"PPL(Q)": "ppl_q", "PPL(base)": "ppl_base", "ln(PPL(Q)/PPL(base))": "ln_ppl_ratio",
               "PPL(Q)/PPL(base)": "ppl_ratio", "PPL(Q)-PPL(base)": "ppl_diff"}
_COR = re.compile(r"Cor\(ln\(PPL\(Q\)\), ln\(PPL\(base\)\)\)\s*:\s*" + _NUM + r"\s*%")
_DIST = re.compile(r"(Mean|Maximum|Minimum|Median|RMS|\d+(?:\.\d+)?%)\s+(KLD|Δp)\s*:\s*" + _NUM
                   + r"\s*%?(?:" + _PM + _NUM + r"\s*%?)?\s*$")
_SAME_TOP = re.compile(r"Same top p\s*:\s*" + _NUM + r"(?:" + _PM + _NUM + r")?\s*%")
_BUILD = re.compile(r"build: \d+ \(([0-9a-fA-F]+)\)")
_MODEL = re.compile(r"loaded meta data with .* from (.+?) \(version")
_FTYPE = re.compile(r"file type\s*=\s*(.+?)\s*$")
_CHUNKS = re.compile(r"(?:calculating perplexity|computing) over (\d+) chunks, n_ctx=(\d+)"
                     r"|Final estimate: PPL over (\d+) chunks for n_ctx=(\d+)")
_WATCH = ("Final estimate", "KLD", "Δp", "Same top p", "PPL(Q)", "PPL(base)", "Cor(",
          "Mean ", "Maximum ", "Minimum ", "Median ", "RMS ")


def _stat_name(label: str, family: str) -> str:
    prefix = "kld" if family == "KLD" else "delta_p"
    simple = {"Mean": "mean", "Maximum": "max", "Minimum": "min", "Median": "median",
              "RMS": "rms"}
    if label in simple:
        return f"{prefix}_{simple[label]}"
    number = label.rstrip("%")
    number = number[:-2] if number.endswith(".0") else number
    return f"{prefix}_p{number.replace('.', '_')}"        # 99.9% -> p99_9, 95.0% -> p95


def parse(text: str, source: str) -> ParsedFile:
    out = ParsedFile(PERPLEXITY)
    found: list[tuple[int, str, float | None, float | None]] = []
    params: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    lines = text.split("\n")
    last = len(lines) if lines and lines[-1].strip() else 0   # a last line with no newline
    old_kld = False
    for lineno, raw in enumerate(lines, 1):
        line = strip_ansi(raw).strip()
        if not line:
            continue
        if line[0].isdigit() and _LOG_PREFIX.match(line):
            line = line[_LOG_PREFIX.match(line).end():].strip()  # type: ignore[union-attr]
        if "KL-divergence statistics" in line:
            old_kld = True
            continue
        if line.startswith("=") or line.startswith("chunk"):
            old_kld = old_kld and "KL" in line
            continue
        if old_kld and _OLD_KLD_LABEL.match(line):
            out.problem(source, lineno, line, "a KL statistic without its value (cut?)",
                        INCOMPLETE)
            continue
        if not line.startswith("Final estimate") and "Final estimate: PPL" in line:
            out.note("prefixed_final_lines")      # e.g. a `uniq -c` count in front
            line = line[line.index("Final estimate: PPL"):]
        if line.startswith("Final estimate: PPL over"):
            _facts(line, params, extra, out)          # the fork names chunks and n_ctx here
        metric = _metric(line) or (_old_kld(line) if old_kld else None)
        if metric is not None:
            name, value, err = metric
            why = _cut(err, name, line, lineno == last)
            if why:
                out.problem(source, lineno, line, f"{name}: {why}", INCOMPLETE)
                continue
            found.append((lineno, name, value, err))
            continue
        if _facts(line, params, extra, out):
            continue
        if _looks_like_result(line):
            out.problem(source, lineno, line, "looks like a perplexity/KLD result but does not "
                        "parse")
            continue
        out.ignored += 1
    canon = format_params(params)
    for lineno, name, value, err in found:
        out.rows.append(Row(lineno, PERPLEXITY, "quality", None, None, out.build_commit,
                            "perplexity", canon, dict(params), metric=name, value=value,
                            value_err=err, extra=dict(extra)))
    if not found:
        out.problem(source, None, "", "no perplexity result (no `Final estimate: PPL = ...` "
                    "and no KL divergence statistics): interrupted run?", INCOMPLETE)
    return out


def _cut(err: float | None, name: str, line: str, at_eof: bool) -> str | None:
    """Why a metric line looks truncated (None: it looks whole)."""
    if err is None and name in _WITH_ERROR:
        return "no `± error` part, which this line always has: truncated?"
    if at_eof and line[-1:].isdigit():
        return "the file ends in the middle of this line's number (no newline after it)"
    return None


def _old_kld(line: str) -> tuple[str, float | None, float | None] | None:
    """`Average:   0.010623 ±   0.000065`, `KLD_99 :   0.053217` (early 2024 builds)."""
    m = _OLD_KLD.match(line)
    if m is None:
        return None
    label = m.group(1)
    name = _OLD_KLD_NAMES.get(label) or f"kld_p{m.group(2).replace('.', '_')}"
    return name, to_float(m.group(3)), _opt(m.group(4))


def _metric(line: str) -> tuple[str, float | None, float | None] | None:
    m = _FINAL.match(line)
    if m is not None:
        return "ppl", to_float(m.group(3)), _opt(m.group(4))
    if line.startswith("Mean"):
        m = _STATS.match(line)
        if m is not None:
            return _STAT_NAMES[m.group(1)], to_float(m.group(2)), _opt(m.group(3))
    if line.startswith("Cor("):
        m = _COR.match(line)
        if m is not None:
            return "cor_ln_ppl", to_float(m.group(1)), None
    if line.startswith("Same top p"):
        m = _SAME_TOP.match(line)
        if m is not None:
            return "same_top_p", to_float(m.group(1)), _opt(m.group(2))
    if "KLD" in line or "Δp" in line:
        m = _DIST.match(line)
        if m is not None:
            return _stat_name(m.group(1), m.group(2)), to_float(m.group(3)), _opt(m.group(4))
    return None


def _opt(text: str | None) -> float | None:
    return to_float(text) if text is not None else None


def _facts(line: str, params: dict[str, Any], extra: dict[str, Any], out: ParsedFile) -> bool:
    """Build, model and context facts; True when the line was one."""
    m = _BUILD.match(line)
    if m is not None:
        out.build_commit = out.build_commit or m.group(1)
        return True
    m = _MODEL.search(line)
    if m is not None and "model" not in params:
        params["model"] = os.path.basename(m.group(1).strip())
        return True
    if "file type" in line:
        m = _FTYPE.search(line)
        if m is not None and "file_type" not in extra:
            extra["file_type"] = m.group(1)
            return True
    m = _CHUNKS.search(line)
    if m is not None:
        params.setdefault("n_ctx", int(m.group(2) or m.group(4)))
        extra["chunks"] = int(m.group(1) or m.group(3))
        return True
    return False


def _looks_like_result(line: str) -> bool:
    """A summary-looking line (`Final estimate`, `... KLD: x`, `Same top p`) we failed on;
    the chunk table and progress lines are not results."""
    if line.startswith(("chunk", "[")) or ":" not in line:
        return False
    return line.startswith(_WATCH) or "KLD:" in line or "Δp:" in line or "_p:" in line
