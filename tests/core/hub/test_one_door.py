"""One door to the Hub: no module outside meshcert/core/hub/ builds a huggingface_hub client or
calls one of its module-level API functions (hf_hub_download, list_repo_tree, create_repo,
run_job, ...). Those go through `meshcert.core.hub.api.HubApi`, which retries within a bounded
budget, maps errors to HubError, redacts the token and counts every request.

Read from the source of every module (as tests/test_import_graph.py reads imports), so a call
that no test happens to reach is caught too. Names that make no request (`get_token`,
`CommitOperationAdd`, `Volume`, the error classes, `RepoFile`) stay usable anywhere; an import
of a client name under `if TYPE_CHECKING:` (for an annotation) never runs and is allowed.
"""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path

import huggingface_hub
import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "meshcert"
DOOR = PACKAGE / "core" / "hub"
# huggingface_hub's module-level API functions are its HfApi methods, bound to a default client
CLIENT_NAMES = frozenset(
    {"HfApi", "HfFileSystem", "InferenceClient", "AsyncInferenceClient"}
    | {name for name in dir(huggingface_hub)
       if not name.startswith("_") and callable(getattr(huggingface_hub, name, None))
       and hasattr(huggingface_hub.HfApi, name)})
SUBMODULES = frozenset(m.name for m in pkgutil.iter_modules(huggingface_hub.__path__))


def _is_hub_module(name: str | None) -> bool:
    return name is not None and (name == "huggingface_hub"
                                 or name.startswith("huggingface_hub."))


def _type_checking_nodes(tree: ast.AST) -> set[ast.AST]:
    out: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                out.update(ast.walk(child))
    return out


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def door_violations(source: str, where: str) -> list[str]:
    """Every place in `source` that builds a Hub client or calls the client's API directly."""
    tree = ast.parse(source)
    type_only = _type_checking_nodes(tree)
    modules: set[str] = set()  # local names bound to huggingface_hub or one of its modules
    clients: dict[str, str] = {}  # local name -> the client name it was imported as
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_hub_module(alias.name):
                    modules.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and _is_hub_module(node.module):
            for alias in node.names:
                local = alias.asname or alias.name
                if alias.name in CLIENT_NAMES:
                    clients[local] = alias.name
                    if node not in type_only:
                        found.append(f"{where}:{node.lineno} imports {alias.name} from "
                                     f"{node.module}")
                elif alias.name in SUBMODULES:
                    modules.add(local)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in clients:
            found.append(f"{where}:{node.lineno} calls {clients[func.id]}")
        elif isinstance(func, ast.Attribute) and func.attr in CLIENT_NAMES \
                and _root_name(func.value) in modules:
            found.append(f"{where}:{node.lineno} calls {ast.unparse(func)}")
    return found


def test_the_scan_knows_the_client_and_its_module_level_calls() -> None:
    for name in ("HfApi", "hf_hub_download", "snapshot_download", "list_repo_tree",
                 "create_repo", "create_commit", "run_job", "whoami", "dataset_info"):
        assert name in CLIENT_NAMES
    for harmless in ("get_token", "CommitOperationAdd", "Volume", "constants"):
        assert harmless not in CLIENT_NAMES


@pytest.mark.parametrize("source", [
    "from huggingface_hub import HfApi\napi = HfApi(endpoint='x')\n",
    "def f():\n    from huggingface_hub import hf_hub_download as get\n    return get('r', 'p')\n",
    "import huggingface_hub\nhuggingface_hub.list_repo_tree('r')\n",
    "import huggingface_hub as hh\nhh.hf_api.HfApi()\n",
    "from huggingface_hub import hf_api\nhf_api.HfApi()\n",
    "from huggingface_hub.file_download import hf_hub_download\n",
    "from huggingface_hub import run_job\n",
])
def test_a_client_built_or_called_outside_the_door_is_found(source: str) -> None:
    assert door_violations(source, "example.py")


@pytest.mark.parametrize("source", [
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from huggingface_hub import HfApi\n"
    "def f(api: HfApi) -> None:\n    api.list_repo_tree('r')\n",
    "from huggingface_hub import get_token, CommitOperationAdd, Volume\nget_token()\n",
    "from huggingface_hub.errors import RevisionNotFoundError\n",
    "hub.call('whoami', lambda api: api.whoami())\n",
])
def test_what_makes_no_request_or_goes_through_the_door_is_allowed(source: str) -> None:
    assert door_violations(source, "example.py") == []


def test_no_module_outside_core_hub_builds_a_hub_client() -> None:
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if DOOR in path.parents:
            continue
        found += door_violations(path.read_text(encoding="utf-8"),
                                 path.relative_to(ROOT).as_posix())
    assert found == [], "go through meshcert.core.hub.api.HubApi:\n" + "\n".join(found)


def test_the_door_itself_builds_the_client() -> None:
    """The scan is not vacuous: it finds the one place that does build a client."""
    source = (DOOR / "api.py").read_text(encoding="utf-8")
    assert door_violations(source, "meshcert/core/hub/api.py")
