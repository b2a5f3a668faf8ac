"""Assertions shared by the HTML tests of both report kinds: inert markup, self-contained."""

from __future__ import annotations

import re

from tests.reports.dom import Node, parse

_URL = re.compile(r"(?i)\b(?:https?:)?//[a-z0-9.-]")
_CSS_URL = re.compile(r"(?i)url\s*\(|@import")
RESOURCE_ATTRS = ("src", "href", "srcset", "action", "formaction", "data", "poster",
                  "xlink:href", "background")
EXTERNAL_TAGS = ("script", "iframe", "object", "embed", "link", "img", "video", "audio",
                 "base", "form")


_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def _relative_link(node: Node, name: str, value: str) -> bool:
    """An <a href> to a file beside the page (the catalog report's links to each package's
    cert.html): a relative path, no scheme, no host, not absolute."""
    return (node.tag == "a" and name == "href" and not _SCHEME.match(value)
            and not value.startswith(("/", "\\")) and bool(value))


def assert_self_contained(html: str, *, relative_links: bool = False) -> Node:
    """One file: no script, no resource or link leaving the page, no CSS url()/@import
    (`relative_links`: links to files beside the page are allowed, nothing else)."""
    page = parse(html)
    for tag in EXTERNAL_TAGS:
        assert not page.find_all(tag), f"<{tag}> in a self-contained report"
    for node in page.iter():
        for name, value in node.attrs.items():
            assert not name.startswith("on"), f"event handler attribute {name!r}"
            if name in RESOURCE_ATTRS and value is not None:
                assert value.startswith("#") or (relative_links and _relative_link(
                    node, name, value)), f"{name}={value!r} leaves the page"
            if name == "style" and value:
                assert not _CSS_URL.search(value)
    styles = page.find_all("style")
    assert len(styles) == 1 and styles[0].text(), "exactly one inline stylesheet"
    assert not _CSS_URL.search(styles[0].text())
    assert "http://" not in html and "https://" not in html
    assert not _URL.search(styles[0].text())
    return page


def assert_responsive_and_printable(page: Node, html: str) -> None:
    viewport = page.find("meta", name="viewport")
    assert "width=device-width" in (viewport.attrs.get("content") or "")
    css = page.find("style").text()
    assert "@media print" in css
    assert re.search(r"@media \(max-width: \d+px\)", css)
    assert page.find("html").attrs.get("lang") == "en"
    assert html.startswith("<!DOCTYPE html>")


def assert_inert(html: str, hostile: str) -> None:
    """The hostile text shows as text, escaped, and creates no element or attribute."""
    page = parse(html)
    assert not page.find_all("script")
    assert "<script>" not in html
    escaped = hostile.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert escaped.replace('"', "&#34;") in html or escaped.replace('"', "&quot;") in html
    assert hostile in page.text()
    for node in page.iter():
        assert not any(name.startswith("on") for name in node.attrs), node.attrs
