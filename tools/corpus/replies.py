"""The words of the corpus family: each function turns one tool's facts into a Result.

This is the only place the family writes sentences, names tables, builds charts and packs
downloads. Every table holds all its rows (the page folds long ones; JSON and CSV downloads
keep them all); every face writes each table as a CSV download with formula-looking cells
neutralised (:func:`tools.core.results.csv_text`), so a reply carries no second copy of them as
artifacts; charts stay under the chart-row limit.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pandas as pd

from tools import charts
from tools.core.results import Artifact, Chart, Result, Table
from tools.core.text import code, md
from tools.corpus.facts import (
    Clusters,
    CorpusInfo,
    CorpusList,
    CorpusMap,
    Duplicates,
    EncodeReport,
    Outliers,
    ReadReport,
    SearchHits,
)
from tools.corpus.read import RESERVED, clear_of

#: Bars one chart shows (the tables hold every row).
CHART_BARS = 50
POOLING_WORDS = {"sbert": "the model's own sentence-transformers pooling", "mean": "mean pooling of the last layer"}


def _label(row_id: int, text: str, width: int = 48) -> str:
    flat = " ".join(str(text).split())
    return f"#{row_id} " + (flat if len(flat) <= width else flat[: width - 1] + "…")


def _result(command: str, text: str, tables: list[Table], chart_list: list[Chart], info: CorpusInfo,
            settings: dict, warnings: list[str] | None = None) -> Result:
    return Result(command, text, tables, chart_list, warnings or [], info.model,
                  settings={"corpus": info.name, "pool": info.pooling, **settings})


def _mb(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB"


def _info_frame(infos: tuple[CorpusInfo, ...] | list[CorpusInfo]) -> pd.DataFrame:
    return pd.DataFrame([{
        "name": i.name, "rows": i.rows, "model": i.model, "pooling": i.pooling, "text column": i.text_column,
        "source": i.source, "encoded": f"{i.chunks_done}/{i.chunks_total} chunks", "complete": i.complete,
        "index": i.index_kind or "-", "index recall@10": i.index_recall,
        "MB on disk": round(i.bytes_on_disk / 2**20, 2),
        "created": i.created, "key": i.key,
    } for i in infos], columns=["name", "rows", "model", "pooling", "text column", "source", "encoded", "complete",
                                "index", "index recall@10", "MB on disk", "created", "key"])


def _read_warnings(r: ReadReport | dict) -> list[str]:
    def get(key: str) -> Any:
        return r.get(key) if isinstance(r, dict) else getattr(r, key)

    refused: dict[str, int] = get("refused") or {}
    out = [f"{n:,} row{'s' if n != 1 else ''} refused: {reason}." for reason, n in refused.items() if n]
    if get("truncated"):
        out.append(f"{get('truncated'):,} texts were cut to {get('max_chars'):,} characters "
                   "(ASSISTANT_CORPUS_MAX_CHARS).")
    if n := get("undecodable_lines"):
        one = n == 1
        out.append(f"{n:,} line{'' if one else 's'} {'was' if one else 'were'} not UTF-8; "
                   f"{'it was' if one else 'they were'} read as Windows-1252, as Excel saves a CSV on Western Windows "
                   "(é, ü, € kept); if letters look wrong, save the file as UTF-8.")
    return out


def loaded(read: ReadReport, report: EncodeReport) -> Result:
    """``corpus load``: rows kept, the text column and why, refusals; encoded now or reused."""
    info = report.info
    refused = sum(read.refused.values())
    how = {"given": "as asked", "longest": "the text column with the longest mean length",
           "only": "the only text column"}[read.chosen_by]
    if report.reused:
        done = f"It was already encoded ({info.rows:,} rows), so nothing was encoded again."
    elif report.chunks_skipped:
        done = (f"Encoding resumed: {report.chunks_skipped} of {info.chunks_total} chunks were already on disk; "
                f"{report.rows_encoded:,} rows encoded in {report.seconds:.1f} s.")
    else:
        done = f"{report.rows_encoded:,} rows encoded in {report.seconds:.1f} s ({report.engine} engine)."
    text = (f"Corpus **{md(info.name)}**: {read.rows_kept:,} texts from {code(read.source, 40)} "
            f"(column {code(read.text_column, 30)}, {how}), {refused:,} row{'s' if refused != 1 else ''} refused, "
            f"encoded with {info.model} and "
            f"{POOLING_WORDS.get(info.pooling, info.pooling)}. {done} "
            + (f"Metadata kept: {', '.join(_kept_as(c, read.renamed) for c in read.metadata_columns)}."
               if read.metadata_columns else "No other columns.")
            + (f" The earlier corpus of this file, which had the name, is kept as **{md(report.displaced)}**."
               if report.displaced else ""))
    reasons = pd.DataFrame({"reason": list(read.refused) + ["cut to the character limit", "lines not UTF-8"],
                            "rows": list(read.refused.values()) + [read.truncated, read.undecodable_lines]})
    columns = pd.DataFrame({"column": list(read.mean_lengths), "mean length": list(read.mean_lengths.values())})
    columns["taken as text"] = columns["column"] == read.text_column
    tables = [Table("corpus", _info_frame([info])), Table("refused", reasons), Table("columns", columns)]
    warnings = _read_warnings(read)
    if n := report.read_otherwise:
        one = n == 1
        warnings.append(f"{n:,} of its texts read{'s' if one else ''} otherwise now than when this corpus was encoded "
                        f"(an earlier version read the file), and {'its vector is' if one else 'their vectors are'} "
                        f"of the text{'' if one else 's'} as read then: `corpus drop {info.name}`, then load the file "
                        f"again, to encode {'it' if one else 'them'} as read now.")
    return _result("corpus", text, tables, [], info, {"column": read.text_column, "engine": report.engine}, warnings)


def info(i: CorpusInfo) -> Result:
    """``corpus info``: one corpus's facts."""
    state = "fully encoded" if i.complete else f"encoded {i.chunks_done} of {i.chunks_total} chunks"
    index = {"exact": "exact search", "hnsw": f"an HNSW index (recall@10 {i.index_recall:.4f} against exact)"
             if i.index_recall is not None else "an HNSW index"}.get(i.index_kind, "no index yet")
    text = (f"Corpus **{md(i.name)}**: {i.rows:,} texts from {code(i.source, 40)}, {state}, {i.model} with "
            f"{POOLING_WORDS.get(i.pooling, i.pooling)}, {index}, {_mb(i.bytes_on_disk)} on disk.")
    tables = [Table("corpus", _info_frame([i]))]
    return _result("corpus", text, tables, [], i, {}, _read_warnings(i.read) if i.read else [])


