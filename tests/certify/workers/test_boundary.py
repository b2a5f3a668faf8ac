"""Nothing outside meshcert/certify/workers runs llama.cpp code: no module imports `llama_cpp` or
loads
a ggml library with ctypes. A native fault then can only ever kill a worker."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PRODUCT = sorted((ROOT / "meshcert").rglob("*.py"))
WORKERS = ROOT / "meshcert" / "certify" / "workers"


def _llama_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            uses += [a.name for a in node.names if a.name.split(".")[0] == "llama_cpp"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "llama_cpp":
            uses.append(node.module or "")
        elif isinstance(node, ast.Attribute) and node.attr in ("CDLL", "cdll", "LoadLibrary"):
            uses.append(f"ctypes.{node.attr}")
    return uses


def test_only_the_workers_package_touches_llama_cpp() -> None:
    outside = {str(p.relative_to(ROOT)): uses for p in PRODUCT
               if WORKERS not in p.parents and (uses := _llama_uses(p))}
    assert outside == {}


def test_the_workers_that_load_llama_cpp_are_scripts_run_as_children() -> None:
    """Inside the package only the two worker scripts load llama.cpp; the rest talk to them."""
    loaders = sorted(p.name for p in WORKERS.glob("*.py") if _llama_uses(p))
    assert loaders == ["llama_decode_worker.py", "llama_gguf_worker.py"]
