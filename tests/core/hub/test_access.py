"""The access check asked before a publish or a job (meshcert.core.hub.access), against the
in-repo Hub through the real huggingface_hub client: a token, a Hub that answers, the right to
write the target. Attempts are counted (the Hub's request log, the recorded backoff sleeps),
never timed."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from meshcert.core.hub.access import (
    PREFLIGHT_SETTINGS,
    Refused,
    check_write,
    find_token,
    identify,
)
from meshcert.core.hub.errors import from_exception
from meshcert.core.hub.retry import call_with_retries
from meshcert.core.hub.settings import HubSettings
from tests.support.hub_server import FakeHub

WRITER = "hf_alice_writes_0123456789"
READER = "hf_alice_reads_0123456789"
STRANGER = "hf_carol_0123456789"


def _same(text: str) -> str:
    return text


def closed_port_url() -> str:
    """An endpoint on 127.0.0.1 where nothing listens: connections are refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def api(endpoint: str):
    from huggingface_hub import HfApi

    return HfApi(endpoint=endpoint)


@pytest.fixture
def tokens(hub: FakeHub) -> FakeHub:
    hub.add_token(WRITER, user="alice", orgs={"meshllm": "write"})
    hub.add_token(READER, user="alice", orgs={"meshllm": "write"}, role="read")
    hub.add_token(STRANGER, user="carol")
    return hub


# --- the token, found on this machine: never a Hub call, never retried ----------------------
def test_no_token_at_all_says_how_to_get_one(hub: FakeHub) -> None:
    with pytest.raises(Refused, match=r"set HF_TOKEN, or run `hf auth login`"):
        find_token()
    assert hub.count() == 0


