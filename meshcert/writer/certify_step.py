"""Certify the package just written (`models certify --package-only`, with `--source`
semantics), reusing the digests the writer took instead of hashing anything again."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from meshcert.certify.report import CertReport
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.verdict import coverage_words
from meshcert.certify.view import CertOptions
from meshcert.core.atomic import write_atomic
from meshcert.core.progress import ProgressObserver
from meshcert.writer.card import with_result
from meshcert.writer.facts import source_facts, write_verify_cache
from meshcert.writer.write import README_NAME, WriteResult

if TYPE_CHECKING:
    from meshcert.certify.split_parity import ParityRequest


def certify_written(result: WriteResult, progress: ProgressObserver | None = None,
                    parity: ParityRequest | None = None,
                    materialize_dir: str | None = None) -> CertReport:
    """The certification report of `result.root`; the model card's result line is set to
    the report's status when it is not the `passed` it was written with. With `parity`, the
    stages are also materialized (in `materialize_dir`) and the model reassembled from the
    package is run beside its source under llama.cpp (`--materialize --parity`)."""
    with tempfile.TemporaryDirectory(prefix="meshcert-digests-") as tmp:
        cache = Path(tmp) / "digests.json"
        write_verify_cache(cache, result.root, result.state)
        ref = result.prepared.source_ref
        # the source identity the writer asked the Hub about before writing: not asked again
        checked = result.prepared.source_check
        request = CertRequest(model=str(result.root),
                              options=CertOptions(verify_sha256=True,
                                                  source_identity=checked is not None,
                                                  digests_written=True),
                              source_check=checked,
                              verify_cache=str(cache), source_gguf=ref,
                              source_facts=source_facts(result.plan, result.state, ref),
                              parity=parity, materialize=parity is not None,
                              materialize_dir=materialize_dir)
        report = certify_package(request, progress)
    said = card_result(report)
    if result.card is not None and said != "passed":
        write_atomic(result.root / README_NAME, with_result(result.card, said))
    return report


def card_result(report: CertReport) -> str:
    """The card's `- Result:` line: the status, with what the certification did not cover
    (`passed (llama.cpp not available)`), as the verdict says it. The card's own line above it
    already says the writer hashed every artifact, so the writer's digests are not repeated."""
    words = [w for w in coverage_words(report) if "hashed while writing" not in w]
    return report.status + (f" ({'; '.join(words)})" if words else "")
