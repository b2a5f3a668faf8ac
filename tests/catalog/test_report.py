"""The catalog report's JSON Schema is generated from its models and checked in."""

from __future__ import annotations

import json
from pathlib import Path

from meshcert.catalog.report import catalog_report_schema
from meshcert.core.codes import CODES

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "catalog-report.schema.json"


def test_checked_in_schema_matches_the_models() -> None:
    """Regenerate with: python3 scripts/generate.py catalog-report-schema"""
    assert json.loads(SCHEMA_FILE.read_text()) == json.loads(json.dumps(catalog_report_schema()))


def test_the_schema_names_the_fields_a_reader_relies_on() -> None:
    schema = catalog_report_schema()
    package = schema["$defs"]["CatalogPackage"]["properties"]  # type: ignore[index]
    for key in ("entry", "variant", "repo", "revision", "status", "error_codes",
                "warning_codes", "cert_json", "cert_html", "mesh_llm_verdict", "requests"):
        assert key in package, key
    finding = schema["$defs"]["Finding"]  # type: ignore[index]
    catalog_codes = [c for c in finding["properties"]["code"]["enum"] if c.startswith("catalog_")]
    assert catalog_codes == sorted(c for c in CODES if CODES[c].group == "catalog")


def test_the_run_emits_exactly_the_catalog_group() -> None:
    from meshcert.catalog.compare import CATALOG_RUN_CODES

    assert {c for c in CODES if CODES[c].group == "catalog"} == CATALOG_RUN_CODES
