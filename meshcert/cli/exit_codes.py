"""Exit statuses of the certification commands (certification.md): 0 passed, 1 failed,
2 usage error (typer's own), 3 incomplete."""

EXIT_CODES = {"passed": 0, "failed": 1, "incomplete": 3}
