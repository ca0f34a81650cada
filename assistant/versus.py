"""`--vs MODEL`: run a command on the conversation's model and on another one, and join the answers.

Each model's answer is exactly that model's own reply (the same handler runs twice,
once with the other model as the conversation's); the joined reply has every table
once, with a ``model`` column, each chart drawn once per model side by side, and one
sentence on where the two answers differ.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable

import altair as alt
import numpy as np
import pandas as pd

from assistant.commands.options import Option
from assistant.commands.spec import CommandSpec, Context, Handler, Invocation
from tools.charts import why as why_charts
from tools.core.errors import UserError
from tools.core.results import Chart, Result, Table
from tools.core.text import code, md
from tools.models.hub import LoadedModel
from tools.models.names import ALIASES, EMBEDDED, FAST_SUFFIX

#: The commands that take ``--vs``.
VERSUS = ("compare", "word", "tokenize", "attend", "neighbors", "why")

VS = Option("vs", "str", "also answer with this model, side by side (minilm:int8, bert-small, a local folder)")


def enable(spec: CommandSpec) -> CommandSpec:
    """The row with ``--vs`` added, when its command is one of :data:`VERSUS`; other rows unchanged."""
    if spec.name not in VERSUS:
        return spec
    return dataclasses.replace(spec, run=side_by_side(spec.run), options=(*spec.options, VS),
                               usage=f"{spec.usage} [--vs MODEL]")


def refusal(verb: str) -> str:
    """The sentence for ``--vs`` on a command that does not take it."""
    return (f"`{verb}` does not take --vs; the commands that compare two models side by side are "
            + ", ".join(f"`{v}`" for v in VERSUS) + ".")


def side_by_side(handler: Handler) -> Handler:
    """Wrap a handler: without ``--vs`` it runs as before; with it, once per model, and the replies are joined."""

    def run(ctx: Context, inv: Invocation) -> Result:
        options = dict(inv.options)
        other = (options.pop("vs", None) or "").strip()
        plain = dataclasses.replace(inv, options=options)
        if not other:
            return handler(ctx, plain)
        first = ctx.model()
        second = _load(ctx, other)
        if second is first:
            raise UserError(f"--vs {code(other, 40)} is the model this conversation already uses ({first.name}); "
                            "name another one, like `minilm:int8` or `bert-small`.")
        mine = handler(ctx, plain)
        theirs = handler(dataclasses.replace(ctx, session=dataclasses.replace(ctx.session, model=other)), plain)
        return join(mine, theirs)

    run.__name__ = f"versus_{getattr(handler, '__name__', 'handler')}"
    return run


def _load(ctx: Context, name: str) -> LoadedModel:
    """The ``--vs`` model, or its loading sentence with a did-you-mean among the names that work offline."""
    try:
        return ctx.model(name)
    except UserError as exc:
        known = [*EMBEDDED, *ALIASES, *(f"{n}{FAST_SUFFIX}" for n in EMBEDDED)]
        close = [c for c in difflib.get_close_matches(name.lower(), known, n=2, cutoff=0.6) if c != name.lower()]
        hint = (" Did you mean " + " or ".join(f"`{c}`" for c in close) + "?") if close else ""
        raise UserError(f"--vs: {str(exc).rstrip()}{hint}") from exc


# --- joining two replies ------------------------------------------------------------------

def join(a: Result, b: Result) -> Result:
    """One reply from two models' replies to the same command."""
    names = (a.model or "model 1", b.model or "model 2")
    if names[0] == names[1]:
        names = (f"{names[0]} (1)", f"{names[1]} (2)")
    tables = _tables(a, b, names)
    charts = _charts(a, b, names)
    differ = DIFFERENCES.get(a.command, _generic)(a, b, names)
    text = (f"**{md(names[0])}** vs **{md(names[1])}**: {differ}\n\n"
            f"**{md(names[0])}**: {a.text}\n\n**{md(names[1])}**: {b.text}")
    warnings = [f"{names[0]}: {w}" for w in a.warnings] + [f"{names[1]}: {w}" for w in b.warnings]
    settings = {**a.settings, "vs": names[1], "models": f"{names[0]}, {names[1]}"}
    return Result(a.command, text, tables, charts, warnings, a.model, settings=settings,
                  artifacts=[dataclasses.replace(x, filename=f"{_slug(n)}-{x.filename}")
                             for n, r in zip(names, (a, b)) for x in r.artifacts])


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


