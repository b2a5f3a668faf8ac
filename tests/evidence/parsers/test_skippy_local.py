"""local-single / local-split-compare (spec section 3); fixtures derived by hand."""

from __future__ import annotations

from tests.evidence.parsers.helpers import ingest, values


def test_split_compare_is_parity_plus_boundary_bytes() -> None:
    result = ingest("local-split-compare.json")
    table = result.table
    parity = table[table.kind == "mesh_parity"].iloc[0]
    assert bool(parity["passed"]) is True and parity["extra"]["pointer"] == "/matches"
    assert values(result)["wire_payload_bytes"] == (8192.0, "bytes",
                                                    "/split/boundary/wire_payload_bytes")


def test_local_single_counts() -> None:
    got = values(ingest("local-single.json"))
    assert got["spans"] == (12.0, "count", "/report_counts/spans")
