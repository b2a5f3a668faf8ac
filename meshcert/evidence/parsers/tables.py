"""Print the format tables of docs/evidence.md from the registry:
`python -m meshcert.evidence.parsers.tables` (tests/evidence/parsers/test_registry.py checks the
docs hold exactly these)."""

from __future__ import annotations

import sys

from meshcert.evidence.parsers.registry import formats_table, mesh_table


def main() -> None:
    sys.stdout.write(formats_table() + "\n" + mesh_table())


if __name__ == "__main__":
    main()
