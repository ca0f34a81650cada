"""What the benchmark finds, as typed facts: the pairs, each system's cosines, scores and the choices made.

:mod:`~tools.benchmark.run` computes these; :mod:`~tools.benchmark.replies` turns them into the
words, tables, chart and downloads a person reads. Nothing here is prose, except ``warnings``:
each comes from the code that knows the rule (sampling, truncation, the threshold, GloVe).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tools.benchmark.published import Published


@dataclass(frozen=True)
class SentenceEmbeddings:
    """Vectors for each distinct sentence, one (N, dims) array per pooling plus ``static``.

    Attributes:
        vectors: pooling name (``cls``, ``mean``, ``max``, ``sbert``, ``static``) -> float32 array.
        truncated: how many sentences were longer than the model's limit.
        seconds: wall time of the encoding.
    """

    vectors: dict[str, np.ndarray]
    truncated: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class System:
    """One row of the scores table: a model x pooling, or a baseline.

    Attributes:
        name: the row's name, like ``minilm / mean`` or ``GloVe 6B 50d (average)``.
        model: the model's name (``glove`` for the GloVe baseline).
        pooling: the pooling (``static`` for input embeddings, ``average`` for GloVe).
        kind: ``model`` or ``baseline``.
        cosine: the cosine of each pair, in the pairs' order.
        shuffled: the cosine of each first sentence with an unrelated second sentence.
    """

    name: str
    model: str
    pooling: str
    kind: str
    cosine: np.ndarray
    shuffled: np.ndarray


@dataclass(frozen=True)
class Timing:
    """How long one model took to encode the distinct sentences.

    Attributes:
        model: the model's name.
        sentences: how many distinct sentences it encoded.
        seconds: wall time of the encoding.
        truncated: how many sentences were longer than its limit.
        device: where it ran (``cpu``, ``cuda:0``).
    """

    model: str
    sentences: int
    seconds: float
    truncated: int
    device: str


@dataclass(frozen=True)
class BenchmarkRun:
    """One benchmark: the pairs scored, every system's cosines and scores, and the choices that shaped them.

    Attributes:
        source: where the pairs came from (``stsb-dev`` or a file name).
        pairs: the pairs scored (``genre``, ``sentence1``, ``sentence2``, ``score``), index 0..n-1.
        total: how many pairs the data holds (more than ``len(pairs)`` when sampled).
        sample: the ``sample`` asked for, or None.
        seed: the sample's and the shuffled pairs' seed.
        models: the models' names, in order.
        poolings: model name -> the pooling names scored for it.
        threshold: gold score from which a pair counts as a paraphrase.
        systems: every model x pooling, then the baselines; the last is the shuffled pairs.
        scores: one row per system (``system``, ``model``, ``pooling``, ``kind``, correlations,
            ``best threshold`` and its metrics, mean cosines, ``pairs``), in the systems' order.
        best: the model system with the highest Spearman.
        edges: the pairs whose cosine rank and gold rank differ most under ``best``.
        timings: one per model.
        chart_rows: the pairs each chart panel shows (every pair unless they are too many).
        chart_per_panel: how many points one panel may hold.
        chart_limit: the chart's point limit across panels.
        warnings: sampling, truncation, threshold and GloVe notes.
        published: the published STS-B figure of each model that has one (model name -> figure).
    """

    source: str
    pairs: pd.DataFrame
    total: int
    sample: int | None
    seed: int
    models: tuple[str, ...]
    poolings: dict[str, tuple[str, ...]]
    threshold: float
    systems: tuple[System, ...]
    scores: pd.DataFrame
    best: str
    edges: pd.DataFrame
    timings: tuple[Timing, ...]
    chart_rows: np.ndarray
    chart_per_panel: int
    chart_limit: int
    warnings: list[str] = field(default_factory=list)
    published: dict[str, Published] = field(default_factory=dict)
