"""`arignote-opt --verify-diagnostics`: MLIR's `expected-error` checking.

A test states the diagnostics it expects in comments of the input:

```mlir
// expected-error @+1 {{result type tensor<4xf32> does not match}}
%0 = ag.add %a, %b : tensor<3xf32>, tensor<3xf32> -> tensor<4xf32>
%1 = ag.bad ...  // expected-error {{unregistered operation}}
```

`expected-error`, `expected-warning` and `expected-remark` name the line the diagnostic
is reported at: the comment's own line, `@+N` / `@-N` lines below / above it, or
`@above` / `@below` (the previous / next line). The text between `{{` and `}}` must be
part of the diagnostic's message. Every emitted diagnostic must be expected and every
expectation met, or the run fails with one line per mismatch on stderr (exit status 1),
as `mlir-opt -verify-diagnostics` does. Warnings carry no line in arignote (they are
Python warnings), so an `expected-warning` is matched by its text wherever it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_EXPECTED = re.compile(
    r"expected-(?P<kind>error|warning|remark)\s*(?:@(?P<where>above|below|[+-]\d+))?"
    r"\s*\{\{(?P<text>.*?)\}\}"
)


@dataclass
class Expectation:
    kind: str
    line: int
    """The line (1-based, in the whole file) the diagnostic must be reported at."""
    text: str
    comment_line: int
    met: bool = False


@dataclass(frozen=True)
class Diagnostic:
    kind: str
    message: str
    line: int | None
    """The line it is reported at, None when unknown (a Python warning)."""
    location: str = ""


@dataclass
class Verdict:
    """The mismatches of one chunk, as the lines to print on stderr."""

    problems: list[str] = field(default_factory=list)


def expectations(text: str, line_offset: int) -> list[Expectation]:
    """The expectations written in `text`, a chunk whose first line is file line
    `line_offset + 1`."""
    found = []
    for index, line in enumerate(text.splitlines()):
        number = line_offset + index + 1
        for match in _EXPECTED.finditer(line):
            where = match["where"]
            if where is None:
                target = number
            elif where == "above":
                target = number - 1
            elif where == "below":
                target = number + 1
            else:
                target = number + int(where)
            found.append(Expectation(match["kind"], target, match["text"], number))
    return found


def line_of(location: str | None) -> int | None:
    """The line of a `file:line:col` location (None when there is none)."""
    if not location:
        return None
    parts = location.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit():
        return int(parts[1])
    return None


def verify(expected: list[Expectation], emitted: list[Diagnostic], name: str) -> Verdict:
    """Matches the `emitted` diagnostics of a chunk of file `name` with what it expects."""
    verdict = Verdict()
    for diagnostic in emitted:
        match = next(
            (
                e
                for e in expected
                if not e.met
                and e.kind == diagnostic.kind
                and e.text in diagnostic.message
                and (diagnostic.line is None or e.line == diagnostic.line)
            ),
            None,
        )
        if match is not None:
            match.met = True
            continue
        where = diagnostic.location or (f"{name}:{diagnostic.line}" if diagnostic.line else name)
        verdict.problems.append(
            f"{where}: error: unexpected {diagnostic.kind}: {diagnostic.message}"
        )
    for e in expected:
        if not e.met:
            verdict.problems.append(
                f'{name}:{e.comment_line}: error: expected {e.kind} "{e.text}" '
                f"(at line {e.line}) was not produced"
            )
    return verdict
