"""What a question keeps of the previous command's settings: "that layer", "the same head", "those same 40", "the
next layer", "two layers deeper", "those same settings", and the settings a command run on the previous texts shares
with the command before it."""

from __future__ import annotations

import re
from collections.abc import Mapping

import assistant.understanding.named as named
import assistant.understanding.numbers as numbers
import assistant.understanding.spoken as spoken
from assistant.commands.base import Command, Invocation
from assistant.session import Session
from assistant.sharing.links import option_values
from assistant.understanding.reset import back_to_default
from tools.core.config import Settings

#: "that layer", "the same head", "that corpus", "that pooling": the previous command's value of that option.
#: (The first part reads ahead only: "the same corpus and number of sentences" keeps both.)
_SAME = re.compile(r"\b(?=(?:that|the same|same|this|the(?=\s+\w+'s))\s+"
                   r"(layer|head|corpus|top|k|seed|threshold|(?<=that\s)pool(?=ing\b)))|"
                   r"\b(?:(?:the\s+)?same|that\s+many)\s+(?:\w+\s+and\s+(?:the\s+)?)?((?:number|amount)\s+of\s+sentences|sentences|"
                   r"sentence\s+count|"
                   r"sample(?:\s+size)?)\b|\b(?:those|these|the)\s+same\s+(?=\d+\b)", re.I)  # ("on those same 40")
#: "with those same settings", "the same parameters": every setting of the previous command that a command takes.
_SAME_SETTINGS = re.compile(r"\b(?:the\s+|those\s+|these\s+)?same\s+(?:settings|options|parameters|params|"
                            r"configuration|config)\b", re.I)
#: "those rows", "the same rows": the rows the previous command ran on (its ``--in``).
_SAME_ROWS = re.compile(r"\b(?:those|these|the\s+same|same|that\s+range\s+of|the\s+selected)\s+rows\b", re.I)
#: "the next layer", "the previous head", "two layers deeper": the previous command's value of that option, stepped.
_NEXT = re.compile(r"\b(next|previous|following|prior)\s+(layer|head)\b|"
                   r"\b(a|one|two|three|four|five|\d+)\s+(layer|head)s?\s+(deeper|further|higher|later|up|on|down|"
                   r"back|earlier|lower|shallower|before)\b", re.I)  # ("two layers deeper")
_BACK = frozenset({"previous", "prior", "down", "back", "earlier", "lower", "shallower", "before"})


def _steps(question: str) -> list[tuple[int, str]]:
    """The options a question steps from the previous command's value, and by how much ("the next layer": +1, "two
    layers back": -2)."""
    out = []
    for one, name, many, names, way in _NEXT.findall(question):
        way = (one or way).lower()
        by = 1 if one or many.lower() == "a" else int(numbers.in_digits(many))
        out.append((-by if way in _BACK else by, name or names))
    return out


def carried(question: str, spec: Command, before: Invocation | None, session: Session, settings: Settings,
            table: Mapping[str, Command]) -> dict[str, str]:
    """The options (name -> value) ``question`` takes from the conversation for ``spec``: its corpus ("my texts") and
    the previous command's values it points at ("that layer", "the next head", "those same settings")."""
    return {**named.own_corpus(question, spec, session, settings), **named.that_corpus(question, spec, session),
            **_kept(question, before, spec, table)}


def shared_options(question: str, before: Invocation | None, spec: Command,
                   table: Mapping[str, Command]) -> dict[str, str]:
    """The previous command's settings that ``spec`` takes too (an option of the same name, not ``spec``'s count),
    kept when ``spec`` runs on the previous texts: "which tokens make that score?" after `compare A | B --pool
    cls` is `why A | B --pool cls` (a value it cannot take, `--pool all`, is left). None when the question names the
    one it keeps ("rebuild that layer")."""
    if before is None or before.verb not in table or _SAME.search(question) or _NEXT.search(question):
        return {}
    count = spoken.count_option(spec) if spec.name != before.verb else None  # the same command keeps them all
    reset = back_to_default(question, spec).options  # ("the attention maps for that sentence, all layers")
    return {name: value for name, value in _settings(before, spec, table, but=count).items() if name not in reset}


def asked_again(question: str, before: Invocation | None, spec: Command, shared: Mapping[str, str]) -> dict[str, str]:
    """The previous settings (``shared``, from :func:`shared_options`) that stay when a command without texts is asked
    again in other words, all but its count ("count a pair from gold 4.5" after `benchmark --data stsb-test` keeps
    the data, not the sample; "let it choose k itself" after `clusters --k 8` drops the 8); a question that only
    picks what to show of them keeps the count too ("the texts of the smallest topic" after `clusters --k 6`)."""
    if before is None or before.verb != spec.name or spec.texts.most != 0:
        return {}
    said = spoken.read(question, spec).options
    viewing = bool(said) and all(getattr(spec.option(name), "view", False) for name in said)
    return {name: value for name, value in shared.items() if viewing or name != spoken.count_option(spec)}


def _settings(before: Invocation, spec: Command, table: Mapping[str, Command],
              but: str | None = None) -> dict[str, str]:
    """The previous command's settings (as typed, away from its own defaults) that ``spec`` takes too, but one."""
    return {name: value for name, value in option_values(before, table[before.verb]).items()
            if name != but and (option := spec.option(name)) is not None and not option.view and option.accepts(value)}


def _kept(question: str, before: Invocation | None, spec: Command, table: Mapping[str, Command]) -> dict[str, str]:
    """The previous command's values a question points at, for ``spec``: "that layer", "the same head", "that
    corpus" keep one; "the next layer", "the previous head" step it one on or one back; "those same settings" keep
    every one ``spec`` takes."""
    out: dict[str, str] = {}
    if before is not None and before.verb in table and _SAME_SETTINGS.search(question):  # "cka, same settings"
        out.update(_settings(before, spec, table))
    said = _SAME.findall(question)
    same = [one.lower() if one else "sentences" for one, _ in said]  # ("the same sample size")
    same += ["in"] if _SAME_ROWS.search(question) else []  # "break those rows into 3 groups" after `search --in 10-50`
    if before is not None and before.verb in table and any(many.lower() == "sentences" for _, many in said):
        typed = option_values(before, table[before.verb])  # the same sentences, not only as many: drawn from the
        same += [name for name in ("corpus", "seed") if name in typed]  # same corpus with the same seed
    if "head" in same and not re.search(r"\blayers?\b", question, re.I):  # a head is numbered within its layer
        same.append("layer")
    for step, name in [(0, n) for n in same] + _steps(question):
        option = spec.option(name.lower())
        value = before.options.get(option.dest) if before is not None and option is not None else None
        if value is not None and not step:
            out[option.name] = str(value)
        elif isinstance(value, int):
            out[option.name] = str(value + step)
    return out
