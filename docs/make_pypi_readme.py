#!/usr/bin/env python
"""Write docs/pypi_readme.md, the project description PyPI shows: `python docs/make_pypi_readme.py`.

It is README.md with every relative link (`[getting started](docs/getting-started.md)`)
written as text naming the file (`getting started (docs/getting-started.md in the source
tree)`): PyPI renders a package's description away from its files, so a relative link
there leads nowhere, and arignote has no public documentation site to point at yet.
Absolute links are kept. `pyproject.toml` takes the package's readme from this file;
the suite fails when it is stale or has a relative link
(`test/docs/test_generated_pages.py`).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGE = ROOT / "docs" / "pypi_readme.md"
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
HEADER = "<!-- generated from README.md by docs/make_pypi_readme.py: edit README.md -->\n"


def is_relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target) and not target.startswith("#")


def relative_links(text: str) -> list[str]:
    return [m.group(2) for m in LINK.finditer(text) if is_relative(m.group(2))]


def _as_text(match: re.Match[str]) -> str:
    text, target = match.groups()
    if not is_relative(target):
        return match.group(0)
    return f"{text} (`{target}` in the source tree)"


def render() -> str:
    return HEADER + LINK.sub(_as_text, README.read_text())


def main() -> None:
    PAGE.write_text(render())


if __name__ == "__main__":
    main()
