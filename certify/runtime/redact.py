"""Keep the API key out of reports, details, exception text and logs.

Anything a gate writes that came from outside (an error body, an exception message) passes
through `Redactor.scrub`, and `run_runtime_gates` scrubs every string field once more at the end.
"""

from __future__ import annotations

import json
from urllib.parse import quote, quote_plus

MASK = "***"


class Redactor:
    """Replaces every known spelling of the secret with `***`.

    Spellings covered: raw, JSON-escaped, URL-quoted (both flavours). A secret of any length
    is scrubbed, even if that garbles text that happens to contain it: leaking wins over
    readability never.
    """

    def __init__(self, secret: str | None) -> None:
        forms: set[str] = set()
        if secret:
            forms |= {secret, json.dumps(secret)[1:-1], quote(secret, safe=""),
                      quote_plus(secret), repr(secret)[1:-1]}
        # longest first, so a longer spelling is not half-replaced by a shorter one
        self._forms = sorted((f for f in forms if f), key=len, reverse=True)

    def scrub(self, text: str) -> str:
        for form in self._forms:
            text = text.replace(form, MASK)
        return text

    def scrub_optional(self, text: str | None) -> str | None:
        return None if text is None else self.scrub(text)
