"""meshcert.core.errors: one base that carries each error's kind and exit status, and one
Refused for every refusal before work."""

from __future__ import annotations

from meshcert.core.errors import ErrorKind, MeshcertError, Refused


def test_a_refusal_keeps_its_message_and_code() -> None:
    refused = Refused("tiny.gguf: no such file", code="usage")
    assert (str(refused), refused.message, refused.code) == (
        "tiny.gguf: no such file", "tiny.gguf: no such file", "usage")
    assert refused.kind is ErrorKind.REFUSAL and refused.exit_status == 2
    assert Refused("no token").code is None


def test_an_error_without_a_kind_of_its_own_is_a_failure() -> None:
    class Broken(MeshcertError):
        pass

    assert Broken("x").kind is ErrorKind.FAILURE and Broken("x").exit_status == 1


def test_an_instance_may_narrow_its_kind() -> None:
    from meshcert.catalog.errors import CatalogError

    assert CatalogError("not a catalog").kind is ErrorKind.USAGE
    unread = CatalogError("the catalog could not be read", incomplete=True)
    assert (unread.kind, unread.exit_status) == (ErrorKind.INCOMPLETE, 3)


def test_an_aborted_write_is_a_failure_that_exits_2() -> None:
    # issue 22: a write aborted by its hook exits 2, as a refusal does (no manifest written)
    from meshcert.writer.errors import Aborted

    aborted = Aborted("hook_failed", "--after-artifact-command exited with status 1")
    assert (aborted.kind, aborted.exit_status) == (ErrorKind.FAILURE, 2)
