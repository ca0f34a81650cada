"""The words of the inspection family: each function turns one tool's facts into a Result.

This is the only place the family writes sentences, names tables and builds charts; the
tools in this package compute :mod:`~tools.inspection.facts` and call these.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from tools import charts
from tools.charts import why as why_charts
from tools.core.results import Chart, Result, Table
from tools.core.text import code, md
from tools.inspection.facts import FillReasons, Fills, ModelFacts, Tokens

#: Tokens named per mask in the ``mask --why`` reply.
NAMED = 3


def mask(f: Fills) -> Result:
    """A table per mask, the joint filling (several masks), the attention table, and bars of the candidates."""
    n = len(f.candidates)
    tables = [Table(f"mask {m + 1}", frame) for m, frame in enumerate(f.candidates)]
    joint_text = ""
    if f.joint is not None:
        tables.append(Table("joint filling", f.joint))
        joint_text = (f"\n\nBest joint filling (greedy, left to right: each mask takes its top token given "
                      f"the ones already filled): **{md(f.joint_sentence)}** (joint probability "
                      f"{f.joint_probability:.3g}).")
    tables.append(Table("attention", f.attention))
    chart_rows = [{"mask": f"mask {m + 1}", "rank": r.rank, "token": r.token, "probability": r.probability,
                   "candidate": f"{'mask ' + str(m + 1) + ' · ' if n > 1 else ''}{r.rank}. {r.token}"}
                  for m, frame in enumerate(f.candidates) for r in frame.itertuples()]
    chart = charts.bars(pd.DataFrame(chart_rows), "candidate", "probability", sort=None,
                        color="mask" if n > 1 else None, tooltip=["mask", "rank", "token"],
                        title=f"Top {f.top} fills per mask ({f.model})" if n > 1 else f"Top {f.top} fills ({f.model})")
    translated = sorted({t for t in f.typed if t != f.mask_token})
    note = (f" {', '.join(code(t, 20) for t in translated)} was read as {md(f.model)}'s mask token "
            f"{code(f.mask_token, 20)}." if translated else "")
    best = "; ".join(
        f"mask {m + 1}: " + ", ".join(
            f"{'**' + md(r.token) + '**' if r.rank == 1 else md(r.token)} {r.probability:.3f}"
            for r in frame.head(min(f.top, 5)).itertuples())
        for m, frame in enumerate(f.candidates))
    fallback = f" (fallback: {md(f.conversation_model)} has no masked-LM head)" if f.fell_back else ""
    text = (f"Top {f.top} fill{'s' if f.top > 1 else ''} for {n} mask{'s' if n > 1 else ''} from **{md(f.model)}**"
            f"{fallback}, {'each mask on its own, ' if n > 1 else ''}special tokens left out.{note} {best}."
            f"{joint_text}")
    settings = {"top": f.top, "masks": n, "mlm_model": f.model, "conversation_model": f.conversation_model,
                "fallback": f.fell_back, "mask_token": f.mask_token,
                "joint": "greedy left to right" if n > 1 else ""}
    return Result("mask", text, tables, [Chart("probabilities", chart)], f.warnings, f.model, settings=settings)


def mask_why(r: FillReasons) -> Result:
    """The ``mask`` reply plus a ``why`` table, a ``completeness`` table and bars over the sentence."""
    result = mask(r.fills)
    parts = []
    for m, frame in r.contributions.groupby("mask", sort=True):
        fill = frame["fill"].iloc[0]
        named = frame[frame["kind"] != "special"].sort_values("contribution", ascending=False).head(NAMED)
        parts.append(f"{code(fill, 20)} for mask {m} comes most from "
                     + ", ".join(f"{code(t.token, 20)} ({t.contribution:+.3f})" for t in named.itertuples()))
    check = r.completeness
    note = f" (the first {r.explained_limit} masks; {r.skipped} more not explained)" if r.skipped else ""
    steps = int(check["steps"].max())
    text = (f"{result.text}\n\n**Why** (integrated gradients of the top fill's logit, {steps} steps; baseline: "
            f"{r.baseline} and the masks){note}: {'; '.join(parts)}. Completeness: the attributions add up to the "
            f"logit minus the baseline's within {float(check['relative gap'].max()):.1%}.")
    bars = r.contributions.copy()
    bars.insert(2, "text", [f"mask {m} → {fill}" for m, fill in zip(bars["mask"], bars["fill"])])
    bars.insert(5, "label", [f"{p} {t}" for p, t in zip(bars["position"], bars["token"])])
    chart = why_charts.token_bars(bars, title=f"Which tokens drove the top fill ({r.fills.model}, "
                                              "integrated gradients)")
    return dataclasses.replace(
        result, text=text,
        tables=[*result.tables, Table("why", r.contributions), Table("completeness", check)],
        charts=[*result.charts, Chart("why", chart)],
        settings={**result.settings, "why": "integrated gradients", "steps": steps, "baseline": r.baseline},
    )


def tokenize(t: Tokens) -> Result:
    """A tokens table, a round-trip table, a token strip, and warnings about truncation."""
    frame = t.frame
    pair = t.texts[1] if len(t.texts) == 2 else None
    kept = int((frame["kind"] != "padding").sum())
    dropped = t.full_tokens - kept
    warnings = []
    if dropped > 0:
        warnings.append(f"Truncation at {t.limit} tokens dropped {dropped} of {t.full_tokens} tokens.")
    elif t.full_tokens > t.max_tokens:
        warnings.append(f"This input has {t.full_tokens} tokens but {t.model} reads at most {t.max_tokens}; "
                        "add --truncation to see what it keeps.")
    source = t.texts[0] if pair is None else f"{t.texts[0]} {pair}"
    round_trip = pd.DataFrame({
        "form": ["input", "decoded (special tokens skipped)", "decoded (with special tokens)"],
        "text": [source if pair is None else f"{t.texts[0]} | {pair}", t.decoded, t.with_specials],
    })
    n_pieces = int(frame["word piece"].sum())
    n_special = int(frame["special"].sum())
    text = (
        f"**{len(frame)} tokens** ({kept - n_special} from the text, {n_pieces} of them word pieces, "
        f"{n_special} special{', ' + str(len(frame) - kept) + ' padding' if len(frame) > kept else ''})"
        f"{' for the pair' if pair else ''}. "
        + _round_trip(t, source)
    )
    strip = frame.assign(text="A" if pair is None else frame["segment"].replace("", "special"))
    strip = strip.head(charts.MAX_ROWS)
    if pair is None:
        strip = strip.assign(text="text")
    chart = charts.token_strip(strip[strip["position"] < 200],
                               title="Tokens (first 200)" if len(frame) > 200 else "Tokens")
    return Result(
        command="tokenize",
        text=text,
        tables=[Table("tokens", frame.drop(columns=["kind"])), Table("round trip", round_trip)],
        charts=[Chart("tokens", chart)],
        warnings=warnings,
        model=t.model,
        settings={"max_length": t.max_length, "padding": t.padding, "truncation": t.truncation},
    )


#: The backends' names as a person reads them.
BACKEND_WORDS = {"torch": "PyTorch fp32", "onnx": "ONNX Runtime fp32", "onnx-int8": "ONNX Runtime int8",
                 "torch-int8": "PyTorch int8", "openvino-bf16": "OpenVINO bf16"}


def path_sentence(f: ModelFacts) -> str:
    """Where its passes run on this CPU, and what was measured on a CPU of this kind (or that nothing was)."""
    words = {k: BACKEND_WORDS.get(v, v) for k, v in f.paths.items()}
    assert f.cpu is not None
    if words["chat"] == words["bulk"]:
        runs = f"Hidden states run on {words['bulk']}"
    else:
        runs = (f"A chat's few texts run on {words['chat']}, batches of {f.bulk_rows} or more on {words['bulk']} "
                "(exported once, on the first such batch)")
    where = f"{runs}; attention weights on {words['attention']}. This CPU: {f.cpu.name} ({f.cpu.kind.value})"
    if f.measured is None:
        where += "; no CPU of this kind has been measured against sentence-transformers yet."
    else:
        which = "this CPU model" if f.measured.family_model == f.cpu.family_model else "a CPU of this kind"
        where += f"; on {which} ({f.measured.cpu}) {_fast_or_full(f)}."
    if f.kernel is not None:
        where += f" The fast path runs {f.kernel.kernel.words} on this CPU: {f.kernel.why}."
    return where


def _fast_or_full(f: ModelFacts) -> str:
    assert f.measured is not None
    bulk = f.paths.get("bulk", "")
    if "bf16" in bulk and f.measured.bf16:
        return f"the bf16 path measured {f.measured.bf16}"
    return f"the int8 path measured {f.measured.fast}" if "int8" in bulk else \
        f"full precision measured {f.measured.full}"


def path_rows(f: ModelFacts) -> list[tuple[str, str]]:
    """The property table's rows on where passes run."""
    if f.cpu is None:
        return [("passes run on", BACKEND_WORDS.get(f.paths.get("bulk", ""), f.paths.get("bulk", "")))]
    rows = [(f"{kind} passes", BACKEND_WORDS.get(name, name)) for kind, name in f.paths.items()]
    rows.append(("CPU", f"{f.cpu.name} ({f.cpu.family_model}; {', '.join(sorted(f.cpu.flags)) or 'no flags read'})"))
    rows.append(("measured on this kind of CPU", "not yet" if f.measured is None else
                 f"{f.measured.cpu}: full precision {f.measured.full}; int8 {f.measured.fast}"
                 + (f"; bf16 {f.measured.bf16}" if f.measured.bf16 else "")))
    if f.kernel is not None:
        rows.append(("fast path's kernels", f"{f.kernel.kernel.value}: {f.kernel.why}"))
    return rows


