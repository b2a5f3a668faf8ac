"""Keep secrets (HF_TOKEN, endpoint API keys) out of reports, details, exceptions and logs.

One Redactor serves the Hub source, the runtime gates and the service's crash containment:
anything written that came from outside (an error body, an exception message) passes through it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

MASK = "***"
_BEARER = re.compile(r"(?i)(bearer\s+)\S+")
_HF_TOKEN = re.compile(r"\bhf_[A-Za-z0-9]{8,}")


class Redactor:
    """Replaces every known spelling of each secret with `***`, plus anything shaped like a
    bearer credential or a Hugging Face token.

    Spellings covered: raw, JSON-escaped, URL-quoted (both flavours), repr-escaped. A secret of
    any length is scrubbed, even if that garbles text that happens to contain it.
    """

    def __init__(self, secrets: str | Iterable[str | None] | None = None) -> None:
        values = [secrets] if isinstance(secrets, str) else list(secrets or [])
        forms: set[str] = set()
        for secret in values:
            if secret:
                forms |= {secret, json.dumps(secret)[1:-1], quote(secret, safe=""),
                          quote_plus(secret), repr(secret)[1:-1]}
        # longest first, so a longer spelling is not half-replaced by a shorter one
        self._forms = sorted((f for f in forms if f), key=len, reverse=True)

    def scrub(self, text: str) -> str:
        for form in self._forms:
            text = text.replace(form, MASK)
        text = _BEARER.sub(rf"\1{MASK}", text)
        return _HF_TOKEN.sub(f"hf_{MASK}", text)

    __call__ = scrub

    def scrub_optional(self, text: str | None) -> str | None:
        return None if text is None else self.scrub(text)
