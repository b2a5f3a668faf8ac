"""Before work that writes to the Hub or runs jobs there: is there a token, does the Hub answer,
and may the token write the target? Asked first, so a missing or read-only token, or a Hub that
cannot be reached, is one clear refusal before anything is hashed, certified or paid for.

Every question has one bounded retry budget (`PREFLIGHT_SETTINGS`: three attempts, a few
seconds of waiting in all, each attempt cut off after `timeout_s`), never minutes. A local
problem (no token, an empty or unreadable token file, an HF_TOKEN of blanks) is not a Hub call
and is never retried. Whatever goes wrong is a `Refused` (meshcert.core.errors) whose message
says what to do.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from meshcert.core.errors import Refused
from meshcert.core.hub.deadline import run_with_deadline
from meshcert.core.hub.errors import NO_TOKEN_MESSAGE, HubError, Redact, from_exception
from meshcert.core.hub.retry import Sleep, call_with_retries, default_sleep
from meshcert.core.hub.settings import HubSettings

if TYPE_CHECKING:
    from huggingface_hub import HfApi

T = TypeVar("T")
RepoType = Literal["model", "dataset"]
TOKEN_VARIABLES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
PREFLIGHT_SETTINGS = HubSettings(timeout_s=10.0, max_retries=2, backoff_base_s=1.0,
                                 backoff_cap_s=2.0, max_retry_after_s=4.0)


def find_token(explicit: str | None = None) -> str:
    """The token huggingface_hub would send (`explicit`, else HF_TOKEN, else the stored
    login), or Refused naming what is missing or unusable. An HF_TOKEN that is set to
    blanks is refused rather than silently replaced by the stored login."""
    if explicit is not None:
        if explicit.strip():
            return explicit.strip()
        raise Refused("the token given is empty")
    for name in TOKEN_VARIABLES:
        value = os.environ.get(name)
        if value:  # "" counts as unset, as huggingface_hub counts it
            if not value.strip():
                raise Refused(f"{name} is set but holds only blanks: set it to a token "
                                    "(or unset it to use the stored `hf auth login`)")
            break
    from huggingface_hub import constants, get_token

    path = constants.HF_TOKEN_PATH
    try:
        token = get_token()
    except OSError as exc:
        raise Refused(f"cannot read the stored token file {path} "
                            f"({exc.strerror or type(exc).__name__}): fix its permissions, "
                            "run `hf auth login`, or set HF_TOKEN") from None
    except Exception as exc:  # e.g. HF_OIDC_RESOURCE set and the exchange failed
        raise Refused(f"getting a Hugging Face token failed ({type(exc).__name__}): "
                            f"{exc}") from None
    if token:
        return token
    if os.path.isfile(path):
        raise Refused(f"the stored token file {path} is empty: run `hf auth login`, "
                            "or set HF_TOKEN")
    raise Refused(NO_TOKEN_MESSAGE)


def _ask(action: str, call: Callable[[], T], *, redact: Redact, settings: HubSettings,
         sleep: Sleep) -> T:
    return call_with_retries(
        lambda: run_with_deadline(call, settings.timeout_s),
        classify=lambda exc: from_exception(exc, action=action, redact=redact),
        settings=settings, sleep=sleep)


def _unreachable(endpoint: str, error: HubError) -> Refused:
    return Refused(f"the Hub at {endpoint} cannot be reached ({error.message}); nothing "
                         "was started: try again later, or check HF_ENDPOINT and the network")


def identify(api: HfApi, token: str, *, endpoint: str, redact: Redact,
             settings: HubSettings = PREFLIGHT_SETTINGS, sleep: Sleep = default_sleep
             ) -> dict[str, Any]:
    """`whoami` for `token`: who it is and what it may do."""
    try:
        answer: dict[str, Any] = _ask("whoami", lambda: api.whoami(token=token),
                                      redact=redact, settings=settings, sleep=sleep)
    except HubError as exc:
        if exc.code == "hub_unauthorized":
            raise Refused(f"the Hub at {endpoint} does not accept this token ("
                                f"{exc.message}): set HF_TOKEN to a valid token, or run "
                                "`hf auth login`") from None
        raise _unreachable(endpoint, exc) from None
    return answer


def token_role(whoami: dict[str, Any]) -> str:
    access = (whoami.get("auth") or {}).get("accessToken") or {}
    return str(access.get("role") or "unknown")


def may_write(whoami: dict[str, Any], namespace: str) -> bool:
    """Whether the token `whoami` describes may create and push repos in `namespace`."""
    access = ((whoami.get("auth") or {}).get("accessToken") or {})
    role = access.get("role")
    if role == "fineGrained":
        for scope in (access.get("fineGrained") or {}).get("scoped") or []:
            entity = scope.get("entity") or {}
            if entity.get("name") == namespace and "repo.write" in (scope.get("permissions")
                                                                     or []):
                return True
        return False
    if role != "write":
        return False
    if whoami.get("name") == namespace:
        return True
    return any(o.get("name") == namespace and o.get("roleInOrg") in ("write", "admin")
               for o in whoami.get("orgs") or [])


def check_write(api: HfApi, token: str, whoami: dict[str, Any], repo_id: str, *,
                endpoint: str, redact: Redact, repo_type: RepoType = "model",
                pull_request: bool = False, settings: HubSettings = PREFLIGHT_SETTINGS,
                sleep: Sleep = default_sleep) -> None:
    """Refused unless `token` may write `repo_id` (the Hub's auth-check), or may create
    it when it does not exist yet. `pull_request`: reading an existing repo is enough (anyone
    who can read it may open a pull request)."""
    user = whoami.get("name")
    kind = f"{token_role(whoami)} token"
    try:
        _ask(f"auth-check {repo_id}", lambda: api.auth_check(
            repo_id, repo_type=repo_type, token=token, write=not pull_request),
            redact=redact, settings=settings, sleep=sleep)
        return
    except HubError as exc:
        error = exc
    namespace = repo_id.split("/")[0]
    if error.code == "hub_repo_not_found":  # not there yet (or private and not shown to us)
        if may_write(whoami, namespace):
            return
        raise Refused(f"{repo_id} does not exist and the {kind} of {user!r} cannot "
                            f"create repos in {namespace!r}: use a write token for "
                            f"{namespace!r}, or another --target") from None
    if error.code in ("hub_unauthorized", "hub_gated", "hub_disabled"):
        answer = f"HTTP {error.status}" if error.status else error.code
        raise Refused(f"the {kind} of {user!r} cannot write to {repo_id} (the Hub "
                            f"answered {answer}): use a write token for {namespace!r}, or "
                            "another --target") from None
    raise _unreachable(endpoint, error) from None
