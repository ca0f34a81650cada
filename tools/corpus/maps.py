"""A corpus map: every row's 2-D place (:mod:`~tools.corpus.layout`) and a colour category per row.

Colours: ``cluster`` (the labels the last whole-corpus ``clusters`` stored with the corpus; without
them a quick k-means of :data:`QUICK_K` groups, said so), ``length`` (the texts' length in characters,
in quantile bins) or a metadata column (its most frequent values, the rest as ``other``; a numeric
column with many values in quantile bins). At most :data:`MAX_CATEGORIES` categories, so every code
fits a uint8. For clusters, each group's label is anchored at the row nearest its 2-D centre.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from tools.core import cancel
from tools.core.errors import UserError
from tools.core.text import code
from tools.corpus import clusters as grouping
from tools.corpus import layout
from tools.corpus.facts import CorpusMap
from tools.corpus.folder import Corpus

MAX_CATEGORIES = 12
BINS = 8
QUICK_K = 8
#: Rows the quick k-means is fitted on before every row is assigned.
QUICK_SAMPLE = 20_000


def _binned(values: np.ndarray, unit: str) -> tuple[np.ndarray, list[str]]:
    edges = np.unique(np.quantile(values, np.linspace(0, 1, BINS + 1)))
    if len(edges) < 2:
        return np.zeros(len(values), np.uint8), [f"{edges[0]:g}{unit}"]
    codes = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2).astype(np.uint8)
    names = [f"{edges[i]:g}–{edges[i + 1]:g}{unit}" for i in range(len(edges) - 1)]
    return codes, names


def _categorical(values: pd.Series) -> tuple[np.ndarray, list[str]]:
    text = values.astype("string").fillna("(empty)")
    counts = text.value_counts(sort=True)
    top = list(counts.index[: MAX_CATEGORIES - 1 if len(counts) > MAX_CATEGORIES else MAX_CATEGORIES])
    lookup = {v: i for i, v in enumerate(top)}
    other = len(top)
    codes = np.fromiter((lookup.get(v, other) for v in text), dtype=np.uint8, count=len(text))
    names = [str(v)[:60] for v in top] + (["other"] if len(counts) > len(top) else [])
    return codes, names


def quick_clusters(unit: np.ndarray, k: int = QUICK_K) -> np.ndarray:
    """k-means labels for every row, fitted on a sample (fast enough to colour a map)."""
    from sklearn.cluster import MiniBatchKMeans

    n = len(unit)
    k = max(1, min(k, n))
    rows = np.sort(np.random.default_rng(0).choice(n, size=min(n, QUICK_SAMPLE), replace=False))
    model = MiniBatchKMeans(n_clusters=k, random_state=0, batch_size=4096, n_init=3)
    model.fit(np.asarray(unit[rows], dtype=np.float32))
    labels = np.empty(n, dtype=np.int64)
    for start in range(0, n, layout.CHUNK):
        cancel.check()
        labels[start:start + layout.CHUNK] = model.predict(np.asarray(unit[start:start + layout.CHUNK], np.float32))
    return labels


def colours(corpus: Corpus, color: str) -> tuple[np.ndarray, list[str], str, bool]:
    """Every row's colour code, the categories' names, where they came from, and whether they are clusters."""
    rows = corpus.rows()
    if color.lower() in ("cluster", "clusters"):
        stored = grouping.stored_labels(corpus)
        if stored is not None:
            labels, words = stored
            source = "stored"
        else:
            labels, words, source = quick_clusters(corpus.unit_vectors()), [], "quick"
        k = int(labels.max()) + 1 if len(labels) else 0
        if k > MAX_CATEGORIES:  # the largest groups keep their colour, the rest share one
            sizes = np.bincount(labels, minlength=k)
            keep = np.argsort(-sizes, kind="stable")[: MAX_CATEGORIES - 1]
            remap = np.full(k, MAX_CATEGORIES - 1, dtype=np.uint8)
            remap[keep] = np.arange(len(keep), dtype=np.uint8)
            names = [_cluster_name(int(g), words) for g in keep] + [f"{k - len(keep)} smaller clusters"]
            return remap[labels], names, source, True
        return labels.astype(np.uint8), [_cluster_name(g, words) for g in range(k)], source, True
    if color == "length":
        codes, names = _binned(rows["text"].str.len().to_numpy(dtype=np.float64), " chars")
        return codes, names, "text length", False
    columns = [c for c in rows.columns if c not in ("id", "text")]
    if color not in columns:
        have = ", ".join(code(c, 24) for c in columns) or "none"
        raise UserError(f"--color takes cluster, length or a metadata column; {code(color, 30)} is none of them "
                        f"(this corpus's columns: {have}).")
    values = rows[color]
    if pd.api.types.is_numeric_dtype(values) and values.nunique() > MAX_CATEGORIES:
        filled = values.astype("float64").fillna(values.median())
        codes, names = _binned(filled.to_numpy(), "")
        return codes, names, f"column {color}", False
    codes, names = _categorical(values)
    return codes, names, f"column {color}", False


def _cluster_name(group: int, words: list[list[str]]) -> str:
    label = ", ".join(words[group][:3]) if group < len(words) and words[group] else ""
    return f"{group}: {label}" if label else f"cluster {group}"


def anchors(xy: np.ndarray, codes: np.ndarray, names: list[str]) -> tuple[tuple[int, str], ...]:
    """Per category, the row nearest its 2-D centre, with the category's name (where its label is drawn)."""
    out = []
    for c, name in enumerate(names):
        members = np.flatnonzero(codes == c)
        if not len(members):
            continue
        centre = xy[members].mean(axis=0)
        nearest = members[int(np.argmin(((xy[members] - centre) ** 2).sum(axis=1)))]
        out.append((int(nearest), name))
    return tuple(out)


def corpus_map(corpus: Corpus, method: layout.Method = layout.Method.PCA, color: str = "cluster",
               progress: Callable[[float, str], None] | None = None) -> CorpusMap:
    """Every row's place and colour, ready for the page's WebGL scatter."""
    if method is layout.Method.UMAP and not layout.umap_installed():
        raise UserError("`map --method umap` needs the optional package umap-learn, which is not installed here "
                        f"(`{_install()}`); `map` uses PCA, which needs nothing more.")
    coords, meta = layout.load_or_fit(corpus, method, progress)
    xy = layout.normalized(coords)
    codes, names, source, clustered = colours(corpus, color)
    codes = codes.astype(layout.code_dtype(len(names)), copy=False)
    counts = np.bincount(codes.astype(np.int64), minlength=len(names))
    return CorpusMap(corpus=corpus.info(), method=method.value, rows=len(xy), fit_rows=int(meta.get("fit_rows", 0)),
                     seconds=float(meta.get("seconds", 0.0)), reused=bool(meta.get("reused")),
                     explained=tuple(meta.get("explained") or ()), color=color, color_source=source,
                     categories=tuple(names), counts=tuple(int(c) for c in counts), xy=xy, codes=codes,
                     anchors=anchors(xy, codes, names) if clustered else (),
                     bytes_per_point=layout.bytes_per_point(len(xy), len(names)))


def _install() -> str:
    from tools.projection.fit import UMAP_INSTALL

    return UMAP_INSTALL
