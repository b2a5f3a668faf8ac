"""The signing and verifying options' rules, asked directly (no CLI, no key)."""

from __future__ import annotations

import pytest

from meshcert.attest.requests import (
    VerifyRequest,
    attestation_path,
    check_attestation_out,
    check_trust_options,
)
from meshcert.core.usage import OptionError


def test_the_attestation_goes_where_asked_else_beside_the_report() -> None:
    assert attestation_path("out/cert.json", "sig.intoto.jsonl") == "sig.intoto.jsonl"
    assert attestation_path(None, "sig.intoto.jsonl") == "sig.intoto.jsonl"
    assert attestation_path("out/cert.json", None) == "out/cert.intoto.jsonl"
    assert attestation_path("out/report", None) == "out/report.intoto.jsonl"


def test_an_attestation_with_nowhere_to_go_is_refused_naming_the_key_option() -> None:
    with pytest.raises(OptionError) as caught:
        attestation_path(None, None)
    assert caught.value.option == "--attest-key"
    assert caught.value.message == ("needs --report-out (the attestation goes beside it) or "
                                    "--attestation-out PATH")


def test_attestation_out_needs_a_key() -> None:
    check_attestation_out("me.key", "a.intoto.jsonl")
    check_attestation_out("me.key", None)
    check_attestation_out(None, None)
    with pytest.raises(OptionError) as caught:
        check_attestation_out(None, "a.intoto.jsonl")
    assert (caught.value.option, caught.value.message) == ("--attestation-out",
                                                          "needs --attest-key")


@pytest.mark.parametrize(("trust", "keys"), [(None, None), (None, []), ("trust.toml", ["a.pub"])])
def test_trust_is_a_file_or_keys_never_both_or_neither(trust: str | None,
                                                       keys: list[str] | None) -> None:
    with pytest.raises(OptionError) as caught:
        check_trust_options(trust, keys)
    assert caught.value.option == "--trusted-key / --trust"
    assert caught.value.message == "give --trusted-key PUB... or --trust FILE (one of them)"


def test_a_verify_request_holds_one_kind_of_trust() -> None:
    assert VerifyRequest("pkg", trust="trust.toml").trusted_keys == ()
    assert VerifyRequest("pkg", trusted_keys=("a.pub", "b.pub")).trust is None
    with pytest.raises(OptionError):
        VerifyRequest("pkg")
