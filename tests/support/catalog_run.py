"""A real catalog run for the report tests: the test catalog (catalog_packages) published on
an in-repo Hub of its own, certified, and its per-package reports kept under an out dir."""

from __future__ import annotations

from tests.support.hub_env import close_client_session, point_at, prepare_process_env

prepare_process_env()  # before anything imports huggingface_hub

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from meshcert.catalog.report import CatalogOptions  # noqa: E402
from meshcert.catalog.run import CatalogRequest, CatalogRun, certify_catalog  # noqa: E402
from meshcert.catalog.sources import LocalCatalog  # noqa: E402
from meshcert.reports.catalog.outputs import PackageReportWriter  # noqa: E402
from tests.support.catalog_packages import (  # noqa: E402
    RUNTIME_ABI,
    build_test_catalog,
    variant,
    write_entry,
)
from tests.support.hub_server import FakeHub  # noqa: E402

HOSTILE_VARIANT = '<script>alert(1)</script>"onload=x'


def run_test_catalog(base: Path, out_dir: Path | None = None) -> CatalogRun:
    """Certify the test catalog (plus an entry whose variant name is markup)."""
    with pytest.MonkeyPatch.context() as patch, FakeHub() as hub:
        point_at(patch, hub.url, base / "hf-home", hub.sleeps)
        built = build_test_catalog(hub, base / "work")
        write_entry(built.root, "evil/model", {HOSTILE_VARIANT: variant("ns/old-v1")})
        try:
            return certify_catalog(
                LocalCatalog(built.root),
                CatalogRequest(options=CatalogOptions(runtime_abi=RUNTIME_ABI),
                               keep_reports=out_dir is not None),
                on_certified=PackageReportWriter(out_dir) if out_dir is not None else None)
        finally:
            close_client_session()
