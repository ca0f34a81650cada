"""A command line -> :class:`Invocation`, with a clear sentence for every mistake.

Grammar: ``verb text [| text ...] [--option [value] ...]``.
Verbs and options are case-insensitive; texts are kept exactly (outer spaces
trimmed). A text may be quoted with ``"`` or ``'`` to hold ``|`` or ``--``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from assistant.commands.base import Command, Invocation
from assistant.versus import refusal
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.text import code

_OPTION = re.compile(r"--([A-Za-z][A-Za-z0-9_-]*)")
#: The default settings (frozen), made once: validating a new ``Settings`` took about 0.1 ms, paid by every line
#: parsed without the conversation's settings (a question's reading parses several).
_DEFAULTS = Settings()


def parse(line: str, table: Mapping[str, Command], settings: Settings | None = None) -> Invocation:
    """Parse one command line against the command table (verbs and aliases as keys)."""
    settings = settings or _DEFAULTS
    if len(line) > settings.max_line_chars:
        raise UserError(
            f"That command is {len(line):,} characters long; the limit is {settings.max_line_chars:,} "
            "(ASSISTANT_MAX_LINE_CHARS)."
        )
    stripped = line.strip()
    if not stripped:
        raise UserError("Type a command, for example `compare A cat sat. | A kitten sat.`, or `help` for the list.")
    verb_word, _, rest = stripped.partition(" ") if " " in stripped else (stripped, "", "")
    verb_word = verb_word.split("\t")[0]
    if verb_word.endswith(":") and verb_word[:-1].lower() in table:  # "sim: A | B"
        stripped = verb_word[:-1] + stripped[len(verb_word):]
        verb_word = verb_word[:-1]
    spec = table.get(verb_word.lower())
    if spec is None:
        close = difflib.get_close_matches(verb_word.lower(), sorted(set(table)), n=3, cutoff=0.6)
        raise UserError(_unknown_verb(verb_word, stripped, table), fixes=tuple((verb_word, c) for c in close))
    texts, raw_options = _scan(stripped[len(verb_word):], spec)
    options = _bind(spec, raw_options, table)
    return Invocation(verb=spec.name, texts=_check_texts(spec, texts, settings), options=options, line=stripped)


def _unknown_verb(verb: str, line: str, table: Mapping[str, Command]) -> str:
    names = sorted(set(table))
    close = difflib.get_close_matches(verb.lower(), names, n=3, cutoff=0.6)
    message = f"Unknown command {code(verb, 30)}."
    if close:
        message += " Did you mean " + " or ".join(f"`{c}`" for c in close) + "?"
    lowered = line.lower()
    if "mask" in table and ("[mask]" in lowered or "<mask>" in lowered):
        message += f" To fill the mask, try {code('mask ' + line, 60)}."
    elif "compare" in table and "|" in line and not close:
        message += f" To compare these texts, try {code('compare ' + line, 60)}."
    if not close:
        message += " Type `help` for the list of commands."
    return message


def _scan(rest: str, spec: Command) -> tuple[list[str], list[tuple[str, str | None]]]:
    """Split the text after the verb into texts (at ``|``) and options."""
    texts: list[str] = []
    current: list[str] = []
    quoted_segment = False
    options: list[tuple[str, str | None]] = []
    i, n = 0, len(rest)
    while i < n:
        ch = rest[i]
        at_token_start = i == 0 or rest[i - 1].isspace()
        if ch in "\"'" and not "".join(current).strip():
            end = _closing_quote(rest, i)
            if end is not None:
                current = [rest[i + 1:end]]
                quoted_segment = True
                i = end + 1
                continue
        if ch == "|":
            texts.append(_finish(current, quoted_segment))
            current, quoted_segment = [], False
            i += 1
            continue
        match = _OPTION.match(rest, i) if at_token_start else None
        if match and (match.end() == n or rest[match.end()].isspace()):
            name = match.group(1).lower()
            option = spec.option(name)
            i = match.end()
            value = None
            if option is None or not option.is_flag:
                value, i = _value(rest, i)
                if option is None and value is not None and value.startswith("--"):
                    value = None
            options.append((name, value))
            continue
        if not quoted_segment:
            current.append(ch)
        elif not ch.isspace():
            raise UserError(f"Text after a closing quote: put a `|` between texts, near {code(rest[i:i+20], 30)}.")
        i += 1
    last = _finish(current, quoted_segment)
    if texts or last or quoted_segment:
        texts.append(last)
    return texts, options


def _closing_quote(rest: str, start: int) -> int | None:
    quote = rest[start]
    end = rest.find(quote, start + 1)
    while end != -1:
        after = rest[end + 1:end + 2]
        if after == "" or after.isspace() or after == "|":
            return end
        end = rest.find(quote, end + 1)
    return None


def _finish(chars: list[str], quoted: bool) -> str:
    text = "".join(chars)
    return text if quoted else text.strip()


def _value(rest: str, i: int) -> tuple[str | None, int]:
    n = len(rest)
    while i < n and rest[i].isspace():
        i += 1
    if i >= n or rest[i] == "|":
        return None, i
    if rest[i] in "\"'":
        end = _closing_quote(rest, i)
        if end is not None:
            return rest[i + 1:end], end + 1
    start = i
    while i < n and not rest[i].isspace() and rest[i] != "|":
        i += 1
    value = rest[start:i]
    if value.startswith("--") and _OPTION.fullmatch(value):
        return None, start  # the next option, not a value
    return value, i


def _bind(spec: Command, raw: list[tuple[str, str | None]], table: Mapping[str, Command]) -> dict[str, object]:
    values: dict[str, object] = {o.dest: o.default for o in spec.options}
    seen: set[str] = set()
    for name, value in raw:
        option = spec.option(name)
        if option is None and name == "vs":
            raise UserError(refusal(spec.name, table))
        if option is None:
            known = [o.name for o in spec.options]
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
            if not known:
                raise UserError(f"`{spec.name}` takes no options; remove {code('--' + name, 30)}.")
            hint = f" Did you mean `--{close[0]}`?" if close else ""
            raise UserError(
                f"`{spec.name}` has no option {code('--' + name, 30)}.{hint} Its options are "
                + ", ".join(f"`--{k}`" for k in known) + ".",
                fixes=tuple((f"--{name}", f"--{c}") for c in close))
        if name in seen:
            raise UserError(f"--{name} is given twice; give it once.")
        seen.add(name)
        values[option.dest] = option.convert(value)
    return values


def _check_texts(spec: Command, texts: list[str], settings: Settings) -> list[str]:
    """The texts, empty ones dropped, or the sentence that says what is wrong with them."""
    least, most = spec.texts.least, spec.texts.most
    most = settings.max_texts if most is None else most
    if most == 0 and texts:
        raise UserError(f"`{spec.name}` takes no text, only options: {spec.usage}.")
    for index, text in enumerate(texts):
        if not text and (len(texts) > 1 or least > 0):
            where = ("between the `|` separators, or remove the extra `|`" if len(texts) > 1
                     else "between the quotes")
            raise UserError(f"Text {index + 1} is empty: write something {where}.")
        if len(text) > settings.max_chars:
            raise UserError(
                f"Text {index + 1} is {len(text):,} characters long; the limit is {settings.max_chars:,} "
                "characters per text (ASSISTANT_MAX_CHARS)."
            )
    texts = [t for t in texts if t]
    actions = spec.texts.actions
    if actions and texts and texts[0].split()[0].lower() not in actions:
        raise UserError(f"`{spec.name}` does not know {code(texts[0].split()[0], 20)}; use one of "
                        f"{', '.join(actions)}, like {code(spec.examples[min(1, len(spec.examples) - 1)], 60)}.")
    if len(texts) < least:
        need = spec.texts_hint or f"{least} text{'s' if least > 1 else ''}"
        raise UserError(f"`{spec.name}` needs {need}: {spec.usage}, {spec.for_example}")
    if len(texts) > most:
        if spec.texts.most is None:
            raise UserError(
                f"`{spec.name}` takes at most {most} texts per command (ASSISTANT_MAX_TEXTS); got {len(texts):,}."
            )
        raise UserError(f"`{spec.name}` takes at most {most} text{'s' if most > 1 else ''}; got {len(texts)}: "
                        f"{spec.usage}.")
    return texts
