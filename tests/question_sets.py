"""The committed question sets and how well the router reads them (shared by the tests and bench/routing.py).

Measured (never learnt from; a question that is word for word a phrasing or a learnt question is left out):

- ``questions_heldout.jsonl``: written apart, never tuned on.
- ``questions_fresh.jsonl``: written apart later, before the router changed, by someone who never saw the
  phrasings or the router; rows may carry ``before`` (the lines already run in that conversation) and
  ``needs`` (a command that must exist for the row to count).
- ``questions_fresh32.jsonl``: written apart, beside fresh33, by someone who read only the README without its routing
  section, COMMANDS.md and ``help`` (never the router, its phrasings or the other sets), committed after the round
  that read fresh28 and fresh29 and before any change of the round that read fresh30; scored then and at the end of
  three rounds, its misses unread.
- ``questions_fresh34.jsonl`` and ``questions_fresh35.jsonl``: written the same way, side by side, committed after the
  round that read fresh30 and before any change of the round that read fresh33; scored then and after it.
  fresh34's misses were read in round 26 (not learnt); fresh35's are unread.
- ``questions_fresh37.jsonl``: written the same way, beside fresh36, committed after the round that read fresh33 and
  before any change of the round that read fresh31; scored then and after the round that read fresh36, its misses
  unread.
- ``questions_fresh41.jsonl``: written the same way, beside fresh40, committed after the round that read fresh36 and
  before any change of the round that read fresh40; scored then and after that round, its misses unread.
- ``questions_fresh42.jsonl``: written the same way, beside fresh43, from the README of d0c6da8, committed after
  fresh40 and fresh41 and before any change of the next round; scored then, its misses unread.
- ``questions_fresh44.jsonl``: written the same way, beside fresh45, from the README of b7cf296, committed before any
  change of the round that read fresh39; scored then, its misses unread.
- ``questions_fresh47.jsonl``: written the same way, beside fresh46, from the README of c079fd0, committed before any
  change of the round that read fresh43; scored then, its misses unread.
- ``questions_fresh48.jsonl`` and ``questions_fresh49.jsonl``: written the same way, side by side, from the README of
  7dd248c, committed before any change of the round that read fresh38; scored then, misses unread.
- ``questions_fresh50.jsonl``: written the same way, beside fresh51, from the README of 15a7861, committed before any
  change of the round that read fresh46; scored then, its misses unread.
- ``questions_fresh52.jsonl`` and ``questions_fresh53.jsonl``: written the same way, side by side, from the README of
  7e248d0, committed before any change of the round that read fresh51; scored then, misses unread.
- ``questions_fresh57.jsonl``: written the same way, beside fresh56, from the README of 1194a64, committed before any
  change of the round that read fresh54; scored then, its misses unread.
- ``questions_fresh59.jsonl``: written the same way, beside fresh58, from the README of a4810f9, committed before any
  change of the round that read fresh55; scored then, misses unread.
- ``questions_fresh60.jsonl``: written the same way, beside fresh61, from the README of dfd3dba, committed before any
  change of the round that read fresh56; scored then, its misses unread.
- ``questions_fresh63.jsonl``: written the same way, beside fresh62, from the README of 1d3a2e0, committed after the
  round that read fresh56 and before any change of the next; scored then, its misses unread.
- ``questions_fresh64.jsonl`` and ``questions_fresh65.jsonl``: written the same way, side by side, from the README of
  49df315, committed before any change of the round that read fresh62; scored then, misses unread.
- ``questions_fresh66.jsonl`` and ``questions_fresh67.jsonl``: written the same way, side by side, from the README of
  529da8e, committed before any change of the round that read fresh58 and fresh66; scored then. fresh66's misses were
  read in that round, but it is not learnt (learning it with fresh71 mended 4 unread lines and broke 5), so it is no
  longer a clean measure; fresh67's misses are unread.
- ``questions_fresh69.jsonl``: written the same way, beside fresh68, from the README of b211777, committed before any
  change of the round that read fresh68 (learnt in the next); scored then, misses unread.
- ``questions_fresh70.jsonl`` and ``questions_fresh71.jsonl``: written the same way, side by side, from the README of
  b943629 (after the round that learnt fresh68), committed before anyone read them; scored then. fresh71's misses were
  read in round 15 (not learnt, as fresh66); fresh70's are unread.
- ``questions_fresh72.jsonl`` and ``questions_fresh73.jsonl``: written the same way, side by side, from the README of
  009b71d, committed before anyone read them (after this session's readings from conversations held in the page,
  before the round that read fresh71); scored at 009b71d and after, misses unread.
- ``questions_fresh74.jsonl`` and ``questions_fresh75.jsonl``: written the same way, side by side, from the README
  of d901ff0 (after round 15), committed before anyone read them; scored then and after. fresh74's misses were read
  in round 16 (not learnt); fresh75's are unread.
- ``questions_fresh76.jsonl`` and ``questions_fresh77.jsonl``: written the same way, side by side, from the README
  of 69e6af6, committed before anyone read them or fresh74; scored then and after. fresh76's misses were read in
  round 17 (not learnt); fresh77's are unread (three of them were shown by accident while fresh76's were listed).
- ``questions_fresh78.jsonl`` and ``questions_fresh79.jsonl``: written the same way, side by side, from the README
  of b0ece4d (after round 16), committed before anyone read them or fresh76; scored then and after. fresh79's
  misses were read in round 19 (not learnt); fresh78's are unread.
- ``questions_fresh80.jsonl`` and ``questions_fresh81.jsonl``: written the same way, side by side, from the README
  of a03d382 (after round 17), committed before anyone read them; scored then. fresh81's misses were read in
  round 18 (not learnt); fresh80's are unread.
- ``questions_fresh82.jsonl`` and ``questions_fresh83.jsonl``: written the same way, side by side, from the README
  of d3a4128 (after round 18), committed before anyone read them; scored then. fresh82's misses were read in
  round 20 (not learnt); fresh83's are unread.
- ``questions_fresh84.jsonl`` and ``questions_fresh85.jsonl``: written the same way, side by side, from the README
  of 3bcfc09 (after round 19), committed before anyone read them; scored then. fresh84's misses were read in
  round 21 (not learnt); fresh85's are unread.
- ``questions_fresh86.jsonl`` and ``questions_fresh87.jsonl``: written the same way, side by side, from the README
  of ac3ee53 (after round 20), committed before anyone read them; scored then, misses unread.
- ``questions_fresh88.jsonl`` and ``questions_fresh89.jsonl``: written the same way, side by side, from the README
  of d4e2a0e, committed before anyone read them (round 21's readings, made from fresh84, were not tuned on them);
  scored at d4e2a0e. fresh89's misses were read in round 22 (not learnt); two of fresh88's were shown by accident
  while it was scored.
- ``questions_fresh90.jsonl`` and ``questions_fresh91.jsonl``: written the same way, side by side, from the README
  of 57eca09 (after round 21), committed before anyone read them; scored then. fresh91's misses were read in
  round 23 (not learnt); fresh90's are unread.
- ``questions_fresh92.jsonl`` and ``questions_fresh93.jsonl``: written the same way, side by side, from the README
  of de2cca2 (after round 22), committed before anyone read them (round 23's readings, made from fresh91, were not
  tuned on them); scored at de2cca2. fresh93's misses were read in round 24 (not learnt); fresh92's are unread.
- ``questions_fresh94.jsonl`` and ``questions_fresh95.jsonl``: written the same way, side by side, from the README
  of 4d1a8c3 (after round 24), committed before anyone read them; scored at 4d1a8c3. fresh94's misses were read in
  round 25 (not learnt); fresh95's are unread.
- ``questions_fresh96.jsonl`` and ``questions_fresh97.jsonl``: written the same way, side by side, from the README
  of 0ddc173 (after round 24), committed before anyone read them (round 25's readings, made from fresh94, were not
  tuned on them); scored at 0ddc173.
- ``questions_fresh98.jsonl``: written the same way from the README of 139f25d (after round 25), committed before
  anyone read it (round 26's readings, made from fresh34, were not tuned on it); scored at 139f25d.

Learnt from (``assistant/understanding/asked/``, see :mod:`assistant.understanding.examples`): the tuning set
``questions.jsonl``, ``questions_fresh2.jsonl`` to ``questions_fresh31.jsonl``, ``questions_fresh33.jsonl``,
``questions_fresh36.jsonl``, ``questions_fresh38.jsonl``, ``questions_fresh39.jsonl``, ``questions_fresh40.jsonl``,
``questions_fresh43.jsonl``, ``questions_fresh45.jsonl``, ``questions_fresh46.jsonl``, ``questions_fresh51.jsonl``,
``questions_fresh54.jsonl``, ``questions_fresh55.jsonl``, ``questions_fresh56.jsonl``, ``questions_fresh58.jsonl``,
``questions_fresh61.jsonl``, ``questions_fresh62.jsonl`` and ``questions_fresh68.jsonl``, each written apart the same
way and scored once before its misses were read (docs/understanding.md keeps those clean rates; fresh11 was committed
before the router first learnt from the others, and scored before and after that). The router learns from their rows
without ``before``; their follow-ups (rows with ``before``) are still only measured: :data:`LEARNT` sets are scored in
both parts.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from assistant.commands.base import Invocation
from assistant.commands.registry import COMMANDS, TABLE
from assistant.dispatch import execute
from assistant.parsing import parse
from assistant.reading import read_line
from assistant.session import Session
from assistant.sharing.links import merged_line, previous_line
from assistant.understanding.examples import ASKED, examples, rows
from tools.benchmark.access import DataAccess
from tools.core.errors import UserError
from tools.core.results import Result
from tools.models.hub import ModelHub

DATA = Path(__file__).parent / "data"
#: The measured sets.
SETS = {"held-out": DATA / "questions_heldout.jsonl", "fresh": DATA / "questions_fresh.jsonl",
        "fresh32": DATA / "questions_fresh32.jsonl", "fresh34": DATA / "questions_fresh34.jsonl",
        "fresh35": DATA / "questions_fresh35.jsonl", "fresh37": DATA / "questions_fresh37.jsonl",
        "fresh41": DATA / "questions_fresh41.jsonl",
        "fresh42": DATA / "questions_fresh42.jsonl", "fresh44": DATA / "questions_fresh44.jsonl",
        "fresh47": DATA / "questions_fresh47.jsonl",
        "fresh48": DATA / "questions_fresh48.jsonl", "fresh49": DATA / "questions_fresh49.jsonl",
        "fresh50": DATA / "questions_fresh50.jsonl", "fresh52": DATA / "questions_fresh52.jsonl",
        "fresh53": DATA / "questions_fresh53.jsonl",
        "fresh57": DATA / "questions_fresh57.jsonl",
        "fresh59": DATA / "questions_fresh59.jsonl",
        "fresh60": DATA / "questions_fresh60.jsonl", "fresh63": DATA / "questions_fresh63.jsonl",
        "fresh64": DATA / "questions_fresh64.jsonl", "fresh65": DATA / "questions_fresh65.jsonl",
        "fresh66": DATA / "questions_fresh66.jsonl", "fresh67": DATA / "questions_fresh67.jsonl",
        "fresh69": DATA / "questions_fresh69.jsonl", "fresh70": DATA / "questions_fresh70.jsonl",
        "fresh71": DATA / "questions_fresh71.jsonl",
        "fresh72": DATA / "questions_fresh72.jsonl", "fresh73": DATA / "questions_fresh73.jsonl",
        "fresh74": DATA / "questions_fresh74.jsonl", "fresh75": DATA / "questions_fresh75.jsonl",
        "fresh76": DATA / "questions_fresh76.jsonl", "fresh77": DATA / "questions_fresh77.jsonl",
        "fresh78": DATA / "questions_fresh78.jsonl", "fresh79": DATA / "questions_fresh79.jsonl",
        "fresh80": DATA / "questions_fresh80.jsonl", "fresh81": DATA / "questions_fresh81.jsonl",
        "fresh82": DATA / "questions_fresh82.jsonl", "fresh83": DATA / "questions_fresh83.jsonl",
        "fresh84": DATA / "questions_fresh84.jsonl", "fresh85": DATA / "questions_fresh85.jsonl",
        "fresh86": DATA / "questions_fresh86.jsonl", "fresh87": DATA / "questions_fresh87.jsonl",
        "fresh88": DATA / "questions_fresh88.jsonl", "fresh89": DATA / "questions_fresh89.jsonl",
        "fresh90": DATA / "questions_fresh90.jsonl", "fresh91": DATA / "questions_fresh91.jsonl",
        "fresh92": DATA / "questions_fresh92.jsonl", "fresh93": DATA / "questions_fresh93.jsonl",
        "fresh94": DATA / "questions_fresh94.jsonl", "fresh95": DATA / "questions_fresh95.jsonl",
        "fresh96": DATA / "questions_fresh96.jsonl", "fresh97": DATA / "questions_fresh97.jsonl",
        "fresh98": DATA / "questions_fresh98.jsonl"}
#: The sets the router learns from (their rows without ``before``).
LEARNT = {"tuning": ASKED / "questions.jsonl", **{
    f"fresh{n}": ASKED / f"questions_fresh{n}.jsonl"
    for n in [*range(2, 32), 33, 36, 38, 39, 40, 43, 45, 46, 51, 54, 55, 56, 58, 61, 62, 68]}}


def questions(path: Path) -> list[dict]:
    """A question set's rows for commands that exist; for a measured set, without a question that is word for word
    a phrasing or a question the router learnt from (it would not measure reading a new question)."""
    got = [r for r in rows(path) if r.get("needs", "") in ("", *TABLE)]
    if path.parent == ASKED:
        return got
    return [r for r in got if r["q"].lower() not in _known()]


@functools.cache
def _known() -> frozenset[str]:
    """The phrasings and learnt questions, lower-cased (read once: every learnt line is parsed to build it)."""
    return frozenset({p.lower() for c in COMMANDS for p in c.phrasings} | {e.question.lower() for e in examples(TABLE)})


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
    `again --layer 4` and `compare A | B --layer 4` after `compare A | B` are the same answer. In a conversation with
    no earlier command, `again ...` is compared as written (there is nothing it could change)."""
    inv = parse(line, TABLE)
    if inv.verb != "again" or not session.history:
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
