"""The two worker questions of a certification: llama.cpp's parser is asked before the headers
are read when its answer cannot depend on them (fewer files than PARALLEL_FROM: one worker),
and it answers about the same files either way."""

from __future__ import annotations

from meshcert.certify.sources.local import load_local_package
from meshcert.certify.view import CertOptions, PackageView
from meshcert.certify.worker_questions import WorkerQuestions
from meshcert.certify.workers.llama_gguf import (
    LLAMA_CPP_FACTS_KEY,
    PARALLEL_FROM,
    asks_before_headers,
)
from tests.conftest import PackageFactory


def _certify_facts(root: str, *, early: bool) -> tuple[PackageView, list[tuple[str, Exception]]]:
    questions = WorkerQuestions()
    view = load_local_package(root, display_ref="x", options=CertOptions(verify_sha256=True),
                              on_headers=questions.start,
                              on_files=questions.ask_parser_early if early else None)
    return view, questions.finish(view)


def test_the_parser_is_asked_early_only_when_one_worker_takes_every_file() -> None:
    assert asks_before_headers([f"f{i}" for i in range(PARALLEL_FROM - 1)])
    assert not asks_before_headers([f"f{i}" for i in range(PARALLEL_FROM)])


def test_asked_early_or_late_llama_cpp_judges_the_same_files(packages: PackageFactory) -> None:
    info = packages.build(layers=2)  # 5 fragments: asked early
    early, early_failures = _certify_facts(str(info.root), early=True)
    late, late_failures = _certify_facts(str(info.root), early=False)
    assert early_failures == late_failures == []
    assert asks_before_headers(list(early.headers))
    facts_early = early.source_facts[LLAMA_CPP_FACTS_KEY]
    facts_late = late.source_facts[LLAMA_CPP_FACTS_KEY]
    assert facts_early == facts_late
    if facts_early.unavailable is None:  # llama-cpp-python installed (the suite's setup)
        assert list(facts_early.verdicts) == list(early.headers)
        assert all(v.accepted for v in facts_early.verdicts.values())
    assert early.work_ms["llama_cpp_gguf"] > 0 and early.work_ms["chat_templates"] > 0
