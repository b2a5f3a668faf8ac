"""The runtime report records which model answered (issue 41 item 7): the chat gate's answer
names it, the report's coverage carries it beside the model asked for, and a model that is
neither the package's model_id nor the one asked for (--served-model) is a warning,
`runtime_model_mismatch`, in every format's counts."""

from __future__ import annotations

from collections.abc import Callable

from meshcert.certify.report import CertReport
from meshcert.certify.service import CertRequest, RuntimeRequest, certify_package
from meshcert.testing import PackageInfo
from tests.conftest import PackageFactory
from tests.reports.test_one_verdict import assert_one_verdict
from tests.support.fake_openai import OTHER_MODEL, FakeOpenAI


def _certify(packages: PackageFactory, fake: FakeOpenAI, served: str
             ) -> tuple[CertReport, PackageInfo]:
    info = packages.build("llama")
    return certify_package(CertRequest(model=str(info.root), runtime=RuntimeRequest(
        api_base=fake.base_url, model_id=served, timeout_s=10))), info


def test_the_model_that_answered_is_recorded(packages: PackageFactory,
                                             fake_server: Callable[..., FakeOpenAI]) -> None:
    fake = fake_server(model_id="meshcert/tiny-llama-GGUF:F16")
    report, info = _certify(packages, fake, fake.model_id)
    assert report.model_id == fake.model_id
    assert report.coverage is not None
    runtime = report.coverage.runtime
    assert (runtime.status, runtime.requested_model, runtime.served_model) == (
        "ran", fake.model_id, fake.model_id)
    assert "runtime_model_mismatch" not in {f.code for f in report.findings}


def test_a_served_model_named_with_served_model_is_no_mismatch(
        packages: PackageFactory, fake_server: Callable[..., FakeOpenAI]) -> None:
    """--served-model names the id the endpoint serves the package under: answering as it is
    what was asked."""
    fake = fake_server()  # serves meshcert/fake-model
    report, _ = _certify(packages, fake, fake.model_id)
    assert report.model_id != fake.model_id
    assert report.coverage is not None and report.coverage.runtime.served_model == fake.model_id
    assert "runtime_model_mismatch" not in {f.code for f in report.findings}


def test_another_model_answering_is_a_warning(packages: PackageFactory,
                                              fake_server: Callable[..., FakeOpenAI]) -> None:
    fake = fake_server(faults=["answers_as_other_model"])
    report, _ = _certify(packages, fake, fake.model_id)
    assert report.coverage is not None and report.coverage.runtime.served_model == OTHER_MODEL
    [mismatch] = [f for f in report.findings if f.code == "runtime_model_mismatch"]
    assert mismatch.severity == "warning" and OTHER_MODEL in mismatch.message
    assert fake.model_id in mismatch.message and str(report.model_id) in mismatch.message
    said = assert_one_verdict(report)
    assert said.counts[1] >= 1


def test_the_model_asked_for_is_recorded_when_no_model_answered(
        packages: PackageFactory, fake_server: Callable[..., FakeOpenAI]) -> None:
    """An endpoint that serves no such model fails the chat gate: the report still names the
    model it was asked for (most often the wrong --served-model), and that none answered."""
    fake = fake_server()  # serves meshcert/fake-model only
    report, _ = _certify(packages, fake, "someone/not-served")
    chat = next(g for g in report.runtime_gates if g.name == "v1_chat_completions")
    assert chat.status == "failed"
    assert report.coverage is not None
    runtime = report.coverage.runtime
    assert (runtime.status, runtime.requested_model, runtime.served_model) == (
        "ran", "someone/not-served", None)
