"""The words of the benchmark family: the benchmark's facts turned into a Result.

This is the only place the family writes sentences, names tables, builds the chart and the
downloads; :mod:`~tools.benchmark.run` computes :mod:`~tools.benchmark.facts` and calls this.
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pandas as pd

from tools import charts
from tools.benchmark.facts import BenchmarkRun, System, Timing
from tools.core.results import Artifact, Chart, Result, Table, csv_text, json_value
from tools.core.text import md
from tools.similarity.baselines import GLOVE_NAME


def benchmark(b: BenchmarkRun) -> Result:
    """Scores, edge cases and timing tables, the gold-vs-cosine chart, a summary and CSV / JSON downloads."""
    names = ", ".join(b.models)
    choices = {"data": b.source, "pairs": len(b.pairs), "pairs in data": b.total, "sample": b.sample,
               "seed": b.seed, "models": names,
               "pool": ", ".join(sorted({p for ps in b.poolings.values() for p in ps})),
               "threshold": b.threshold}
    chart, chart_note = _chart(b)
    text = _summary(b, chart_note)
    return Result(
        "benchmark", text,
        [Table("scores", b.scores.drop(columns=["kind"])), Table("edge cases", b.edges),
         Table("timing", pd.DataFrame([_timing_row(t) for t in b.timings]))],
        [Chart("gold vs cosine", chart)], b.warnings, names, settings=choices,
        artifacts=_artifacts(choices, b.scores, b.edges, _per_pair(b.pairs, b.systems[:-1])),
    )


def _timing_row(t: Timing) -> dict[str, Any]:
    return {"model": t.model, "sentences": t.sentences, "encode s": round(t.seconds, 3),
            "sentences/s": round(t.sentences / t.seconds, 1) if t.seconds else None,
            "truncated": t.truncated, "device": t.device}


def _chart(b: BenchmarkRun) -> tuple[Any, str]:
    """One scatter panel per model system, over ``chart_rows``, and the note when those are a sample."""
    frame, keep = b.pairs, b.chart_rows
    n = len(frame)
    note = ""
    if n > b.chart_per_panel:
        note = (f"The chart shows a stratified sample of {b.chart_per_panel:,} of the {n:,} pairs in each panel "
                f"(charts stay under {b.chart_limit:,} points); the tables use every pair.")
    tidy = pd.concat([
        pd.DataFrame({"panel": s.name, "pair": keep, "genre": frame["genre"].to_numpy()[keep],
                      "gold": frame["score"].to_numpy()[keep], "cosine": np.round(s.cosine[keep], 4),
                      "sentence1": frame["sentence1"].to_numpy()[keep],
                      "sentence2": frame["sentence2"].to_numpy()[keep]})
        for s in b.systems if s.kind == "model"
    ], ignore_index=True)
    chart = charts.scatter_panels(tidy, "gold", "cosine", color="genre", panel="panel",
                                  tooltip=["pair", "genre", "gold", "cosine", "sentence1", "sentence2"],
                                  title="Gold score against cosine similarity")
    return chart, note


def _per_pair(frame: pd.DataFrame, systems: tuple[System, ...]) -> pd.DataFrame:
    out = frame[["genre", "sentence1", "sentence2", "score"]].rename(columns={"score": "gold"}).copy()
    for s in systems:
        out[f"cosine: {s.name}"] = np.round(s.cosine, 6)
    return out


def _artifacts(choices: dict[str, Any], scores: pd.DataFrame, edges: pd.DataFrame,
               per_pair: pd.DataFrame) -> list[Artifact]:
    buffer = io.StringIO()
    buffer.write(csv_text(per_pair.rename_axis("pair").reset_index()))
    summary = {
        "settings": {k: json_value(v) for k, v in choices.items()},
        "scores": [{k: json_value(v) for k, v in row.items()} for row in scores.to_dict("records")],
        "edge_cases": [{k: json_value(v) for k, v in row.items()} for row in edges.to_dict("records")],
    }
    return [
        Artifact("benchmark_scores.csv", csv_text(scores).encode(), "text/csv"),
        Artifact("benchmark_pairs.csv", buffer.getvalue().encode(), "text/csv"),
        Artifact("benchmark.json", json.dumps(summary, indent=2).encode(), "application/json"),
    ]


#: Within this many points (Spearman x 100) of the published figure, a score is "in line with" it.
IN_LINE = 1.0


def _against_published(b: BenchmarkRun, best: pd.Series) -> list[str]:
    """The answer first: the best score against its model's published figure, or that there is none."""
    model, score = str(best["model"]), float(best["spearman"])
    found = b.published.get(model)
    system = md(str(best["system"]))
    if found is None:
        return [f"The best system, **{system}**, scores Spearman **{score:.2f}**; {md(model)} has no published "
                "STS-B figure here to read it against."]
    gap = score - found.spearman
    how = ("In line with the published figure" if abs(gap) <= IN_LINE else
           "Above the published figure" if gap > 0 else "Below the published figure")
    differs = []
    if b.source != found.split:
        differs.append(f"it is for {found.split}" + (", whose pairs are harder than dev's" if b.source == "stsb-dev"
                                                     else ""))
    if str(best["pooling"]) != found.pooling:
        differs.append(f"with {found.pooling} pooling")
    if b.sample is not None and len(b.pairs) < b.total:
        differs.append(f"on every pair, not a sample of {len(b.pairs):,}")
    caveat = f" Not the same measurement: {', '.join(differs)}." if differs else ""
    return [f"**{how}**: {system} scores Spearman **{score:.2f}** against {md(model)}'s published "
            f"{found.spearman:.2f} on {found.split} ({gap:+.2f}), from {found.source}.{caveat}"]


def _summary(b: BenchmarkRun, chart_note: str) -> str:
    n, cut = len(b.pairs), b.threshold
    data = f"**{md(b.source)}**, {n:,} pairs"
    if b.sample is not None and n < b.total:
        data += f" (a sample stratified by gold-score bins from {b.total:,}, seed {b.seed})"
    pools = "; ".join(f"{md(m)}: {', '.join(b.poolings[m])}" for m in b.models)
    best = b.scores[b.scores["system"] == b.best].iloc[0]
    by_name = b.scores.set_index("system")
    glove = by_name.loc[f"{GLOVE_NAME} (average)", "spearman"]
    shuffled = by_name.iloc[-1]
    lines = [
        *_against_published(b, best),
        f"STS benchmark on {data}. Pooling by model: {pools}. A pair counts as a paraphrase when gold ≥ {cut:g}.",
        f"Best: **{md(best['system'])}**, Spearman **{best['spearman']:.2f}**, Pearson {best['pearson']:.2f} "
        f"(x 100); at cosine ≥ {best['best threshold']:.3f} (the best-F1 threshold) F1 {best['f1']:.3f}, "
        f"accuracy {best['accuracy']:.3f}. GloVe average: Spearman {glove:.2f}.",
        f"Unrelated (shuffled) pairs average cosine {shuffled['mean cosine']:.3f} with "
        f"{md(by_name.index[0])}, against {by_name.iloc[0]['mean cosine']:.3f} for the real pairs: "
        "a cosine means something only relative to that floor.",
        "The edge-case table lists the pairs whose cosine rank and gold rank differ most "
        f"({md(best['system'])}).",
    ]
    if chart_note:
        lines.append(chart_note)
    return "\n\n".join(lines)
