"""check_catalog: the `package job` pre-flight of the catalog its job adds the entry to. The
whoami answers are shaped by hand after the Hub's /api/whoami-v2 (role read/write/fineGrained)."""

from __future__ import annotations

from typing import Any

import pytest

from meshcert.hubjobs.package_job import Refused, check_catalog


def whoami(role: str, orgs: tuple[str, ...] = (), scoped: list[dict[str, Any]] | None = None
           ) -> dict[str, Any]:
    access: dict[str, Any] = {"role": role}
    if scoped is not None:
        access["fineGrained"] = {"scoped": scoped}
    return {"name": "alice", "orgs": [{"name": o, "roleInOrg": "write"} for o in orgs],
            "auth": {"accessToken": access}}


def test_a_write_token_of_the_catalogs_org_passes() -> None:
    check_catalog("meshllm/catalog", whoami("write", ("meshllm",)), True)


def test_a_write_token_elsewhere_may_still_open_a_pull_request() -> None:
    check_catalog("meshllm/catalog", whoami("write"), True)


def test_a_missing_catalog_is_refused() -> None:
    with pytest.raises(Refused, match="does not exist or this token cannot read it"):
        check_catalog("meshllm/catalog", whoami("write", ("meshllm",)), False)


def test_a_read_token_can_neither_push_nor_propose() -> None:
    with pytest.raises(Refused, match="neither push to it nor open a pull request"):
        check_catalog("meshllm/catalog", whoami("read"), True)


def test_a_fine_grained_token_with_discussion_write_may_propose() -> None:
    scoped = [{"entity": {"name": "alice"}, "permissions": ["discussion.write"]}]
    check_catalog("meshllm/catalog", whoami("fineGrained", scoped=scoped), True)


def test_not_a_repo_id() -> None:
    with pytest.raises(Refused, match="is not a dataset repo id"):
        check_catalog("hf://datasets/meshllm/catalog", whoami("write"), None)