def _round_trip(t: Tokens, source: str) -> str:
    """Whether decoding gives the input back, and why not: characters the vocabulary lacks, or normalisation."""
    seen = t.unseen
    lacks = ""
    if seen is not None and seen.unknown:
        chars = f" ({' '.join(seen.characters)})" if seen.characters else ""
        lacks = (f"{seen.unknown} of the tokens are [UNK]: characters {t.model}'s vocabulary lacks{chars}, which "
                 "the model sees as one and the same token and which decode to [UNK], not to the text. ")
    elif seen is not None and seen.letter_by_letter:
        lacks = (f"{seen.spelled} of the tokens are single letters: {t.model}'s vocabulary has no words of this "
                 "script, so it spells the text letter by letter. ")
    if t.decoded == source:
        return lacks + "The decoded text matches the input exactly."
    if lacks:
        return lacks + "Decoding does not give back the input exactly (see the round-trip table)."
    return ("Decoding does not give back the input exactly (see the round-trip table: "
            f"{t.model}'s tokenizer normalises case, accents or spacing).")


def describe(f: ModelFacts) -> Result:
    """A property table, the parameters per block and their bars."""
    recipe = f.sentence_recipe
    properties = [
        ("name", f.name),
        ("architecture", f.architecture),
        ("layers", f.num_layers),
        ("attention heads", f.num_heads),
        ("hidden size", f.hidden_size),
        ("intermediate size", f.intermediate_size),
        ("vocabulary size", f.vocabulary),
        ("parameters", f.parameters),
        ("input-embedding matrix", f"{f.embedding_shape[0]} x {f.embedding_shape[1]}"),
        ("max positions", f.max_tokens),
        ("dtype", f.dtype),
        ("device", f.device),
        ("sentence pooling (sbert)",
         "none" if recipe is None else f"{recipe['mode']}{', normalised' if recipe['normalize'] else ''}"
         f", {recipe['max_seq_length']} tokens"),
        ("loaded from", f"{f.source_kind}: {f.source_location}"),
        *path_rows(f),
    ]
    table = pd.DataFrame(properties, columns=["property", "value"]).astype({"value": str})
    groups = f.groups
    share = groups.loc[groups["block"] == "embeddings", "parameters"].sum() / f.parameters
    text = (
        f"**{f.name}** ({f.source_description or f.source_location}): {f.num_layers} layers x "
        f"{f.num_heads} heads, hidden size {f.hidden_size}, {f.vocabulary:,} tokens in the vocabulary, "
        f"{f.parameters / 1e6:.1f} M parameters ({share:.0%} in the embeddings), on {f.device}."
    )
    if f.cpu is not None:
        text += " " + path_sentence(f)
    chart = charts.bars(groups, "block", "parameters", title="Parameters per block", sort=None)
    return Result("model", text, [Table("model", table), Table("parameters", groups)],
                  [Chart("parameters", chart)], model=f.name)


def tokenize_difference(a: Tokens, b: Tokens, names: tuple[str, str]) -> str:
    """Whether two tokenizers split the text the same way, and where they first part."""
    ta, tb = list(tokenize(a).table("tokens")["token"]), list(tokenize(b).table("tokens")["token"])
    if ta == tb:
        return f"both split the text into the same {len(ta)} tokens."
    k = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), min(len(ta), len(tb)))
    first = (f"; the first difference is at position {k} ({code(ta[k], 20) if k < len(ta) else 'end'} vs "
             f"{code(tb[k], 20) if k < len(tb) else 'end'})")
    return f"{len(ta)} tokens vs {len(tb)}{first}."
