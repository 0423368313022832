"""The figures of a committee page (``hieropt report``'s report.html) read back from its
``data-key`` elements, and the check that they equal the JSON's."""

from __future__ import annotations

import html
from html.parser import HTMLParser

from hieropt.report.committee import HEADLINE, fmt_figure


class Figures(HTMLParser):
    """Every element with ``data-key``: (the ``data-alt`` of the nearest enclosing element, key) ->
    (data-value, text); the recommendation's under alt ``recommended``."""

    def __init__(self):
        super().__init__()
        self.stack: list[str | None] = []
        self.found: dict[tuple[str, str], list[str]] = {}
        self.open: list[tuple[str, str] | None] = []

    def handle_starttag(self, tag, attrs):
        """Opens an element: its alt (or its parent's) and, with ``data-key``, its figure."""
        a = dict(attrs)
        alt = "recommended" if a.get("data-recommended") else a.get("data-alt")
        self.stack.append(alt or (self.stack[-1] if self.stack else None))
        key = (self.stack[-1], a["data-key"]) if "data-key" in a else None
        if key is not None:
            self.found[key] = [a["data-value"], ""]
        self.open.append(key)

    def handle_endtag(self, tag):
        """Closes the innermost element."""
        self.stack.pop()
        self.open.pop()

    def handle_data(self, data):
        """Adds text to the innermost open figure."""
        key = next((k for k in reversed(self.open) if k is not None), None)
        if key is not None:
            self.found[key][1] += data


def page_figures(text: str) -> dict[tuple[str, str], list[str]]:
    """The figures of a committee page (:class:`Figures`)."""
    p = Figures()
    p.feed(text)
    return p.found


def same(attr: str, value) -> bool:
    """A ``data-value`` equals the JSON's value: a number exactly, a string as text, null as
    None."""
    if value is None:
        return attr == "null"
    return attr == value if isinstance(value, str) else float(attr) == value


def assert_page_equals_json(out, data: dict) -> None:
    """Every headline figure of the recommendation and of every alternative on the page equals the
    JSON's, and is written with the page's unit."""
    found = page_figures((out / "report.html").read_text())
    rows = [("recommended", data["headline"])] + [(a["key"], a) for a in data["alternatives"]]
    for alt, figs in rows:
        for key in HEADLINE:
            attr, text = found[(alt, key)]
            assert same(attr, figs[key]), (alt, key, attr, figs[key])
            assert html.unescape(text) == fmt_figure(key, figs[key])