def listing(c: CorpusList) -> Result:
    """``corpus list``: every corpus and the space they take."""
    if c.corpora:
        text = (f"{len(c.corpora)} {'corpora' if len(c.corpora) != 1 else 'corpus'}: "
                f"{', '.join(f'**{md(i.name)}** ({i.rows:,} rows)' for i in c.corpora)}; "
                f"{_mb(c.bytes_on_disk)} of {_mb(c.disk_limit_bytes)} on disk.")
    else:
        text = "No corpus yet; load one with `corpus load FILE` (CSV, TSV, JSONL, Parquet or TXT)."
    tables = [Table("corpora", _info_frame(c.corpora))]
    return Result("corpus", text, tables, [], [], "", settings={})


def dropped(i: CorpusInfo) -> Result:
    """``corpus drop``: what was deleted."""
    text = f"Dropped corpus **{md(i.name)}** ({i.rows:,} rows, {_mb(i.bytes_on_disk)} freed)."
    return Result("corpus", text, [Table("dropped", _info_frame([i]))], [], [], i.model, settings={"corpus": i.name})


def search(h: SearchHits) -> Result:
    """``search``: the closest rows per query, best first."""
    frame = h.hits
    first = frame[frame["query"] == h.queries[0]]
    best = first.iloc[0]
    where = "exact search" if h.index_kind == "exact" else "the HNSW index"
    over = f"{h.corpus.rows:,} rows" if not h.among else f"the {h.among:,} selected rows (of {h.corpus.rows:,})"
    said = h.query_texts[0] if h.query_texts else h.queries[0]
    query = code(h.queries[0], 60) if said == h.queries[0] else f"{h.queries[0]} {code(said, 60)}"
    text = (f"Closest to {query} in **{md(h.corpus.name)}**: #{int(best['id'])} "
            f"{code(best['text'], 80)} (cosine {best['score']:.4f}); {len(first)} hits by {where} over "
            f"{over}" + (f", the query encoded with {h.model} and {POOLING_WORDS.get(h.pooling, h.pooling)}."
                         if said == h.queries[0] else " from the row's stored vector (the row itself left out)."))
    if len(h.queries) > 1:
        text += f" {len(h.queries)} queries; every hit is in the table."
    follow = tuple(f"why {q} | #{int(i)}" for q, i in zip(frame["query"], frame["id"]))
    tables = [Table("hits", frame, follow, "why")]  # each hit one click from the tokens that made it close
    shown = first.head(CHART_BARS)
    shown = shown.assign(label=[_label(i, t) for i, t in zip(shown["id"], shown["text"])])
    chart = charts.bars(shown[["label", "score", "rank"]], "label", "score", title="Cosine to the query",
                        sort=list(shown["label"]), tooltip=["label", "rank"])
    return _result("search", text, tables, [Chart("hits", chart)], h.corpus, {"k": h.k})


