"""Nothing outside meshcert/certify/workers runs llama.cpp code: no module imports `llama_cpp` or
loads
a ggml library with ctypes. A native fault then can only ever kill a worker. (`ctypes.CDLL(None)`,
the process's own C library, loads nothing: the serve workers' prctl uses it.)"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PRODUCT = sorted((ROOT / "meshcert").rglob("*.py"))
WORKERS = ROOT / "meshcert" / "certify" / "workers"


def _own_symbols(tree: ast.AST) -> set[int]:
    """`ctypes.CDLL(None)`: the process's own symbols (libc's prctl, say), no library loaded;
    the ids of those calls' `CDLL` attributes."""
    return {id(node.func) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "CDLL" and len(node.args) == 1
            and isinstance(node.args[0], ast.Constant) and node.args[0].value is None}


def _llama_uses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = _own_symbols(tree)
    uses = []
    for node in ast.walk(tree):
        if id(node) in own:
            continue
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


def test_the_process_s_own_c_library_is_not_a_library_load(tmp_path: Path) -> None:
    """prctl through `CDLL(None)` is allowed; any named library is not."""
    source = tmp_path / "m.py"
    source.write_text("import ctypes\nctypes.CDLL(None).prctl(1, 9)\n")
    assert _llama_uses(source) == []
    source.write_text("import ctypes\nctypes.CDLL('libggml.so')\n")
    assert _llama_uses(source) == ["ctypes.CDLL"]
