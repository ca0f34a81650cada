"""Put user text into markdown safely: a command is data, never markup."""

from __future__ import annotations

import html
import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>-])")


def md(text: str) -> str:
    """Escape ``text`` for markdown and HTML: it shows literally and runs nothing."""
    flat = " ".join(str(text).split())
    return _MD_SPECIAL.sub(r"\\\1", html.escape(flat, quote=True))


def code(text: str, width: int = 80) -> str:
    """``text`` as an inline code span, safe whatever backticks it holds, cut to ``width``."""
    flat = " ".join(str(text).split())
    if len(flat) > width:
        flat = flat[: width - 1] + "…"
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat else ""
    return f"{fence}{pad}{flat}{pad}{fence}"
