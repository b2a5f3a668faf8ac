"""The catalog report fixture: one real run of the test catalog, its files in an out dir."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from meshcert.catalog.report import CatalogReport
from meshcert.reports.catalog.outputs import write_catalog_reports
from tests.support.catalog_run import run_test_catalog


@dataclass
class CatalogOut:
    report: CatalogReport
    out_dir: Path


@pytest.fixture(scope="session")
def catalog_out(tmp_path_factory: pytest.TempPathFactory) -> CatalogOut:
    base = tmp_path_factory.mktemp("catalog-report")
    out_dir = base / "out"
    run = run_test_catalog(base, out_dir)
    write_catalog_reports(run.report, out_dir=out_dir)
    return CatalogOut(run.report, out_dir)
