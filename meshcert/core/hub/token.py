"""The Hub token huggingface_hub would send, and a redactor that hides it."""

from __future__ import annotations

from meshcert.core.hub.errors import Redactor


def stored_token() -> str | None:
    """huggingface_hub's own token (HF_TOKEN, else the stored login); None when there is none
    or it cannot be read (the access check says why)."""
    try:
        from huggingface_hub import get_token

        return get_token()
    except Exception:  # no token store, an unreadable token file: nothing to redact
        return None


def token_redactor(token: str | None = None) -> Redactor:
    """Hides `token` (None: the stored one) in any text that quotes it."""
    return Redactor([token or stored_token()])
