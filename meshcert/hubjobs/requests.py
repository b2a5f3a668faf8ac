"""What `package job` is asked, as one object, and the rules its options follow: pure functions
of the option values that raise `OptionError` (meshcert.core.usage) naming the option at
fault, tested without the CLI."""

from __future__ import annotations

import re
from dataclasses import dataclass

from meshcert.core.usage import OptionError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
MODES = ("--status", "--logs", "--cancel", "--list", "SOURCE")


def parse_duration(text: str) -> int:
    """'7200', '90m', '2h', '1d' -> seconds (what HF Jobs' --timeout accepts)."""
    match = _DURATION.match(text)
    if match is None or float(match.group(1)) <= 0:
        raise OptionError("give seconds, or a number with s, m, h or d", "--timeout")
    return int(float(match.group(1)) * _UNIT_S[match.group(2)])


def check_max_cost(max_cost_usd: float | None) -> None:
    """--max-cost-usd, when given, is a positive amount."""
    if max_cost_usd is not None and max_cost_usd <= 0:
        raise OptionError("must be > 0", "--max-cost-usd")


def job_mode(source: str | None, *, status: str | None = None, logs: str | None = None,
             cancel: str | None = None, list_jobs: bool = False) -> str:
    """Which one thing `package job` does: "SOURCE" (plan and submit), or one of its
    deprecated modes "--status", "--logs", "--cancel", "--list"."""
    given = dict(zip(MODES, (status, logs, cancel, list_jobs, source), strict=True))
    modes = [mode for mode, on in given.items() if on]
    if len(modes) != 1:
        raise OptionError("give SOURCE --target NS/REPO, or one of --status ID, --logs ID, "
                          "--cancel ID, --list", "SOURCE")
    return modes[0]


@dataclass(frozen=True)
class PackageJobRequest:
    """`package job SOURCE --target NS/REPO`: write, publish and certify the package on HF Jobs
    (`confirm`: submit; else a dry run), `follow` it to the end."""

    source: str
    target: str
    model_id: str | None = None
    timeout_s: int | None = None
    experimental: bool = False
    confirm: bool = False
    follow: bool = False
    flavor: str = "auto"
    max_cost_usd: float | None = None
    fmt: str = "v2"
    install: str | None = None
    catalog: str | None = None
    no_publisher_metadata: bool = False
    generation_defaults: str | None = None
    attest_key: str | None = None


def package_job_request(source: str, *, target: str | None, model_id: str | None = None,
                        timeout: str | None = None, experimental: bool = False,
                        dry_run: bool = False, confirm: bool = False, follow: bool = False,
                        flavor: str = "auto", max_cost_usd: float | None = None,
                        fmt: str = "v2", install: str | None = None,
                        catalog: str | None = None, no_publisher_metadata: bool = False,
                        generation_defaults: str | None = None,
                        attest_key: str | None = None) -> PackageJobRequest:
    """The request, once the options agree: not --dry-run with --confirm, a --target, a known
    --format, a positive --max-cost-usd, a --timeout HF Jobs reads (checked in that order)."""
    if dry_run and confirm:
        raise OptionError("--dry-run and --confirm contradict", "--confirm")
    if target is None:
        raise OptionError("needs --target NS/REPO", "--target")
    if fmt not in ("v2", "v1"):
        raise OptionError("must be v2 or v1", "--format")
    check_max_cost(max_cost_usd)
    return PackageJobRequest(
        source, target, model_id=model_id,
        timeout_s=parse_duration(timeout) if timeout else None, experimental=experimental,
        confirm=confirm, follow=follow, flavor=flavor, max_cost_usd=max_cost_usd, fmt=fmt,
        install=install, catalog=catalog, no_publisher_metadata=no_publisher_metadata,
        generation_defaults=generation_defaults, attest_key=attest_key)
