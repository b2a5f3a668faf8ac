"""Checks: pure functions from a PackageView to findings, registered with the codes they emit.

Every module in this package is imported by `all_checks()`, so adding a check is adding a
module with `@register(...)` functions; find a check by grepping its finding code.

A check that only means something for some runs says so when it is registered, with
`runs_when` rules: `asked_for("--source", ...)` (the run did not ask for it) and
`applicable(..., "the manifest declares no projectors")` (nothing in this package for it to
check). The engine asks the rules first and reports a check whose rule answered as `skipped`
with that answer, so a report never lists as passed a check that did no work.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from meshcert.certify.report import NOT_APPLICABLE, NOT_ASKED_FOR, NOT_AVAILABLE
from meshcert.certify.view import PackageView
from meshcert.core.codes import CODES
from meshcert.core.findings import Finding

CheckFunc = Callable[[PackageView], Iterable[Finding]]
# None when the check applies to this run, else why not: "not asked for: runs with --flag" or
# "not applicable: <why>" (the CheckRun's details)
SkipRule = Callable[[PackageView], str | None]


class AskedFor:
    """A check of work the run only does when asked: skipped, naming the flag, otherwise."""

    def __init__(self, flag: str, given: Callable[[PackageView], bool]) -> None:
        self.flag = flag
        self.given = given

    def __call__(self, view: PackageView) -> str | None:
        return None if self.given(view) else f"{NOT_ASKED_FOR}: runs with {self.flag}"


def asked_for(flag: str, given: Callable[[PackageView], bool]) -> SkipRule:
    """A check of work the run only does when asked: skipped, naming the flag, otherwise."""
    return AskedFor(flag, given)


def not_available(why: Callable[[PackageView], str | None]) -> SkipRule:
    """A check the run did not explicitly ask for whose tool is missing (`why` says which):
    skipped, "not available: <why>". (A tool the user explicitly asked for, --materialize or
    --parity, that is missing makes the report incomplete instead: meshcert.certify.coverage.)"""
    def rule(view: PackageView) -> str | None:
        reason = why(view)
        return None if reason is None else f"{NOT_AVAILABLE}: {reason}"
    return rule


def applicable(holds: Callable[[PackageView], bool], otherwise: str) -> SkipRule:
    """A check of something a package may not have: skipped, saying why, when it has none."""
    def rule(view: PackageView) -> str | None:
        return None if holds(view) else f"{NOT_APPLICABLE}: {otherwise}"
    return rule


# the checks of the manifest's content have nothing to read when manifest_json found none
MANIFEST_READ = applicable(lambda view: view.manifest is not None,
                           "no package manifest was read")


# the checks that read GGUF headers (or the tensor catalog built from them): when no header
# could be read (every GGUF unreadable or missing, the Hub failing every range read) one with
# nothing to say read nothing, and the engine reports it skipped, never `passed`
READS_GGUF_HEADERS = frozenset({
    "gguf_structure", "llama_cpp_gguf", "gguf_manifest_counts", "tensor_ownership",
    "metadata_tensor_copies", "slice_metadata", "stale_split_metadata", "gguf_architecture",
    "native_mtp_tensors", "tokenizer", "tokenizer_copies", "chat_templates", "glm_dsa_contract",
    "glm_dsa_architecture_v2", "source_parity", "v2_carrier", "v2_tensor_catalog",
    "v2_tensor_placement", "v2_payload_directories", "publisher_config_geometry"})

# the checks that compare the package's artifact files with the manifest: when no declared
# artifact's file was looked at (a --layers/--stage that selects none) they checked nothing
READS_ARTIFACT_FILES = frozenset({"artifact_files"})


@dataclass(frozen=True)
class Check:
    name: str
    codes: frozenset[str]
    func: CheckFunc
    order: int
    formats: frozenset[str] = frozenset({"v1", "v2"})
    runs_when: tuple[SkipRule, ...] = ()

    def skip_reason(self, view: PackageView) -> str | None:
        """Why this check has nothing to do in this run (the first rule that says so)."""
        for rule in self.runs_when:
            reason = rule(view)
            if reason is not None:
                return reason
        return None

    @property
    def reads_headers(self) -> bool:
        return self.name in READS_GGUF_HEADERS

    @property
    def reads_artifact_files(self) -> bool:
        return self.name in READS_ARTIFACT_FILES

    def unused_option(self, view: PackageView) -> str | None:
        """The flag the run was given for this check when the check does not apply to the
        package's format (`--evidence` on a v2 package): the option was not used."""
        for rule in self.runs_when:
            if isinstance(rule, AskedFor) and rule.given(view):
                return rule.flag
        return None

    def applies_to(self, package_format: str | None) -> bool:
        """Format-specific checks (schema rules) run only on their format; a manifest of an
        unsupported version is checked as v1, so its problems are still listed."""
        return (package_format or "v1") in self.formats


_CHECKS: dict[str, Check] = {}


def register(name: str, codes: Iterable[str], order: int = 100,
             formats: Iterable[str] = ("v1", "v2"), runs_when: Iterable[SkipRule] = ()
             ) -> Callable[[CheckFunc], CheckFunc]:
    """Register a check group. `codes` are every code it may emit (all must be in the code table);
    lower `order` runs first (only affects the order findings are listed); `formats` are the
    package formats it applies to (schema checks are format-specific, the rest are not);
    `runs_when` are the rules that tell, before it runs, that it has nothing to do."""
    code_set = frozenset(codes)
    unknown = sorted(code_set - CODES.keys())
    if unknown:
        raise KeyError(f"check {name!r} declares codes missing from the code table: {unknown}")

    def decorate(func: CheckFunc) -> CheckFunc:
        if name in _CHECKS and _CHECKS[name].func is not func:
            raise ValueError(f"check {name!r} registered twice")
        _CHECKS[name] = Check(name, code_set, func, order, frozenset(formats),
                                tuple(runs_when))
        return func

    return decorate


def all_checks() -> list[Check]:
    for name in _check_modules():
        importlib.import_module(f"{__name__}.{name}")
    return sorted(_CHECKS.values(), key=lambda c: (c.order, c.name))


def _check_modules() -> list[str]:
    """The check modules in this package's directory (a directory listing: `pkgutil` would
    cost more to import than listing it)."""
    return sorted(entry.name.removesuffix(".py") for directory in __path__
                  for entry in os.scandir(directory)
                  if entry.name.endswith(".py") and not entry.name.startswith("_"))
