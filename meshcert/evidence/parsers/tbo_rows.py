"""What a test-backend-ops perf row looks like, and parsing many of them at once.

    `  NAME(params):      1704 runs -  1158.33 us/run - 117.44 MFLOP/run - 101.39 GFLOPS`
    `  NAME(params):    171990 runs -     5.83 us/run -       48 kB/run -    0.37 GB/s`

The throughput part may be wrapped in ANSI colour codes. `rows` / `numbers` run one
multi-line `findall` over many lines joined (C speed) and return columns; they return None
when any line does not match, and the caller then parses line by line.
"""

from __future__ import annotations

import re
from typing import Any

_A = r"(?:\x1b\[[0-9;]*m[ \t]*)?"   # an optional colour code (bulk patterns only)
_NAME = r"([A-Z][A-Za-z0-9_.\-]*)\((.*?)\):"
_F = r"(\d+(?:\.\d+)?)"  # a decimal as printf prints it (not "[0-9.]+": "1.2.3" is no float)
_NUMS = (r"(\d+) runs -[ \t]+" + _F + r" us/run -[ \t]+" + _A
         + r"(?:" + _F + r" kB/run -[ \t]+" + _A + _F + r" GB/s"
         r"|" + _F + r" ([kMGT]?)FLOP/run -[ \t]+" + _A + _F + r" ([kMGT]?)FLOPS)"
         + _A + r"[ \t]*$")
PERF_ROW = re.compile(r"[ \t]*" + _NAME + r"[ \t]+" + _NUMS)
# bulk patterns run over "\n" + "\n".join(lines): the leading literal lets the regex engine
# skip ahead fast; params exclude ")" there (a line that needs more falls back to PERF_ROW)
_PERF_ROWS = re.compile(r"\n  ([A-Z][A-Za-z0-9_.\-]*)\(([^)\n]*)\):[ \t]+" + _NUMS,
                        re.MULTILINE)
NUMS_AT = re.compile(r"[ \t]*" + _NUMS)
_NUMS_ATS = re.compile(r"\n[ \t]*" + _NUMS, re.MULTILINE)
NUMS_ANY = re.compile(_NUMS)
TIME_ONLY = re.compile(r"(\d+) runs -\s+" + _F + r" us/run")
_SCALE = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def perf_extra(g: tuple[str | Any, ...], at: int) -> dict[str, Any]:
    """Throughput fields from the regex groups starting at `at` (kB/GB/s or FLOP/FLOPS)."""
    if g[at]:
        return {"memory_kb": float(g[at]), "bandwidth_gb_s": float(g[at + 1])}
    if g[at + 2]:
        return {"flop_per_run": float(g[at + 2]) * _SCALE[g[at + 3]],
                "flops": float(g[at + 4]) * _SCALE[g[at + 5]]}
    return {}


def _columns(found: list[tuple[str, ...]], at: int) -> dict[str, list[Any]]:
    """runs, us and throughput extras from findall groups (numbers start at group `at`)."""
    cols = list(zip(*found, strict=True))
    scale = _SCALE
    extra = [{"memory_kb": float(kb), "bandwidth_gb_s": float(gbs)} if kb else
             {"flop_per_run": float(fl) * scale[flu], "flops": float(fs) * scale[fsu]}
             for kb, gbs, fl, flu, fs, fsu in zip(*cols[at + 2:at + 8], strict=True)]
    return {"runs": list(map(int, cols[at])), "us": list(map(float, cols[at + 1])),
            "extra": extra, "op": list(cols[0]), "params": list(cols[1])}


def rows(lines: list[str]) -> dict[str, list[Any]] | None:
    """Whole rows by one findall over the joined lines; None unless every line matches."""
    found = _PERF_ROWS.findall("\n" + "\n".join(lines))
    return _columns(found, 2) if len(found) == len(lines) else None


def numbers(lines: list[str]) -> dict[str, list[Any]] | None:
    """Split-row numbers by one findall; None unless every line matches."""
    found = _NUMS_ATS.findall("\n" + "\n".join(lines))
    return _columns(found, 0) if len(found) == len(lines) else None
