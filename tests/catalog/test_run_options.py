"""`catalog certify`'s option rules, beside its CatalogRequest, without the CLI."""

from __future__ import annotations

import pytest

from meshcert.catalog.run import (
    MAX_CONCURRENCY,
    check_attestation_options,
    check_catalog_options,
)
from meshcert.core.usage import OptionError


def test_concurrency_and_runtime_abi_within_their_rules_pass() -> None:
    check_catalog_options(1, None)
    check_catalog_options(MAX_CONCURRENCY, "0.76.2")


@pytest.mark.parametrize(("concurrency", "abi", "problem"), [
    (0, None, (f"must be within 1..{MAX_CONCURRENCY}", "--concurrency")),
    (MAX_CONCURRENCY + 1, "x", (f"must be within 1..{MAX_CONCURRENCY}", "--concurrency")),
    (4, "0.76.2-rc1", ("must be major.minor[.patch]", "--runtime-abi")),
])
def test_each_rule_names_its_option(concurrency: int, abi: str | None,
                                    problem: tuple[str, str]) -> None:
    with pytest.raises(OptionError) as caught:
        check_catalog_options(concurrency, abi)
    assert (caught.value.message, caught.value.option) == problem


def test_trust_attested_needs_a_trust_policy() -> None:
    check_attestation_options(None, False)
    check_attestation_options("trust.toml", True)
    with pytest.raises(OptionError) as caught:
        check_attestation_options(None, True)
    assert (caught.value.message, caught.value.option) == (
        "needs --trust FILE (whose signers to accept)", "--trust-attested")
