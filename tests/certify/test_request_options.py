"""`models certify`'s option rules, without the CLI: CertifyInput -> CertRequest or the first
OptionError (the CLI shows it as the usage error for that option, exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.certify.request_options import (
    CertifyInput,
    cert_request,
    check_local_model,
    check_values,
    local_only_options,
    parity_request,
    parse_scope,
    validate_api_base,
)
from meshcert.core.usage import OptionError


def _problem(given: CertifyInput) -> tuple[str, str | None]:
    with pytest.raises(OptionError) as caught:
        check_values(given)
        cert_request(given)
    return caught.value.message, caught.value.option


@pytest.fixture()
def package(tmp_path: Path) -> str:
    (tmp_path / "pkg").mkdir()
    return str(tmp_path / "pkg")


def test_a_package_only_request_carries_the_options(package: str) -> None:
    given = CertifyInput(model=package, package_only=True, runtime_abi="0.76.2", stages=3,
                         strict=True, layers="0..4", llama_timeout=30.0)
    check_values(given)
    request = cert_request(given)
    assert request.model == package and request.runtime is None
    assert request.options.runtime_abi == "0.76.2" and request.options.stages == 3
    assert request.options.strict and request.llama_timeout_s == 30.0
    assert request.options.scope is not None and request.options.scope.label == "--layers 0..4"


def test_a_runtime_request_trims_the_base_and_falls_back_to_the_env_key(
        package: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MESH_LLM_API_KEY", "from-env")
    request = cert_request(CertifyInput(model=package, api_base="http://127.0.0.1:9337/"))
    assert request.runtime is not None
    assert request.runtime.api_base == "http://127.0.0.1:9337"
    assert request.runtime.api_key == "from-env" and request.runtime.model_id == package


@pytest.mark.parametrize(("change", "problem"), [
    ({"package_only": False}, ("give exactly one of --package-only or --api-base",
                               "--package-only / --api-base")),
    ({"api_base": "http://127.0.0.1:1"}, ("give exactly one of --package-only or --api-base",
                                          "--package-only / --api-base")),
    ({"served_model": "org/other"}, ("only applies with --api-base: it names the model the "
                                     "endpoint serves, and --package-only asks no endpoint",
                                     "--served-model")),
    ({"prompt": "  "}, ("must not be blank", "--prompt")),
    ({"max_tokens": 0}, ("must be > 0", "--max-tokens")),
    ({"concurrency": 257}, ("must be within 1..256", "--concurrency")),
    ({"timeout": 0}, ("must be > 0", "--timeout")),
    ({"deadline": -1}, ("must be > 0", "--deadline")),
    ({"llama_timeout": 0}, ("must be > 0", "--llama-timeout")),
    ({"stages": 0}, ("must be > 0", "--stages")),
    ({"runtime_abi": "1"}, ("must be major.minor[.patch]", "--runtime-abi")),
    ({"min_mesh_llm": "v0.x"}, ("must be major.minor[.patch]", "--min-mesh-llm")),
    ({"layers": "0..4", "stage": "0/2"}, ("give --layers or --stage, not both",
                                          "--layers / --stage")),
    ({"hash_once": True}, ("needs --stage I/N (the share of the N-stage plan)", "--hash-once")),
    ({"stage": "2/2"}, ("'2/2': I must be within 0..N-1 and N > 0", "--stage")),
    ({"layers": "4..4"}, ("'4..4' is empty: A must be below B (the range is half-open)",
                          "--layers")),
    ({"layers": "0..4", "source": "x.gguf"}, (
        "--source compares every tensor of the whole package; it cannot be combined with "
        "--layers/--stage", "--source")),
    ({"parity_prompts": "p.txt"}, ("needs --parity SOURCE.gguf", "--parity-prompts")),
])
def test_each_rule_names_its_option(package: str, change: dict[str, object],
                                    problem: tuple[str, str]) -> None:
    values: dict[str, object] = {"model": package, "package_only": True, **change}
    assert _problem(CertifyInput(**values)) == problem  # type: ignore[arg-type]


def test_the_mode_is_checked_before_the_ranges(package: str) -> None:
    given = CertifyInput(model=package, max_tokens=0, concurrency=0)
    assert _problem(given)[1] == "--package-only / --api-base"


def test_a_missing_or_file_model_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="does not exist.*a Hub repo\\? give hf://ns/repo"):
        check_local_model("ns/repo")
    (tmp_path / "model.txt").write_text("x")
    with pytest.raises(OptionError, match="is a file, not a package directory") as caught:
        check_local_model(str(tmp_path / "model.txt"))
    assert caught.value.option == "MODEL"
    check_local_model("hf://ns/repo@main")  # the Hub: certification says what is there
    check_local_model(str(tmp_path / "model.gguf"))  # a .gguf: its own finding


def test_the_api_base_is_an_http_url_without_v1() -> None:
    assert validate_api_base(" https://host:1/ ") == "https://host:1"
    for bad, message in (("ftp://host", r"is not an http\(s\) URL with a host"),
                         ("http://host/v1", "give the base URL without /v1")):
        with pytest.raises(OptionError, match=message) as caught:
            validate_api_base(bad)
        assert caught.value.option == "--api-base"


def test_a_scope_is_layers_or_a_stage() -> None:
    assert parse_scope(None, None) is None
    scope = parse_scope(None, "1/4", hash_once=True)
    assert scope is not None and scope.stage_index == 1 and scope.hash_once


def test_parity_needs_a_file_and_prompts_that_hold_one(tmp_path: Path) -> None:
    assert parity_request(None, None, 16, 1, 60.0) is None
    with pytest.raises(OptionError, match="is not a file") as caught:
        parity_request(str(tmp_path / "missing.gguf"), None, 16, 1, 60.0)
    assert caught.value.option == "--parity"
    source = tmp_path / "source.gguf"
    source.write_bytes(b"GGUF")
    with pytest.raises(OptionError, match=r"must be within 1\.\.128"):
        parity_request(str(source), None, 129, 1, 60.0)
    with pytest.raises(OptionError, match="must be > 0"):
        parity_request(str(source), None, 16, 0, 60.0)
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("\n  \n")
    with pytest.raises(OptionError, match="holds no prompt"):
        parity_request(str(source), str(prompts), 16, 1, 60.0)
    prompts.write_text("one\n\ntwo\n")
    request = parity_request(str(source), str(prompts), 8, 1, 60.0)
    assert request is not None and request.prompts == ["one", "two"] and request.tokens == 8


def test_evidence_without_decisions_is_a_usage_error(package: str, tmp_path: Path) -> None:
    bad = tmp_path / "decisions.json"
    bad.write_text('{"runs": []}')
    given = CertifyInput(model=package, package_only=True, evidence=str(bad))
    assert _problem(given) == (f"{str(bad)!r} has no decisions[] list", "--evidence")


def test_local_only_options_are_those_given() -> None:
    given = CertifyInput(model="hf://ns/repo@main", source="s.gguf", min_mesh_llm="0.79")
    assert {flag for flag, was in local_only_options(given).items() if was} == {
        "--source", "--min-mesh-llm"}
