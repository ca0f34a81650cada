"""Words shared by every reply: user text put into markdown safely (a command is data, never markup),
and the name of a hidden state."""

from __future__ import annotations

import html
import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>-])")


def md(text: str) -> str:
    """Escape ``text`` for markdown and HTML: it shows literally and runs nothing."""
    flat = " ".join(str(text).split())
    return _MD_SPECIAL.sub(r"\\\1", html.escape(flat, quote=True))


def code(text: str, width: int = 80, path: bool = False) -> str:
    """``text`` as an inline code span, safe whatever backticks it holds, cut to ``width``: at its end, or, for a
    ``path``, in its middle (its start and its last folders, the ones that tell it apart, stay)."""
    flat = " ".join(str(text).split())
    if len(flat) > width:
        head = width // 3 if path else width - 1  # (the rest of the width, none at all without ``path``, is its end)
        flat = flat[:head] + "…" + flat[len(flat) - (width - 1 - head):]
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def layer_note(layer: int, num_layers: int) -> str:
    """Which hidden state, in words: 'last layer', 'layer 0 (the embedding output)' or 'layer k of n'."""
    if layer == num_layers:
        return "last layer"
    return "layer 0 (the embedding output)" if layer == 0 else f"layer {layer} of {num_layers}"


def text_label(index: int, text: str, width: int = 40) -> str:
    """A short, unique label for the ``index``-th text (0-based) in tables and charts: ``"2: A kitten sat."``."""
    short = " ".join(text.split())
    short = short if len(short) <= width else short[: width - 1] + "…"
    return f"{index + 1}: {short}"


def shorten(text: str, width: int) -> str:
    """``text`` (whitespace collapsed) cut to at most ``width`` characters at a word boundary, with an ellipsis
    when anything was left out (a single word longer than that is cut inside it)."""
    flat = " ".join(str(text).split())
    if len(flat) <= width:
        return flat
    cut = flat[: max(1, width - 1)]
    if " " in cut and not flat[len(cut)].isspace():
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,;:.") + "…"
