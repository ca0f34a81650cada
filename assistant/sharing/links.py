"""Sharing a conversation: permalinks, and what `again` and `history` build on.

The commands themselves live in :mod:`assistant.commands.conversation`.

A permalink is the page's own address with ``?q=<command line>`` (and ``&model=<name>``);
opening it runs the command on load. ``again`` rebuilds the previous command line with
the options it is given merged in, and re-parses it against that command's own table row,
so every check and "did you mean" of the original command applies.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import pandas as pd

from assistant.commands.base import Command, Context, Invocation
from assistant.commands.options import Option
from assistant.parsing import parse
from assistant.session import FullTurn, Turn
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.results import Result
from tools.core.text import code, md, shorten

#: Commands about the conversation itself; `again` skips them when it looks for the previous command.
META = frozenset({"again", "history", "export"})
#: The value that removes an option in `again` (back to the command's default).
DEFAULT = "default"


# --- permalinks -------------------------------------------------------------------------

def permalink(base: str, line: str, model: str = "") -> str:
    """The address that re-runs ``line`` (with ``model``) when opened; relative when ``base`` is ""."""
    params = {"q": line}
    if model:
        params["model"] = model
    return f"{base}?{urlencode(params, quote_via=quote, safe='')}"


def page_address(headers: Mapping[str, str]) -> str:
    """The address the page was opened at (no query), from a request's headers; "" when unknown.

    The browser's ``Referer`` holds the page's own address (path included); it is used
    only when it has the same origin as the request (``Origin``, or the forwarded or
    plain ``Host``), so a link always points back at this server.
    """
    h = {k.lower(): v for k, v in headers.items()}
    host = (h.get("x-forwarded-host") or h.get("host") or "").split(",")[0].strip()
    proto = (h.get("x-forwarded-proto") or "http").split(",")[0].strip()
    origin = (h.get("origin") or (f"{proto}://{host}" if host else "")).rstrip("/")
    referer = urlsplit(h.get("referer") or "")
    if referer.scheme in ("http", "https") and (not origin or f"{referer.scheme}://{referer.netloc}" == origin):
        return urlunsplit((referer.scheme, referer.netloc, referer.path or "/", "", ""))
    parts = urlsplit(origin)
    if parts.scheme in ("http", "https") and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}/"
    return ""


def link_html(url: str) -> str:
    """The "link to this answer" line of a reply: the link and a copy button (the page's script copies)."""
    safe = html.escape(url, quote=True)
    return (f"<div class='answer-link'><a href='{safe}' target='_blank' rel='noopener'>link to this answer</a> "
            f"<button type='button' class='copy-link' data-link='{safe}' title='copy the link'>Copy link</button>"
            "</div>")


# --- history ----------------------------------------------------------------------------

def history_table(turns: Sequence[Turn], base: str) -> pd.DataFrame:
    """One row per answered command: number, command line, model, permalink."""
    rows = [{"#": i + 1, "command": t.line, "model": t.model or "(default)",
             "permalink": permalink(base, t.line, t.model)} for i, t in enumerate(turns)]
    return pd.DataFrame(rows, columns=["#", "command", "model", "permalink"])


#: The history's list of links shows this many of the latest commands (its table holds them all).
HISTORY_SHOWN = 20
#: A link's text is cut near this many characters, at a word boundary.
LINK_CHARS = 120


def history_markdown(turns: Sequence[Turn], base: str, shown: int = HISTORY_SHOWN) -> str:
    """The last ``shown`` commands as a numbered list of links (the command text escaped, long ones cut at a
    word with an ellipsis)."""
    first = max(0, len(turns) - shown)
    lines = [f"{i + 1}. [{md(shorten(t.line, LINK_CHARS))}]({permalink(base, t.line, t.model)})"
             for i, t in enumerate(turns) if i >= first]
    return "\n".join(lines)


# --- full results for exports -----------------------------------------------------------

def full_turns(ctx: Context, turns: Sequence[Turn]) -> list[FullTurn]:
    """Each turn with its full result: the stored one for the latest replies, recomputed for the rest.

    Commands are deterministic and encodings are cached, so a recomputed result equals the
    one the visitor saw (its time is the original's). A turn that cannot run again (its
    model or upload is gone) keeps its text, with a warning saying why; a conversation
    command (`history`) keeps its text as it was.
    """
    out: list[FullTurn] = []
    for index, turn in enumerate(turns):
        result = ctx.session.stored(turn)
        if result is None:
            ctx.progress(index / max(1, len(turns)), f"recomputing {turn.command} ({index + 1} of {len(turns)})")
            result = _recompute(ctx, turn)
        out.append(FullTurn(turn.line, turn.model, result, turn.number))
    return out


def _recompute(ctx: Context, turn: Turn) -> Result:
    """Run ``turn``'s command line again on its model, in a copy of the conversation."""
    text_only = Result(turn.command, turn.text, settings=dict(turn.settings), model=turn.model,
                       elapsed_ms=turn.elapsed_ms)
    if turn.command in META:
        return text_only
    try:
        inv = parse(turn.line, ctx.commands, ctx.settings)
        session = dataclasses.replace(ctx.session, model=turn.model, turns=[])
        result = ctx.commands[inv.verb].run(dataclasses.replace(ctx, session=session), inv)
    except UserError as exc:
        note = f"This turn could not be recomputed for the export ({exc}); its answer's text is as it was."
        return dataclasses.replace(text_only, warnings=[note])
    return dataclasses.replace(result, elapsed_ms=turn.elapsed_ms)


# --- again ------------------------------------------------------------------------------

def previous_line(history: Sequence[str], table: Mapping[str, Command]) -> str:
    """The last command line of the conversation that is not about the conversation itself."""
    for line in reversed(history):
        verb = line.strip().split(None, 1)[0].lower() if line.strip() else ""
        spec = table.get(verb)
        if spec is not None and spec.name not in META:
            return line
    raise UserError("There is no earlier command to run again; run one first, for example "
                    "`attend The cat sat on the mat --layer 1`, then `again --layer 2`.")


def merged_line(previous: str, inv: Invocation, table: Mapping[str, Command],
                settings: Settings | None = None) -> str:
    """``previous`` with the texts and options of ``again`` (``inv``) merged in, checked by re-parsing.

    Options given to `again` replace the previous values; ``--name default`` removes one
    (``--flag off`` too); texts given to `again` replace the previous texts. An option that picks what the reply
    shows (:attr:`Option.view`) goes when another changes the results it picked from.
    """
    before = parse(previous, table, settings)
    spec = table[before.verb]
    values = option_values(before, spec)
    was = dict(values)
    for dest, raw in inv.options.items():
        option = next((o for o in spec.options if o.dest == dest), None)
        name = option.name if option is not None else dest.replace("_", "-")
        if raw is not None and raw.strip().lower() == DEFAULT or (
                option is not None and option.is_flag and raw is not None and raw.lower() in ("off", "no", "false")):
            values.pop(name, None)
        elif option is not None and option.is_flag:
            values[name] = ""
        else:  # None (a missing value) is refused by the re-parse with the option's usual sentence
            values[name] = None if raw is None else _value_token(raw)
    made_anew = any(not option.view and values.get(option.name) != was.get(option.name)
                    for option in spec.options)  # ("into 6 groups" after `clusters --k 4 --group 2`: no group 2)
    for option in spec.options if made_anew else ():
        if option.view and option.dest not in inv.options:
            values.pop(option.name, None)
    texts = list(inv.texts) or list(before.texts)
    parts = [spec.name] + ([" | ".join(_quoted(t) for t in texts)] if texts else [])
    parts += [f"--{name}" if not value else f"--{name} {value}" for name, value in values.items()]
    line = " ".join(parts)
    after = parse(line, table, settings)  # the command's own checks and messages
    if after.texts != texts:
        raise UserError("`again` cannot rebuild these texts (quotes, `|` or `--` inside them); "
                        "type the whole command instead.")
    return after.line


def option_values(inv: Invocation, spec: Command) -> dict[str, str]:
    """The options ``inv`` (a line of ``spec``) sets away from their defaults, as typed: name -> value ("" for a
    flag, ``a,b`` for a list)."""
    values = {}
    for option in spec.options:
        value = inv.options.get(option.dest)
        if value is not None and value is not False and value != option.default:
            values[option.name] = _token(option, value)
    return values


def _token(option: Option, value: Any) -> str:
    if option.is_flag:
        return ""
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return _value_token(str(value))


def _value_token(value: str) -> str:
    """An option value as one token: quoted when it holds spaces or `|`."""
    if value and not any(ch.isspace() or ch == "|" for ch in value):
        return value
    mark = "'" if '"' in value else '"'
    return f"{mark}{value}{mark}"


def _quoted(text: str) -> str:
    """A text as the parser reads it back: quoted when it holds `|`, `--` or starts with a quote."""
    needs = "|" in text or "--" in text or text[:1] in "\"'" or text != text.strip()
    if not needs:
        return text
    for mark in ('"', "'"):
        if f"{mark} " not in text and f"{mark}|" not in text and not text.endswith(mark):
            return f"{mark}{text}{mark}"
    return text


def again_note(line: str) -> str:
    """The sentence that opens a re-run's reply."""
    return f"Re-ran {code(line, 200)}."