def clusters(c: Clusters) -> Result:
    """``clusters``: groups with sizes, label words and representatives, and every row's group."""
    rows = c.rows
    groups = pd.DataFrame([{
        "cluster": g, "size": c.sizes[g], "share": c.sizes[g] / len(rows),
        "label words": ", ".join(w for w, _ in c.label_words[g]),
        **{f"representative {j + 1}": _label(int(rows["id"].iat[r]), rows["text"].iat[r], 120)
           for j, r in enumerate(c.representatives[g])},
    } for g in range(c.k)])
    assigned = rows[["id", "text"]].assign(cluster=c.labels)
    words = pd.DataFrame([{"cluster": g, "rank": j + 1, "word": w, "c-TF-IDF": s}
                          for g in range(c.k) for j, (w, s) in enumerate(c.label_words[g])],
                         columns=["cluster", "rank", "word", "c-TF-IDF"])
    tables = [Table("clusters", groups), Table("rows", assigned), Table("label words", words)]
    if c.silhouettes:
        scores = pd.DataFrame({"k": list(c.silhouettes), "silhouette": list(c.silhouettes.values())})
        tables.append(Table("silhouettes", scores))
        how = (f"k = {c.k} chosen by the best mean cosine silhouette ({c.silhouettes[c.k]:.3f}) on a "
               f"{c.sample_rows:,}-row sample among k = {min(c.silhouettes)}..{max(c.silhouettes)}")
    else:
        how = f"k = {c.k} as asked"
    largest = max(range(c.k), key=lambda g: c.sizes[g])
    top = ", ".join(w for w, _ in c.label_words[largest][:4]) or "no label words"
    where = (f"{c.corpus.rows:,} rows" if len(rows) == c.corpus.rows
             else f"the selection: {len(rows):,} of its {c.corpus.rows:,} rows")
    how += "; the groups of the last run of this k and seed, read back" if c.reused else ""
    text = (f"**{c.k} clusters** in **{md(c.corpus.name)}** ({where}; {how}; {c.method}, "
            f"seed {c.seed}); "
            f"the largest, cluster {largest} ({c.sizes[largest]:,} rows), is about {md(top)}. "
            f"{c.unassigned} rows are unassigned (k-means puts every row in a group). Label words are c-TF-IDF "
            "(each cluster's texts as one document: word frequency x log(1 + mean words per cluster / the word's "
            "count in all clusters)).")
    said = {"k": c.k, "chosen by": c.chosen_by, "seed": c.seed}
    if c.shown is not None:
        text, table = _group_shown(c, c.shown, where, how)
        tables.insert(0, table)
        said["group"] = c.shown
    frame = groups.assign(label=[f"{g}: {w[:40]}" for g, w in zip(groups["cluster"], groups["label words"])])
    frame = frame.assign(rows=["listed below" if g == c.shown else "the others" for g in frame["cluster"]])
    chart = charts.bars(frame[["label", "size", "rows"]], "label", "size", title="Rows per cluster",
                        sort=list(frame["label"]), color="rows" if c.shown is not None else None)
    return _result("clusters", text, tables, [Chart("sizes", chart)], c.corpus, said)