def test_an_hf_token_of_blanks_is_refused_not_replaced(hub: FakeHub,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    Path(constants.HF_TOKEN_PATH).write_text(WRITER)  # a stored login is not used instead
    monkeypatch.setenv("HF_TOKEN", "  \t ")
    with pytest.raises(Refused, match="HF_TOKEN is set but holds only blanks"):
        find_token()


def test_an_empty_token_file_is_named(hub: FakeHub) -> None:
    from huggingface_hub import constants

    Path(constants.HF_TOKEN_PATH).write_text("\n")
    with pytest.raises(Refused, match="stored token file .* is empty"):
        find_token()


def test_an_unreadable_token_file_is_named(hub: FakeHub) -> None:
    from huggingface_hub import constants

    Path(constants.HF_TOKEN_PATH).mkdir()  # a directory where the file should be
    with pytest.raises(Refused, match="cannot read the stored token file"):
        find_token()


def test_the_stored_login_and_hf_token_are_found(hub: FakeHub,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    Path(constants.HF_TOKEN_PATH).write_text(READER + "\n")
    assert find_token() == READER
    monkeypatch.setenv("HF_TOKEN", WRITER)
    assert find_token() == WRITER


def test_a_missing_token_inside_a_retried_call_fails_at_the_first_attempt(
        hub: FakeHub) -> None:
    """The client raises LocalTokenNotFoundError (an OSError) before sending anything: it was
    retried like a dropped connection (15.7 s for `meshcert job list`)."""
    attempts: list[int] = []
    client = api(hub.url)

    def attempt() -> object:
        attempts.append(1)
        return client.whoami()

    with pytest.raises(Exception) as caught:
        call_with_retries(attempt, settings=HubSettings(),
                          classify=lambda exc: from_exception(exc, action="whoami",
                                                              redact=_same))
    assert attempts == [1] and hub.sleeps == [] and hub.count() == 0
    assert str(caught.value) == "whoami: no Hugging Face token: set HF_TOKEN, or run " \
        "`hf auth login`"


def test_a_local_file_error_is_not_retried() -> None:
    error = from_exception(FileNotFoundError(2, "No such file", "/tmp/x"), action="upload",
                           redact=_same)
    assert not error.retryable and "on this machine" in error.message
    assert from_exception(ConnectionResetError(), action="upload", redact=_same).retryable


# --- the Hub: who the token is ---------------------------------------------------------------
def test_whoami_names_the_token(tokens: FakeHub) -> None:
    answer = identify(api(tokens.url), WRITER, endpoint=tokens.url, redact=_same)
    assert answer["name"] == "alice" and tokens.count("whoami") == 1


def test_a_token_the_hub_does_not_know_is_refused_at_once(tokens: FakeHub) -> None:
    with pytest.raises(Refused, match="does not accept this token") as caught:
        identify(api(tokens.url), "hf_revoked_0123456789", endpoint=tokens.url, redact=_same)
    assert tokens.count("whoami") == 1 and tokens.sleeps == []  # a 401 is not retried
    assert "hf auth login" in caught.value.message


def test_an_unreachable_hub_is_refused_after_a_bounded_budget(hub: FakeHub) -> None:
    url = closed_port_url()
    with pytest.raises(Refused) as caught:
        identify(api(url), WRITER, endpoint=url, redact=_same)
    assert f"the Hub at {url} cannot be reached" in caught.value.message
    assert f"gave up after {PREFLIGHT_SETTINGS.max_retries + 1} attempts" in caught.value.message
    assert len(hub.sleeps) == PREFLIGHT_SETTINGS.max_retries
    assert sum(hub.sleeps) <= 5  # seconds of waiting in all, by the budget (not measured)


def test_a_hub_that_keeps_answering_503_is_asked_three_times(tokens: FakeHub) -> None:
    tokens.inject("whoami", 503, times=None)
    with pytest.raises(Refused, match="cannot be reached"):
        identify(api(tokens.url), WRITER, endpoint=tokens.url, redact=_same)
    assert tokens.count("whoami") == PREFLIGHT_SETTINGS.max_retries + 1


# --- the right to write the target -----------------------------------------------------------
def _check(hub: FakeHub, token: str, repo: str, **kwargs: object) -> None:
    client = api(hub.url)
    whoami = identify(client, token, endpoint=hub.url, redact=_same)
    check_write(client, token, whoami, repo, endpoint=hub.url, redact=_same,
                **kwargs)  # type: ignore[arg-type]


def test_a_writer_may_create_in_its_org_and_write_an_existing_repo(tokens: FakeHub) -> None:
    _check(tokens, WRITER, "meshllm/new-layers")  # not there yet: alice may create it
    tokens.commit("meshllm/there", {"README.md": b"# there\n"})
    _check(tokens, WRITER, "meshllm/there")
    assert tokens.count("auth_check") == 2 and tokens.count("create_repo") == 0


def test_a_read_token_is_refused_even_in_its_own_namespace(tokens: FakeHub) -> None:
    with pytest.raises(Refused, match="read token of 'alice' cannot create repos"):
        _check(tokens, READER, "alice/new-layers")
    tokens.commit("alice/there", {"README.md": b"# there\n"})
    with pytest.raises(Refused, match=r"read token of 'alice' cannot write to "
                       r"alice/there \(the Hub answered HTTP 403\)"):
        _check(tokens, READER, "alice/there")


def test_another_namespace_is_refused(tokens: FakeHub) -> None:
    tokens.commit("meshllm/there", {"README.md": b"# there\n"})
    with pytest.raises(Refused, match="'carol' cannot write to meshllm/there"):
        _check(tokens, STRANGER, "meshllm/there")


def test_a_pull_request_needs_read_access_only(tokens: FakeHub) -> None:
    tokens.commit("meshllm/there", {"README.md": b"# there\n"})
    _check(tokens, STRANGER, "meshllm/there", pull_request=True)
    with pytest.raises(Refused, match="cannot create repos in 'meshllm'"):
        _check(tokens, STRANGER, "meshllm/absent", pull_request=True)
