"""Small, pure formatting helpers shared by the renderers."""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meshcert.evidence.report import GateCheck

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def human_bytes(value: int | float | None) -> str:
    """1536 -> '1.5 KiB'; None -> '—'."""
    if value is None:
        return "\u2014"
    size = float(value)
    for unit in _UNITS:
        if abs(size) < 1024 or unit == _UNITS[-1]:
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} {_UNITS[-1]}"  # pragma: no cover - loop always returns


def exact_bytes(value: int | None) -> str:
    return "\u2014" if value is None else f"{value:,} bytes"


def number(value: float | int | None, digits: int = 1, unit: str = "") -> str:
    """A measurement, or an em dash when there is none."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "\u2014"
    text = f"{value:,}" if isinstance(value, int) else f"{value:,.{digits}f}"
    return f"{text} {unit}".rstrip()


def ratio(value: float | None, digits: int = 3) -> str:
    if value is None or not math.isfinite(value):
        return "\u2014"
    return f"{value:.{digits}f}\u00d7"


def percent(share: float | None, digits: int = 1) -> str:
    if share is None or not math.isfinite(share):
        return "\u2014"
    return f"{share * 100:.{digits}f}%"


def parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def elapsed(start: str | None, end: str | None) -> str:
    """'1.23 s' between two ISO 8601 times, or an em dash."""
    begin, finish = parse_time(start), parse_time(end)
    if begin is None or finish is None:
        return "\u2014"
    seconds = (finish - begin).total_seconds()
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def short_sha(value: str | None, length: int = 12) -> str:
    return "\u2014" if not value else value[:length]


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


def gate_value(c: GateCheck) -> str:
    """A Phase E gate's measured value as summary.md and the console print it (ratio or
    share)."""
    if c.value is None:
        return "-"
    return f"{c.value:.1%}" if c.unit == "share" else f"{c.value:.3f}x"


def gate_threshold(c: GateCheck) -> str:
    """A Phase E gate's threshold with its comparator, as summary.md and the console print
    it, naming its variable when the environment set it."""
    if c.threshold is None:
        return "-"
    return f"{c.comparator} " + (f"{c.threshold:.0%}" if c.unit == "share" else
                                 f"{c.threshold:g}") + set_by(c.threshold_env,
                                                              c.threshold_source)


def set_by(env: str | None, source: str | None) -> str:
    """` (NAME)` when the environment variable NAME set this value (it changed the rule's
    default), else nothing."""
    return f" ({env})" if env and source == "env" else ""


def gate_switches(kernel_sweep: bool, sanity: bool | None = None) -> str:
    """The Phase E settings that switch gates on or off, each named by its variable, as
    summary.md and the console print them: `kernel sweep off (GLM52_PHASE_E_KERNEL_SWEEP=0)`."""
    from meshcert.evidence.rules import KERNEL_SWEEP, ROUTED_WHOLE_GRAPH_SANITY

    def named(what: str, on: bool, var: str) -> str:
        return f"{what} {'on' if on else 'off'} ({var}{' non-zero' if on else '=0'})"

    parts = [named("kernel sweep", kernel_sweep, KERNEL_SWEEP)]
    if sanity is not None:
        parts.append(named("sanity probe", sanity, ROUTED_WHOLE_GRAPH_SANITY))
    return "; ".join(parts)


def ungated_sweep_note(kernel_sweep: bool, sweep_rows: int) -> str | None:
    """When kernel-sweep rows were given but the sweep is off: what that left out and how to
    gate them (None otherwise)."""
    if kernel_sweep or not sweep_rows:
        return None
    from meshcert.evidence.rules import KERNEL_SWEEP

    return (f"{sweep_rows} kernel-sweep row(s) given but not gated: {KERNEL_SWEEP}=0 (set "
            f"{KERNEL_SWEEP}=1 to require and gate them)")
