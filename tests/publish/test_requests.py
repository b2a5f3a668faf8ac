"""What a publish is asked: the rules of `package write --publish`'s options, without the CLI."""

from __future__ import annotations

import pytest

from meshcert.core.usage import OptionError
from meshcert.publish.requests import PublishWhileWriting


def test_with_a_target_every_option_goes() -> None:
    PublishWhileWriting("ns/repo", delete_after_upload=True, private=True, catalog="ns/cat",
                        experimental=True, attest_key="me.key").check()
    PublishWhileWriting(None).check()  # nothing asked: nothing to refuse


@pytest.mark.parametrize(("options", "flag"), [
    (PublishWhileWriting(None, delete_after_upload=True), "--delete-after-upload"),
    (PublishWhileWriting(None, private=True), "--private"),
    (PublishWhileWriting(None, catalog="ns/cat"), "--catalog"),
    (PublishWhileWriting(None, experimental=True), "--experimental"),
    (PublishWhileWriting(None, attest_key="me.key"), "--attest-key"),
])
def test_without_a_target_each_option_is_a_usage_error(options: PublishWhileWriting,
                                                       flag: str) -> None:
    with pytest.raises(OptionError) as caught:
        options.check()
    assert (caught.value.message, caught.value.option) == (
        f"{flag} only applies with --publish", flag)