def _tables(a: Result, b: Result, names: tuple[str, str]) -> list[Table]:
    theirs = {t.name: t.frame for t in b.tables}
    out: list[Table] = []
    for t in a.tables:
        other = theirs.pop(t.name, None)
        if other is not None and list(other.columns) == list(t.frame.columns):
            out.append(Table(t.name, pd.concat([t.frame.assign(model=names[0]), other.assign(model=names[1])],
                                               ignore_index=True)[["model", *t.frame.columns]]))
        else:
            out.append(Table(f"{t.name} ({names[0]})", t.frame.assign(model=names[0])[["model", *t.frame.columns]]))
            if other is not None:
                out.append(Table(f"{t.name} ({names[1]})", other.assign(model=names[1])[["model", *other.columns]]))
    out += [Table(f"{n} ({names[1]})", f.assign(model=names[1])[["model", *f.columns]]) for n, f in theirs.items()]
    return out


def _titled(chart: alt.TopLevelMixin, name: str) -> alt.TopLevelMixin:
    title = chart.title if isinstance(chart.title, str) else ""
    return chart.properties(title=title if name in title else (f"{name} — {title}" if title else name))


def _charts(a: Result, b: Result, names: tuple[str, str]) -> list[Chart]:
    out: list[Chart] = []
    if a.command == "attend":
        out.append(Chart("patterns", _pattern_chart(a, b, names)))
        if a.settings.get("view") == "model":  # every layer x head, twice, is too much to draw
            return out
    theirs = {c.name: c.chart for c in b.charts}
    for c in a.charts:
        other = theirs.get(c.name)
        if other is None:
            out.append(Chart(c.name, _titled(c.chart, names[0])))
            continue
        wide = not all(isinstance(x, (alt.Chart, alt.LayerChart)) for x in (c.chart, other))
        pair = (_titled(c.chart, names[0]), _titled(other, names[1]))
        out.append(Chart(c.name, alt.vconcat(*pair) if wide else alt.hconcat(*pair)))
    return out


def _pattern_chart(a: Result, b: Result, names: tuple[str, str]) -> alt.TopLevelMixin:
    frames = []
    for name, r in zip(names, (a, b)):
        scores = r.table("patterns")
        patterns = [c for c in scores.columns if c not in ("layer", "head", "entropy (bits)", "entropy")]
        long = scores.melt(id_vars=["layer", "head"], value_vars=patterns, var_name="pattern", value_name="score")
        frames.append(long.assign(model=name))
    return why_charts.pattern_heatmaps(pd.concat(frames, ignore_index=True),
                                       title="What each head does (mean attention on each pattern)")


# --- one sentence on where the answers differ ----------------------------------------------

def _generic(a: Result, b: Result, names: tuple[str, str]) -> str:
    return "both answers are below, side by side in each table and chart."


def _compare(a: Result, b: Result, names: tuple[str, str]) -> str:
    fa, fb = a.tables[0].frame, b.tables[0].frame
    if "cosine" in fa.columns:
        parts = [f"{ra.pooling} {ra.cosine:.4f} vs {rb.cosine:.4f} ({rb.cosine - ra.cosine:+.4f})"
                 for ra, rb in zip(fa.itertuples(), fb.itertuples())]
        return "cosine " + "; ".join(parts) + "."
    da, db = fa.set_index("text").to_numpy(float), fb.set_index("text").to_numpy(float)
    gap = float(np.abs(da - db).max())
    return (f"the similarity matrices differ by at most {gap:.4f} in a cell; "
            f"{_best_pair(fa)} is the closest pair for {md(names[0])}, {_best_pair(fb)} for {md(names[1])}.")


def _best_pair(frame: pd.DataFrame) -> str:
    m = frame.set_index("text")
    values = m.to_numpy(float).copy()
    np.fill_diagonal(values, -np.inf)
    i, j = np.unravel_index(np.argmax(values), values.shape)
    return f"{i + 1}–{j + 1}"


