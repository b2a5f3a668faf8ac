"""`meshcert evidence history`: a history JSONL (or `hf://datasets/ns/name@rev`, every
`data/runs/**/*.jsonl` of the dataset, read through meshcert.core.hub.api) -> per-setup
regression classes. Streams every file; no printing, no exiting."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from meshcert.evidence.errors import EvidenceError
from meshcert.evidence.history import History, classify_all, history_status, read_history
from meshcert.evidence.report import HistoryVerdict
from meshcert.evidence.rules import HISTORY_RULE, HistoryRule

if TYPE_CHECKING:
    from meshcert.core.hub.api import HubApi

DATASETS_PREFIX = "hf://datasets/"
RUNS_DIR = "data/runs"


class HistoryError(EvidenceError):
    """A source that cannot be read at all (message fit for `error: ...`)."""


class HistoryReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: int = 1
    kind: str = "meshcert.evidence.history"
    # the verdict (meshcert.evidence.history.history_status): failed when a setup regressed
    # or failed, incomplete when one lacks a baseline or nothing was classified, else passed
    status: Literal["passed", "failed", "incomplete"] = "incomplete"
    sources: list[str]
    rows: int
    problems: list[str] = Field(default_factory=list)
    history: list[HistoryVerdict] = Field(default_factory=list)

    @property
    def failures(self) -> list[HistoryVerdict]:
        return [h for h in self.history if h.history_class in ("correctness-failure",
                                                               "performance-regression")]


@dataclass
class HistoryRun:
    report: HistoryReport
    history: History = field(repr=False, default_factory=History)


def _hub_files(ref: str, endpoint: str | None, cache: str) -> list[tuple[str, str]]:
    """(name, local path) of each history file of the dataset `ref`, downloaded under `cache`."""
    from dataclasses import replace

    from meshcert.catalog.errors import CatalogError
    from meshcert.catalog.sources import parse_dataset_ref
    from meshcert.core.hub.api import HubApi
    from meshcert.core.hub.errors import HubError
    from meshcert.core.hub.settings import HubSettings

    try:
        repo, revision = parse_dataset_ref(ref)
    except CatalogError as exc:
        raise HistoryError(str(exc).replace("a catalog", "a history")) from None
    settings = HubSettings.from_env()
    hub = HubApi(replace(settings, endpoint=endpoint or settings.endpoint))
    where = f"{repo}@{revision}" if revision else repo
    try:
        commit = hub.call(f"dataset_info {where}", lambda api: api.dataset_info(
            repo, revision=revision)).sha  # one commit for every file
        listing = hub.call(f"list_repo_tree {repo}@{commit}", lambda api: list(
            api.list_repo_tree(repo, recursive=True, revision=commit, repo_type="dataset")))
        files = [str(item.path) for item in listing
                 if hasattr(item, "size") and str(item.path).endswith(".jsonl")
                 and (str(item.path).startswith(RUNS_DIR + "/") or "/" not in str(item.path))]
        out = [(f"{ref}/{path}", _download(hub, repo, path, commit, cache))
               for path in sorted(files)]
    except HubError as exc:  # the Hub's errors: one clear line, no token in it
        raise HistoryError(f"cannot read {ref}: {exc.message}") from None
    return out


def _download(hub: HubApi, repo: str, path: str, commit: str | None, cache: str) -> str:
    return str(hub.call(f"download {path}", lambda api: api.hf_hub_download(
        repo, path, repo_type="dataset", revision=commit, cache_dir=cache)))


def history_files(sources: list[str], *, rule: HistoryRule = HISTORY_RULE,
                  endpoint: str | None = None) -> HistoryRun:
    history = History()
    names: list[str] = []
    for src in sources:
        if src.startswith(DATASETS_PREFIX):
            # the downloads live only while they are read: nothing is left in the temp dir
            with tempfile.TemporaryDirectory(prefix="meshcert-history-") as cache:
                for name, local in _hub_files(src, endpoint, cache):
                    read_history(local, name, rule, history)
                    names.append(name)
            continue
        if not Path(src).is_file():
            raise HistoryError(f"{src}: no such file")
        read_history(os.fspath(src), src, rule, history)
        names.append(src)
    problems = [f"{p.where()}: {p.kind}: {p.reason}" for p in history.problems]
    verdicts = classify_all(history, rule)
    report = HistoryReport(status=history_status(verdicts), sources=names, rows=history.rows,
                           problems=problems, history=verdicts)
    return HistoryRun(report, history)
