"""The README opens with the two commands CI and a newcomer run, stays short enough to read
through, and every relative link in it and in docs/ points at a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\((?!https?://|#)([^)#\s]+)")


def test_the_readme_opens_with_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = text.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert first_block == ["python3 -m pip install . && meshcert demo", "bash scripts/test.sh"]
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_readme_is_an_overview() -> None:
    # 200 until #45 asked the top to say where the commands install and what scripts/test.sh
    # builds and installs, and how long each phase takes
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 210


def test_every_relative_link_resolves() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = [f"{page.relative_to(ROOT)} -> {target}" for page in pages
              for target in LINK.findall(page.read_text(encoding="utf-8"))
              if not (page.parent / target).exists()]
    assert broken == []
