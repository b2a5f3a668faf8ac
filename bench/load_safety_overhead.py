"""Cost of the load-safety checks (chat_templates, tokenizer, tokenizer_copies), side by side.

A generated llama package whose every fragment repeats the tokenizer and the chat template (as
v1 writers do) is loaded (headers read, every artifact hashed) and checked, once with every
registered check and once with every check but the three load-safety ones, interleaved, best of
`--rounds`. The chat-template audit starts one sandboxed worker per distinct template, so it is
also timed alone.

    python bench/load_safety_overhead.py [--layers 16] [--rounds 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package

from meshcert.certify.chat_template.render import SPARE_WORKER  # noqa: E402
from meshcert.certify.checks import all_checks  # noqa: E402
from meshcert.certify.engine import run_checks  # noqa: E402
from meshcert.certify.sources.local import load_local_package  # noqa: E402
from meshcert.certify.view import CertOptions  # noqa: E402
from meshcert.testing import llama_spec, write_package  # noqa: E402
from tests.certify.checks.gguf_edits import (  # noqa: E402
    LOAD_SAFETY_CHECKS,
    edit_package,
    fragment_paths,
    read_gguf,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        info = write_package(llama_spec(block_count=args.layers), Path(tmp) / "pkg")
        _, meta, _ = read_gguf(info.root / "shared/metadata.gguf")
        tokenizer = {k: v for k, v in meta.items() if k.startswith("tokenizer.")}
        others = [p for p in fragment_paths(info) if p != "shared/metadata.gguf"]
        edit_package(info, lambda kv: kv.update(tokenizer), others)
        checks = all_checks()
        without = [c for c in checks if c.name not in LOAD_SAFETY_CHECKS]
        only_templates = [c for c in checks if c.name == "chat_templates"]
        best = {"all": float("inf"), "prestarted": float("inf"), "without": float("inf"),
                "templates": float("inf")}
        for _ in range(args.rounds):
            for label, selected in (("all", checks), ("prestarted", checks),
                                    ("without", without), ("templates", only_templates)):
                started = time.perf_counter()
                if label == "prestarted":  # as certify_package does: the render worker boots
                    SPARE_WORKER.start()   # while the package is read and hashed
                view = load_local_package(str(info.root), display_ref=str(info.root),
                                          options=CertOptions())
                run_checks(view, selected)
                best[label] = min(best[label], time.perf_counter() - started)
    print(f"{len(others) + 1} fragments, each with the tokenizer and template")
    print(f"load + all checks:                 {best['all'] * 1000:8.1f} ms")
    print(f"  the same, render worker prestarted: {best['prestarted'] * 1000:6.1f} ms")
    print(f"load + all but load-safety checks: {best['without'] * 1000:8.1f} ms")
    print(f"load + chat_templates alone:       {best['templates'] * 1000:8.1f} ms")
    print(f"ratio all / without:               {best['all'] / best['without']:8.2f}")
    print(f"ratio prestarted / without:        {best['prestarted'] / best['without']:8.2f}")


if __name__ == "__main__":
    main()
