"""The committed question sets and how well the router reads them (shared by the tests and bench/routing.py).

- ``questions.jsonl``: the tuning set (the phrasings were tuned on it).
- ``questions_heldout.jsonl``: written apart, never tuned on.
- ``questions_fresh.jsonl``: written apart later, before the router changed, by someone who never saw the
  phrasings or the router; rows may carry ``before`` (the lines already run in that conversation) and
  ``needs`` (a command that must exist for the row to count).
- ``questions_fresh2.jsonl``: written apart again, before the next router change, by someone who read only the
  README, COMMANDS.md and ``help`` (never the router, its phrasings or the other sets); 44 multi-turn rows.
- ``questions_fresh3.jsonl``: written apart the same way, before the next router change (257 rows, 64 multi-turn).
- ``questions_fresh4.jsonl``: written apart the same way, before the next router change (257 rows, 76 multi-turn).
- ``questions_fresh5.jsonl``: written apart the same way while the router changed, scored once before its misses
  were read (278 rows, 102 multi-turn).
- ``questions_fresh6.jsonl``: written apart the same way before the next router change (290 rows, 98 multi-turn;
  four rows its writer reworded after glimpsing the README's list of misses were taken out before it was scored).
- ``questions_fresh7.jsonl``: written apart while the router changed, from a copy of the README without its routing
  section (286 rows, 91 multi-turn); scored once halfway through that change, before its misses were read.
- ``questions_fresh8.jsonl``: written apart the same way (283 rows, 98 multi-turn) after that change, scored once
  before its misses were read.
- ``questions_fresh9.jsonl``: written apart the same way (283 rows, 95 multi-turn) before the next router change,
  scored once before its misses were read.
- ``questions_fresh10.jsonl``: written apart the same way (293 rows, 101 multi-turn) while the router changed, scored
  once at the end of that change before its misses were read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from assistant.commands.base import Invocation
from assistant.commands.registry import COMMANDS, TABLE
from assistant.dispatch import execute, read_line
from assistant.parsing import parse
from assistant.session import Session
from assistant.sharing.links import merged_line, previous_line
from tools.benchmark.access import DataAccess
from tools.core.errors import UserError
from tools.core.results import Result
from tools.models.hub import ModelHub

DATA = Path(__file__).parent / "data"
SETS = {"tuning": "questions.jsonl", "held-out": "questions_heldout.jsonl", "fresh": "questions_fresh.jsonl",
        "fresh2": "questions_fresh2.jsonl", "fresh3": "questions_fresh3.jsonl",
        "fresh4": "questions_fresh4.jsonl", "fresh5": "questions_fresh5.jsonl",
        "fresh6": "questions_fresh6.jsonl", "fresh7": "questions_fresh7.jsonl",
        "fresh8": "questions_fresh8.jsonl",
        "fresh9": "questions_fresh9.jsonl", "fresh10": "questions_fresh10.jsonl"}


def questions(name: str) -> list[dict]:
    """A question set's rows for commands that exist, without a question that is word for word a phrasing
    (it would not measure reading a new question)."""
    rows = [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    phrasings = {p.lower() for c in COMMANDS for p in c.phrasings}
    return [r for r in rows if r.get("needs", "") in ("", *TABLE) and r["q"].lower() not in phrasings]


@dataclass
class Score:
    """How many questions were read as the right command, and with the right texts and options too."""

    rows: int = 0
    verb: int = 0
    full: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def verb_rate(self) -> float:
        return self.verb / max(1, self.rows)

    @property
    def full_rate(self) -> float:
        return self.full / max(1, self.rows)


def ran(line: str, session: Session) -> Invocation:
    """The command a line runs in this conversation: `again ...` is the previous command with its changes, so
    `again --layer 4` and `compare A | B --layer 4` after `compare A | B` are the same answer."""
    inv = parse(line, TABLE)
    if inv.verb != "again":
        return inv
    return parse(merged_line(previous_line(session.history, TABLE), inv, TABLE), TABLE)


def score(hub: ModelHub, model: str, rows: list[dict]) -> Score:
    """Read every question as a person would ask it: in a conversation that has already run its ``before``
    lines, on ``model``. A question is read from the conversation's lines and its model only (what
    a question is read from), so a ``before`` line stands in the history as it ran (``again`` merged into the line
    it changes) without computing its answer, except a switch of model, which runs where the model is here."""
    out = Score()
    for row in rows:
        session = Session(model=model)
        for line in row.get("before", ()):
            inv = ran(line, session)
            switched = inv.verb == "model" and inv.texts and execute(line, session, hub,
                                                                     access=DataAccess.local()).ok
            if not switched:  # (a model this machine lacks stands in the history as typed)
                session.remember(inv.line, Result(inv.verb, ""))
        want = ran(row["line"], session)
        try:  # what the product runs for this line: a question read, or a line typed as a command
            reading = read_line(row["q"], session, hub, hub.settings)
            got = reading.ran if reading.unclear is None else reading.unclear.message
            inv = ran(reading.ran, session) if reading.unclear is None else None
        except UserError as exc:  # a typed line the parser refuses, or a reading its command refuses: a miss
            got, inv = str(exc), None
        right_verb = inv is not None and inv.verb == want.verb
        right_all = right_verb and inv.texts == want.texts and inv.options == want.options
        out.rows += 1
        out.verb += right_verb
        out.full += right_all
        if not right_all:
            out.misses.append(f"{row['q']!r}: want {row['line']!r}, got {got!r}")
    return out
