"""The usage error of a command's options, raised by the option rules that live beside each
part's request objects (`meshcert/evidence/requests.py`, `meshcert/hubjobs/requests.py`, ...).

A rule is a pure function of the option values: it returns what the command will do, or raises
`OptionError` naming the option(s) at fault, the way the CLI shows a usage error
(`Invalid value for --label: must not be blank`, exit 2). The rules are tested without the CLI.
"""

from __future__ import annotations


class OptionError(ValueError):
    """An option value, or a combination of options, a command cannot take. `option` is how the
    usage error names it (`--label`, `--html / --md / --junit / --sarif`, `SOURCE`)."""

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message)
        self.message = message
        self.option = option
