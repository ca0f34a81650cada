"""A follow-up that asks for one layer or head of a command that takes none ("what about layer 3?" after `cka`,
"just layers 1 to 3" after `probe`): a sentence that says so, and the lines that would look at one layer, rather than
another command on example texts (or the model's facts, for the word "layers")."""

from __future__ import annotations

import re
from collections.abc import Mapping

from assistant.commands import slots
from assistant.commands.base import Command
from assistant.parsing import parse
from assistant.session import Session
from assistant.understanding.earlier import previous_command
from assistant.understanding.facts import Understanding
from assistant.understanding.fill import build
from assistant.understanding.numbers import in_digits
from assistant.understanding.words import NUMBER
from tools.core.config import Settings
from tools.core.text import code

#: One layer or head, or a few layers, named by number ("layer 3", "head five", "the first 3 layers", "layers 1 to 3").
_ONE = re.compile(rf"\b(?:(?P<kind>layer|head)s?\s+(?:#\s*)?(?P<n>{NUMBER})\b(?P<to>\s*(?:-|to|through|and)\s*"
                  rf"{NUMBER}\b)?|(?:the\s+)?(?:first|last|top|bottom|lower|upper|early|late)\s+(?:{NUMBER})\s+layers\b)",
                  re.I)
#: The only words a follow-up may wrap the layer in ("now at layer 3", "what about only the first 3 layers?"): one that
#: says more ("and the raw maps of layer 6" after `rollout`: `attend`) is read as a question.
_AROUND = frozenset({"what", "about", "how", "and", "now", "then", "ok", "okay", "so", "but", "just", "only", "try",
                     "instead", "the", "at", "in", "for", "on", "with", "please", "pls", "what's", "how's", "is",
                     "like", "look", "looks"})
#: The commands offered to look at one layer or head, in this order (each where it takes that option).
_LOOKING = ("attend", "compare")


def asked_of_one(question: str, session: Session, table: Mapping[str, Command],
                 settings: Settings) -> Understanding | None:
    """For a follow-up that names a layer or head the previous command has no option for, and says nothing else
    ("what about layer 3?", "what's layer 3 like?", "just layers 1 to 3"): what that command shows instead, with the
    previous line (when it shows every layer) and lines that look at that layer on the previous sentences (else on
    an example)."""
    said = _ONE.search(question)  # (first: most questions name no layer, and the history is not read for them)
    last = previous_command(session, table) if said is not None else None
    if last is None or said is None or slots.read(question).quoted:
        return None
    previous, spec = last
    kind = (said.group("kind") or "layer").lower()
    if spec.option(kind) is not None or not _AROUND.issuperset(
            re.findall(r"[a-z']+", (question[:said.start()] + " " + question[said.end():]).lower())):
        return None  # (a question that names more than the layer, "what about attention at layer 3?", is read)
    before = parse(previous, table, settings)
    sentences = [t for t in (before.texts[1:] if spec.texts.word_first else before.texts) if " " in t.strip()]
    number = {kind: in_digits(said.group("n"))} if said.group("n") and not said.group("to") else {}
    lines = [previous] if spec.every_layer else []
    for other in (table[name] for name in _LOOKING if table[name].option(kind) is not None):
        least = max(1, other.texts.least)  # (on the previous sentences; on an example when there were none)
        if len(sentences) >= least or not sentences:
            lines.append(build(other, sentences[:least] or parse(other.examples[0], table, settings).texts, number))
    shows = f": {spec.every_layer}" if spec.every_layer else ""
    return Understanding(message=f"`{spec.name}` has no {kind} option{shows}. To look at {code(said.group(0), 30)} "
                                 f"of a text, use a command that takes `--{kind}`:",
                         suggestions=tuple(dict.fromkeys(lines))[:3])