def _group_shown(c: Clusters, g: int, where: str, how: str) -> tuple[str, Table]:
    """``clusters --group G``: what the group is about and its rows, closest to its centroid first."""
    members = list(c.members)
    rows = clear_of(c.rows, ("rank", "cosine to centre")).iloc[members].reset_index(drop=True)
    rows.insert(1, "cosine to centre", list(c.closeness))
    rows.insert(0, "rank", range(1, len(rows) + 1))
    about = ", ".join(w for w, _ in c.label_words[g][:4]) or "no label words"
    first = (f"closest to its centre is #{rows['id'].iat[0]} {code(rows['text'].iat[0], 80)} (cosine "
             f"{c.closeness[0]:.4f}); " if len(rows) else "")
    text = (f"**Cluster {g}** of {c.k} in **{md(c.corpus.name)}** ({len(rows):,} rows, {len(rows) / len(c.rows):.0%} "
            f"of {where}; {how}; {c.method}, seed {c.seed}) is about {md(about)}: {first}its rows are in the table "
            "below, closest to the centre first.")
    return text, Table(f"cluster {g}", rows)


def duplicates(d: Duplicates) -> Result:
    """``duplicates``: near-duplicate groups and every pair found."""
    texts = d.rows["text"]
    pairs = d.pairs.assign(**{"a text": texts.iloc[d.pairs["a"]].to_numpy() if len(d.pairs) else [],
                              "b text": texts.iloc[d.pairs["b"]].to_numpy() if len(d.pairs) else []})
    groups = pd.DataFrame([{"group": g, "size": len(m), "ids": " ".join(f"#{i}" for i in m),
                            "first text": texts.iat[m[0]]} for g, m in enumerate(d.groups)],
                          columns=["group", "size", "ids", "first text"])
    tables = [Table("groups", groups), Table("pairs", pairs)]
    how = f"each row against its {d.neighbours} nearest neighbours ({'exact' if d.index_kind == 'exact' else 'HNSW'})"
    if d.groups:
        in_groups = sum(len(g) for g in d.groups)
        found = f"{len(d.groups):,} near-duplicate group{'s' if len(d.groups) != 1 else ''}"
        text = (f"**{found}** ({in_groups:,} rows, {len(d.pairs):,} pairs at cosine >= {d.threshold}) in "
                f"**{md(d.corpus.name)}**; the largest has {len(d.groups[0])} rows, like "
                f"{code(texts.iat[d.groups[0][0]], 60)}; compared {how}.")
    else:
        text = (f"**No near-duplicates** at cosine >= {d.threshold} in **{md(d.corpus.name)}** "
                f"({d.corpus.rows:,} rows, compared {how}); lower --threshold to see closer pairs.")
    chart_list = []
    if len(pairs):
        shown = pairs.head(CHART_BARS)
        shown = shown.assign(pair=[f"#{a} ~ #{b}" for a, b in zip(shown["a"], shown["b"])])
        chart_list = [Chart("pairs", charts.bars(shown[["pair", "cosine"]], "pair", "cosine",
                                                 title=f"Closest pairs (top {len(shown)})", sort="-x"))]
    return _result("duplicates", text, tables, chart_list, d.corpus, {"threshold": d.threshold, "k": d.neighbours})


