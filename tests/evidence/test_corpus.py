"""The real-output corpus (tests/evidence/corpus): published llama.cpp output, each file with
a sidecar naming its source and the values decided by reading it. Ingest must get every
expected value right or flag it with file and line; nothing may be silently wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.evidence.accuracy import accuracy_table, check_file, corpus_files
from meshcert.evidence.ingest import ingest_files

CORPUS = Path(__file__).resolve().parent / "corpus"
FILES = corpus_files(CORPUS)


def test_the_corpus_is_big_and_varied_and_names_its_sources() -> None:
    assert len(FILES) >= 40
    formats = {spec["format"] for _, spec in FILES}
    assert {"tbo-console", "tbo-test", "llama-bench-md", "llama-bench-json",
            "perplexity"} <= formats
    backends = {b.split(",")[0] for _, spec in FILES for b in spec["backends"]}
    assert {"CPU", "CUDA0", "Metal", "Vulkan0", "CANN", "QNN"} <= backends
    years = {name.stem[-4:] for name, _ in FILES}
    assert {"2023", "2024", "2025", "2026"} <= years
    assert all(spec["source"] for _, spec in FILES)


@pytest.mark.parametrize(("path", "spec"), FILES, ids=[p.stem for p, _ in FILES])
def test_no_value_is_silently_wrong(path: Path, spec: dict[str, object]) -> None:
    acc = check_file(path, spec, ingest_files([path]))
    assert acc.wrong == []
    assert acc.missing_problems == []
    assert acc.right + acc.flagged == acc.expected


def test_accuracy_table_totals() -> None:
    results = [check_file(p, s, ingest_files([p])) for p, s in FILES]
    total = accuracy_table(results)[-1]
    assert total["silently_wrong"] == 0
    assert total["files"] == len(FILES)
    assert total["right"] >= 0.9 * total["expected"]   # the rest is flagged, file:line