def _word(a: Result, b: Result, names: tuple[str, str]) -> str:
    fa, fb = a.table("strategies"), b.table("strategies")
    merged = fa.merge(fb, on="strategy", suffixes=(" a", " b"))
    if merged.empty:
        return _generic(a, b, names)
    diff = (merged["mean cosine b"] - merged["mean cosine a"])
    k = int(diff.abs().idxmax())
    row = merged.loc[k]
    return (f"mean cosine between occurrences differs most for the `{row['strategy']}` strategy: "
            f"{row['mean cosine a']:.4f} vs {row['mean cosine b']:.4f} ({diff[k]:+.4f}).")


def _tokenize(a: Result, b: Result, names: tuple[str, str]) -> str:
    ta, tb = list(a.table("tokens")["token"]), list(b.table("tokens")["token"])
    if ta == tb:
        return f"both split the text into the same {len(ta)} tokens."
    k = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), min(len(ta), len(tb)))
    first = (f"; the first difference is at position {k} ({code(ta[k], 20) if k < len(ta) else 'end'} vs "
             f"{code(tb[k], 20) if k < len(tb) else 'end'})")
    return f"{len(ta)} tokens vs {len(tb)}{first}."


def _attend(a: Result, b: Result, names: tuple[str, str]) -> str:
    sa, sb = a.table("patterns"), b.table("patterns")
    patterns = [c for c in sa.columns if c not in ("layer", "head") and not c.startswith("entropy")]
    moved = []
    for p in patterns:
        ra, rb = sa.loc[sa[p].idxmax()], sb.loc[sb[p].idxmax()]
        if (ra["layer"], ra["head"]) != (rb["layer"], rb["head"]):
            moved.append(f"{p}: layer {int(ra['layer'])} head {int(ra['head'])} ({ra[p]:.2f}) vs layer "
                         f"{int(rb['layer'])} head {int(rb['head'])} ({rb[p]:.2f})")
    text = ("the strongest head for each pattern is the same in both" if not moved
            else "the strongest head moves for " + "; ".join(moved))
    if sa.shape == sb.shape:
        gap = np.abs(sa[patterns].to_numpy(float) - sb[patterns].to_numpy(float))
        k = np.unravel_index(int(gap.argmax()), gap.shape)
        text += (f"; per-head pattern scores differ by at most {float(gap.max()):.4f} (layer "
                 f"{int(sa['layer'][k[0]])} head {int(sa['head'][k[0]])}, {patterns[k[1]]})")
    return text + "."


def _neighbors(a: Result, b: Result, names: tuple[str, str]) -> str:
    na, nb = list(a.table("neighbours")["neighbour"]), list(b.table("neighbours")["neighbour"])
    shared = [w for w in na if w in set(nb)]
    only = [w for w in na if w not in set(nb)][:3]
    rest = f"; only {md(names[0])} has {', '.join(md(w) for w in only)}" if only else ""
    return f"{len(shared)} of {len(na)} neighbours are shared{rest}."


def _why(a: Result, b: Result, names: tuple[str, str]) -> str:
    ca, cb = float(a.settings.get("cosine", np.nan)), float(b.settings.get("cosine", np.nan))
    ta, tb = a.table("tokens"), b.table("tokens")
    same_tokens = list(ta["token"]) == list(tb["token"])
    text = f"cosine {ca:.4f} vs {cb:.4f} ({cb - ca:+.4f})"
    if same_tokens:
        gap = float(np.abs(ta["contribution"].to_numpy() - tb["contribution"].to_numpy()).max())
        k = int(np.abs(ta["contribution"].to_numpy() - tb["contribution"].to_numpy()).argmax())
        text += f"; token contributions differ by at most {gap:.4f} (at {code(ta['token'][k], 20)})"
    else:
        text += "; the two tokenizers split the texts differently"
    return text + "."


DIFFERENCES: dict[str, Callable[[Result, Result, tuple[str, str]], str]] = {
    "compare": _compare, "word": _word, "tokenize": _tokenize, "attend": _attend, "neighbors": _neighbors,
    "why": _why,
}