def outliers(o: Outliers) -> Result:
    """``outliers``: the rows farthest from their neighbours."""
    rows = o.rows
    top = clear_of(rows, ("rank", "mean distance")).iloc[list(o.ids)].reset_index(drop=True)
    top.insert(1, "mean distance", list(o.distances))
    top.insert(0, "rank", range(1, len(top) + 1))
    everyone = pd.DataFrame({"id": rows["id"], "mean distance": o.all_distances})
    tables = [Table("outliers", top), Table("distances", everyone)]
    median = float(pd.Series(o.all_distances).median())
    text = (f"The farthest text in **{md(o.corpus.name)}** is #{o.ids[0]} {code(top['text'].iat[0], 80)}: mean cosine "
            f"distance {o.distances[0]:.4f} to its {o.k} nearest neighbour{'s' if o.k != 1 else ''}, against a median "
            f"of {median:.4f} over {o.corpus.rows:,} rows; the top {len(o.ids)} are in the table.")
    shown = top.head(CHART_BARS)
    shown = shown.assign(label=[_label(i, t) for i, t in zip(shown["id"], shown["text"])])
    chart = charts.bars(shown[["label", "mean distance"]], "label", "mean distance",
                        title=f"Mean distance to the {o.k} nearest neighbours (top {len(shown)})",
                        sort=list(shown["label"]))
    return _result("outliers", text, tables, [Chart("outliers", chart)], o.corpus, {"top": o.top, "k": o.k})


def corpus_map(m: CorpusMap) -> Result:
    """``map``: how many points, by which method, coloured by what; the map itself is drawn by the page."""
    placed = "placed by UMAP's transform" if m.method == "umap" else "projected on the same axes"
    how = (f"explained variance {m.explained[0]:.1%} + {m.explained[1]:.1%}" if len(m.explained) >= 2
           else "UMAP (cosine)" if m.method == "umap" else "")
    fit = (f"the layout stored with the corpus was reused (fitted on {m.fit_rows:,} rows in {m.seconds:.1f} s)"
           if m.reused else f"fitted now on {m.fit_rows:,} rows in {m.seconds:.1f} s and stored with the corpus")
    if 0 < m.fit_rows < m.rows:
        fit += f"; the other {m.rows - m.fit_rows:,} rows were {placed}"
    colour = {"stored": "the clusters of the last `clusters`",
              "quick": "a quick k-means (run `clusters` to choose k; the map then shows those)",
              "text length": "text length"}.get(m.color_source, f"column {code(m.color, 30)}")
    text = (f"**{m.rows:,} points** of **{md(m.corpus.name)}** on one map by {m.method.upper()}"
            + (f" ({how})" if how else "") + f", coloured by {colour}; {fit}. "
            f"The page receives {m.bytes_per_point:.1f} bytes per point and fetches a text only when you hover or "
            "select it. Scroll to zoom, drag to pan, hover a point for its text, shift-drag a lasso to list points "
            "in the side panel; then `search QUERY --in selection` or `clusters --in selection` work on them.")
    summary = pd.DataFrame([{"method": m.method, "rows": m.rows, "fit rows": m.fit_rows,
                             "bytes per point": round(m.bytes_per_point, 3), "colour": m.color,
                             "explained variance": ", ".join(f"{v:.4f}" for v in m.explained) or "-",
                             "layout": "reused" if m.reused else "fitted", "fit seconds": m.seconds}])
    legend = pd.DataFrame({"category": list(m.categories), "rows": list(m.counts)})
    every = pd.DataFrame({"id": np.arange(m.rows, dtype=np.int64), "x": m.xy[:, 0], "y": m.xy[:, 1],
                          m.color if m.color != "cluster" else "cluster": m.codes})
    parquet = io.BytesIO()
    every.to_parquet(parquet, index=False)
    tables = [Table("map", summary), Table("colours", legend)]
    return Result("map", text, tables, [], [], m.corpus.model,
                  settings={"corpus": m.corpus.name, "method": m.method, "color": m.color, "map": m.map_id},
                  artifacts=[Artifact(f"map_{m.method}.parquet", parquet.getvalue(), "application/vnd.apache.parquet")])


def _kept_as(column: str, renamed: tuple[tuple[str, str], ...]) -> str:
    """A kept metadata column's name, with the file's own name beside it when it had to change ("`id_1` (the file's
    `id`: `id` numbers the corpus's rows)")."""
    was = next((old for old, new in renamed if new == column), None)
    if was is None:
        return code(column, 24)
    return f"{code(column, 24)} (the file's {code(was, 24)}: {code(was, 24)} {RESERVED.get(was, 'was taken')})"
