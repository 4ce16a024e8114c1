"""The README and docs/ link to each other: every relative link must reach a file that exists, and every
`#anchor` a heading of that file. The README stays a short entry point (issue 27: at most 200 lines)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
MARKDOWN = [README, *sorted((REPO / "docs").rglob("*.md"))]

#: `[text](target)` and `[text](target "title")`; images `![alt](target)` too.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def _prose(text: str) -> str:
    """The text outside fenced code blocks, with inline code removed (a link there is not a link)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(lines)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: the text without markup, lowercased, punctuation dropped, spaces as -."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match:
            slug = _slug(match.group(2))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _relative_links(path: Path) -> list[str]:
    links = []
    for target in LINK.findall(_prose(path.read_text())):  # link text may wrap onto the next line
        if not re.match(r"^[a-z][a-z0-9+.-]*:", target, flags=re.I):  # not http:, https:, mailto:
            links.append(target)
    return links


def _broken(path: Path) -> list[str]:
    broken = []
    for target in _relative_links(path):
        file_part, _, anchor = target.partition("#")
        destination = (path.parent / file_part).resolve() if file_part else path
        if not destination.exists():
            broken.append(f"{target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in _anchors(destination):
            broken.append(f"{target}: no heading with that anchor")
    return broken


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(path: Path) -> None:
    assert _broken(path) == []


def test_the_checker_finds_a_broken_link_and_a_broken_anchor(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A title\n\n## Second: `part`\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](a.md) [ok, wrapped\nonto two lines](a.md#second-part) [web](https://example.com) `[code](nowhere.md)`\n"
        "```\n[fenced](nowhere.md)\n```\n[gone](missing.md) [bad anchor](a.md#third)\n"
    )
    assert _broken(page) == ["missing.md: no such file", "a.md#third: no heading with that anchor"]


def test_the_readme_stays_short() -> None:
    assert len(README.read_text().splitlines()) <= 200
