"""A tiny DOM built with the stdlib html.parser, enough for structure assertions."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)
    parent: Node | None = None

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        """Text content, whitespace collapsed."""
        parts: list[str] = []

        def walk(node: Node) -> None:
            for child in node.children:
                if isinstance(child, str):
                    parts.append(child)
                else:
                    walk(child)

        walk(self)
        return " ".join("".join(parts).split())

    def iter(self) -> Iterator[Node]:
        for child in self.children:
            if isinstance(child, Node):
                yield child
                yield from child.iter()

    def find_all(self, tag: str | None = None, *, cls: str | None = None,
                 where: Callable[[Node], bool] | None = None, **attrs: str) -> list[Node]:
        found = []
        for node in self.iter():
            if tag is not None and node.tag != tag:
                continue
            if cls is not None and cls not in node.classes:
                continue
            if any(node.attrs.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            if where is not None and not where(node):
                continue
            found.append(node)
        return found

    def find(self, tag: str | None = None, **kwargs: object) -> Node:
        found = self.find_all(tag, **kwargs)  # type: ignore[arg-type]
        assert found, f"no <{tag}> matching {kwargs}"
        return found[0]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document")
        self.current = self.root
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs), parent=self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.current.children.append(Node(tag, dict(attrs), parent=self.current))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if self.current.tag != tag:
            self.errors.append(f"</{tag}> closes <{self.current.tag}>")
            node: Node | None = self.current
            while node is not None and node.tag != tag:
                node = node.parent
            if node is None:
                return
            self.current = node
        assert self.current.parent is not None
        self.current = self.current.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse(html: str) -> Node:
    """Parse and check the markup is balanced (every element closed where it was opened)."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    assert not builder.errors, builder.errors[:5]
    assert builder.current is builder.root, f"unclosed <{builder.current.tag}>"
    return builder.root
