"""Questions people asked, each with the command line it meant: what the router learns from beside the phrasings.

``asked/`` holds question sets written apart from the router by people who read only the README,
COMMANDS.md and ``help`` (never the router, its phrasings or the other sets), each scored once before its
misses were read (docs/understanding.md gives those clean rates), then kept to learn from, and the tuning set the
phrasings were first tuned on. A row is ``{"q": question, "line": the command line it means}``, with
``before`` (the lines already run in that conversation) for a follow-up. A follow-up is read from its
conversation, not from its words alone, so only rows without ``before`` teach which command a question asks
for; follow-ups in these files stay a measure (``tests/question_sets.py`` scores them).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from assistant.commands.base import Command

#: The question sets the router learns from, one JSON object per line.
ASKED = Path(__file__).parent / "asked"


@dataclass(frozen=True)
class Example:
    """One question as it was asked, and the command its line runs."""

    question: str
    command: str


def asked_files() -> list[Path]:
    """The files of :data:`ASKED`, in name order."""
    return sorted(ASKED.glob("*.jsonl"))


def rows(path: Path) -> list[dict]:
    """Every row of one question file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def examples(table: Mapping[str, Command]) -> tuple[Example, ...]:
    """Every question asked without a conversation before it, with the command its line runs in ``table``
    (a row for a command ``table`` lacks is left out). Read when the router builds or reads its index, once per
    model: the command is its line's first word (every line parses: tests/test_understanding.py checks them; parsing
    10,146 lines here cost 0.7 s of every process's first question)."""
    out = []
    for path in asked_files():
        for row in rows(path):
            if row.get("before") or row.get("needs", "") not in ("", *table):
                continue
            words = row["line"].split(None, 1)
            spec = table.get(words[0].lower()) if words else None
            if spec is not None:
                out.append(Example(row["q"], spec.name))
    return tuple(out)
