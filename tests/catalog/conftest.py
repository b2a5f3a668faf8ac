"""Fixtures for the catalog certification tests: the in-repo Hub and a catalog on it."""

from __future__ import annotations

from tests.support.hub_env import prepare_process_env

prepare_process_env()  # before anything imports huggingface_hub

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from tests.support.catalog_packages import CatalogFixture, build_test_catalog  # noqa: E402
from tests.support.hub_fixture import hub  # noqa: E402, F401
from tests.support.hub_server import FakeHub  # noqa: E402


@pytest.fixture
def published_catalog(hub: FakeHub, tmp_path: Path) -> CatalogFixture:  # noqa: F811
    """The dozen-package catalog of tests.support.catalog_packages, published on `hub`."""
    built = build_test_catalog(hub, tmp_path / "catalog-work")
    hub.reset_counters()
    return built
