"""Every Hub call the service makes, through the one door (meshcert.core.hub.api.HubApi): each
is gated, retried on 429/5xx within the settings' budget, and fails as a HubError whose text
holds no token. The service's own identity (`whoami`) is asked once, to find its comments."""

from __future__ import annotations

import tempfile
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meshcert.core.hub.api import HubApi
from meshcert.core.hub.errors import UNREACHABLE, HubError
from meshcert.core.hub.settings import HubSettings
from meshcert.core.refs import FULL_SHA

if TYPE_CHECKING:
    from huggingface_hub import DiscussionWithDetails

WRITE_ROLES = frozenset({"write", "admin"})


@dataclass(frozen=True)
class Comment:
    id: str
    author: str
    content: str


class ServeHub:
    def __init__(self, settings: HubSettings | None = None, token: str | None = None) -> None:
        self.settings = settings or HubSettings.from_env()
        self.api = HubApi(self.settings, token=token, follow_causes=True)
        self._me: str | None = None
        self._me_lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return self.settings.endpoint

    def me(self) -> str:
        """The service's own user name (asked once)."""
        with self._me_lock:
            if self._me is None:
                self._me = self.api.identify().name
            return self._me

    def resolve(self, repo: str, repo_type: str, revision: str | None) -> str:
        """The commit `revision` points at now, asked of the Hub (never read from a payload)."""
        if repo_type == "model":
            return self.api.resolve(repo, revision, listing=False).commit
        where = f"{repo}@{revision}" if revision else repo
        info = self.api.call(f"dataset_info {where}", lambda api: api.dataset_info(
            repo, revision=revision))
        sha = str(getattr(info, "sha", "") or "").lower()
        if not FULL_SHA.match(sha):
            raise HubError(UNREACHABLE, f"dataset_info {where}: the Hub gave no commit id")
        return sha

    def discussion(self, repo: str, repo_type: str, num: int) -> DiscussionWithDetails:
        return self.api.call(f"get_discussion_details {repo}#{num}", lambda api:
                             api.get_discussion_details(repo, num, repo_type=repo_type))

    def comments(self, repo: str, repo_type: str, num: int) -> list[Comment]:
        details = self.discussion(repo, repo_type, num)
        return [Comment(e.id, e.author, getattr(e, "content", "") or "")
                for e in details.events if e.type == "comment"]

    def post_comment(self, repo: str, repo_type: str, num: int, text: str) -> str:
        posted = self.api.call(f"comment_discussion {repo}#{num}", lambda api:
                               api.comment_discussion(repo, num, text, repo_type=repo_type))
        return str(posted.id)

    def edit_comment(self, repo: str, repo_type: str, num: int, comment_id: str,
                     text: str) -> None:
        self.api.call(f"edit_discussion_comment {repo}#{num}", lambda api:
                      api.edit_discussion_comment(repo, num, comment_id, text,
                                                  repo_type=repo_type))

    def read_file(self, repo: str, repo_type: str, path: str, commit: str) -> bytes | None:
        """A file's bytes at `commit`, None when the commit has no such file."""
        listed = self.api.call(f"get_paths_info {repo}@{commit} {path}", lambda api:
                               api.get_paths_info(repo, [path], revision=commit,
                                                  repo_type=repo_type))
        if not listed:
            return None
        with tempfile.TemporaryDirectory(prefix="meshcert-serve-") as cache:
            local = self.api.call(f"download {repo}@{commit}/{path}", lambda api:
                                  api.hf_hub_download(repo, path, repo_type=repo_type,
                                                      revision=commit, cache_dir=cache))
            return Path(str(local)).read_bytes()

    def upload(self, repo: str, repo_type: str, path: str, data: bytes, message: str) -> str:
        """Commit `data` at `path` on main of `repo`; the commit's id."""
        info = self.api.call(f"upload {repo}/{path}", lambda api: api.upload_file(
            path_or_fileobj=data, path_in_repo=path, repo_id=repo, repo_type=repo_type,
            commit_message=message))
        return str(getattr(info, "oid", "") or "")

    def has_discussion(self, repo: str, title: str, author: str) -> bool:
        """Whether `author` opened a discussion titled `title` on `repo` (open or closed)."""
        found = self.api.call(f"get_repo_discussions {repo}", lambda api: list(
            api.get_repo_discussions(repo, author=author)))
        return any(d.title == title and d.author == author for d in found)

    def create_discussion(self, repo: str, title: str, body: str) -> int:
        made = self.api.call(f"create_discussion {repo}", lambda api: api.create_discussion(
            repo, title, description=body))
        return int(made.num)

    def may_write(self, repo: str, user: str) -> bool:
        """Whether `user` may write to `repo`: its own namespace, or an org where the Hub
        lists the user with the write or admin role."""
        namespace = repo.split("/")[0]
        if user.lower() == namespace.lower():
            return True
        members: list[Any] = self.api.call(f"list_organization_members {namespace}", lambda
                                           api: list(api.list_organization_members(namespace)))
        for member in members:
            if str(getattr(member, "username", "")).lower() == user.lower():
                return str(getattr(member, "role", "") or "") in WRITE_ROLES
        return False


def quick_settings(settings: HubSettings, *, max_retries: int, backoff_s: float
                   ) -> HubSettings:
    return replace(settings, max_retries=max_retries, backoff_base_s=backoff_s,
                   backoff_cap_s=max(backoff_s, backoff_s * 4))
