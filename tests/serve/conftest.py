"""Fixtures for `meshcert serve`: the in-repo Hub (webhooks, discussions) and a rig around it."""

from __future__ import annotations

from tests.support.hub_env import prepare_process_env

prepare_process_env()  # before anything imports huggingface_hub

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from tests.support.catalog_packages import PackageShelf  # noqa: E402
from tests.support.hub_fixture import hub  # noqa: E402, F401
from tests.support.hub_server import FakeHub  # noqa: E402
from tests.support.serve_rig import ServeRig  # noqa: E402

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


@pytest.fixture
def rig(hub: FakeHub, tmp_path: Path) -> ServeRig:  # noqa: F811
    return ServeRig(hub, tmp_path / "serve")


@pytest.fixture
def shelf(tmp_path: Path) -> Iterator[PackageShelf]:
    shelf = PackageShelf(tmp_path / "packages")
    yield shelf
