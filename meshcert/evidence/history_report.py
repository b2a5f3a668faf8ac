"""`meshcert evidence history`: a history JSONL (or `hf://datasets/ns/name@rev`, every
`data/runs/**/*.jsonl` of the dataset read through huggingface_hub) -> per-setup regression
classes. Streams every file; no printing, no exiting."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from meshcert.evidence.errors import EvidenceError
from meshcert.evidence.history import History, classify_all, read_history
from meshcert.evidence.report import HistoryVerdict
from meshcert.evidence.rules import HISTORY_RULE, HistoryRule

DATASETS_PREFIX = "hf://datasets/"
RUNS_DIR = "data/runs"


class HistoryError(EvidenceError):
    """A source that cannot be read at all (message fit for `error: ...`)."""


class HistoryReport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: int = 1
    kind: str = "meshcert.evidence.history"
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


def _hub_files(ref: str, endpoint: str | None) -> tuple[list[tuple[str, str]], str]:
    from huggingface_hub import HfApi, hf_hub_download

    from meshcert.catalog.errors import CatalogError
    from meshcert.catalog.sources import parse_dataset_ref
    from meshcert.core.hub.settings import HubSettings

    try:
        repo, revision = parse_dataset_ref(ref)
    except CatalogError as exc:
        raise HistoryError(str(exc).replace("a catalog", "a history")) from None
    endpoint = endpoint or HubSettings.from_env().endpoint
    api = HfApi(endpoint=endpoint, library_name="meshcert")
    cache = tempfile.mkdtemp(prefix="meshcert-history-")
    try:
        commit = api.dataset_info(repo, revision=revision).sha      # one commit for every file
        files = [str(item.path) for item in api.list_repo_tree(
                     repo, recursive=True, revision=commit, repo_type="dataset")
                 if hasattr(item, "size") and str(item.path).endswith(".jsonl")
                 and (str(item.path).startswith(RUNS_DIR + "/") or "/" not in str(item.path))]
        out = [(f"{ref}/{p}", str(hf_hub_download(repo, p, repo_type="dataset",
                                                  revision=commit, cache_dir=cache,
                                                  endpoint=endpoint))) for p in sorted(files)]
    except Exception as exc:  # the Hub's errors: one clear line
        raise HistoryError(f"cannot read {ref}: {type(exc).__name__}: {exc}") from None
    return out, cache


def history_files(sources: list[str], *, rule: HistoryRule = HISTORY_RULE,
                  endpoint: str | None = None) -> HistoryRun:
    history = History()
    names: list[str] = []
    for src in sources:
        if src.startswith(DATASETS_PREFIX):
            files, _ = _hub_files(src, endpoint)
            for name, local in files:
                read_history(local, name, rule, history)
                names.append(name)
            continue
        if not Path(src).is_file():
            raise HistoryError(f"{src}: no such file")
        read_history(os.fspath(src), src, rule, history)
        names.append(src)
    problems = [f"{p.where()}: {p.kind}: {p.reason}" for p in history.problems]
    report = HistoryReport(sources=names, rows=history.rows, problems=problems,
                           history=classify_all(history, rule))
    return HistoryRun(report, history)
