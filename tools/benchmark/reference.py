"""A model's reference distribution on STS-B dev: computed, shipped for the embedded model, cached for others.

:func:`compute_references` encodes every sentence of STS-B dev once and, per pooling (last layer), summarises
the cosines of the dev pairs by gold band and of unrelated pairs: the first sentence of each pair against the
second sentence of another pair, along :data:`UNRELATED_SEEDS` reproducible derangements (the benchmark's
own "shuffled pairs"). ``bench/reference.py`` runs it for the embedded model and writes
``references/<model>.json`` (shipped in the package). :func:`references_for` answers with the shipped file
for the embedded model, a cached file computed here before, a fresh computation when ``sts-dev.tsv`` is in a
data folder (then cached under ``ASSISTANT_REFERENCE_DIR``), or a :class:`References` that says why none.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tools.benchmark.data import Split
from tools.benchmark.files import read_file
from tools.benchmark.metrics import derangement, pair_cosines
from tools.benchmark.run import embed_sentences
from tools.core.config import Settings
from tools.corpus.files import atomic_write
from tools.encoding.pooling import Pooling, available_poolings
from tools.models.hub import LoadedModel
from tools.models.names import split_fast
from tools.similarity.reference import BANDS, Distribution, Reference, References

log = logging.getLogger(__name__)

#: The folder of the references shipped with the package (one JSON file per embedded model).
SHIPPED = Path(__file__).with_name("references")
#: The derangements of the unrelated pairs (1,500 pairs each on STS-B dev).
UNRELATED_SEEDS = (0, 1, 2)
#: The data the references are made of.
SOURCE = "STS-B dev"
#: The JSON layout's version; a cached file of another version is computed again.
VERSION = 1

_LOCK = threading.Lock()


def compute_references(lm: LoadedModel, frame: pd.DataFrame, progress: Callable[[float, str], None] | None = None,
                       ) -> dict[str, Reference]:
    """Per pooling the model has (last layer): its cosines for ``frame``'s pairs by gold band and for unrelated pairs.

    Args:
        lm: the model.
        frame: scored pairs (``sentence1``, ``sentence2``, ``score`` 0-5), STS-B dev for the shipped figures.
        progress: called with (fraction, message) while sentences are encoded.

    Returns:
        One :class:`Reference` per pooling name.
    """
    first, second = frame["sentence1"].astype(str).tolist(), frame["sentence2"].astype(str).tolist()
    sentences = list(dict.fromkeys(first + second))
    index = {s: i for i, s in enumerate(sentences)}
    left = np.asarray([index[s] for s in first])
    right = np.asarray([index[s] for s in second])
    gold = frame["score"].to_numpy(dtype=float)
    n = len(frame)
    others = np.concatenate([right[derangement(n, seed)] for seed in UNRELATED_SEEDS])
    poolings = available_poolings(lm)
    vectors = embed_sentences(lm, sentences, poolings, progress).vectors
    out = {}
    for p in poolings:
        cosines = pair_cosines(vectors[p.value], left, right)
        bands = {}
        for name, low, high in BANDS:
            inside = cosines[(gold >= low) & (gold < high)]
            if inside.size:
                bands[name] = Distribution.of(inside)
        unrelated = Distribution.of(pair_cosines(vectors[p.value], np.tile(left, len(UNRELATED_SEEDS)), others))
        out[p.value] = Reference(lm.name, p.value, f"{SOURCE}, {n:,} pairs", bands, unrelated, "computed")
    return out


def to_json(references: Mapping[str, Reference]) -> dict[str, Any]:
    """The references as the JSON that is shipped and cached."""
    def dist(d: Distribution) -> dict[str, Any]:
        return {"n": d.n, "mean": d.mean, "percentiles": list(d.percentiles)}

    first = next(iter(references.values()))
    return {"version": VERSION, "model": first.model, "source": first.source, "layer": "last",
            "unrelated_seeds": list(UNRELATED_SEEDS),
            "poolings": {name: {"bands": {b: dist(d) for b, d in r.bands.items()}, "unrelated": dist(r.unrelated)}
                         for name, r in references.items()}}


def from_json(body: Mapping[str, Any], computed: str) -> dict[str, Reference]:
    """References read back from :func:`to_json`'s layout."""
    def dist(d: Mapping[str, Any]) -> Distribution:
        return Distribution(int(d["n"]), float(d["mean"]), tuple(float(q) for q in d["percentiles"]))

    return {name: Reference(str(body["model"]), name, str(body["source"]),
                            {b: dist(d) for b, d in entry["bands"].items()}, dist(entry["unrelated"]), computed)
            for name, entry in body["poolings"].items()}


def shipped(lm: LoadedModel) -> dict[str, Reference] | None:
    """The references in the package for an embedded model, or None. Its fast path (``minilm:int8``) reads its full
    precision's: int8 moved the STS-B dev bands' mean cosines by under 0.01 (README), and its first verdict is then
    instant, as full precision's is, and there even where no STS-B is at hand to compute its own."""
    base, fast = split_fast(lm.name)
    path = SHIPPED / f"{base}.json"
    if lm.source.kind != "embedded" or not path.is_file():
        return None
    return from_json(json.loads(path.read_text()), "full precision" if fast else "shipped")


def _cache_file(lm: LoadedModel, settings: Settings) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{lm.source.kind}-{lm.name}-{lm.source.location}")[-150:]
    return settings.reference_path / f"{slug}.json"


def _dev_frame(settings: Settings) -> pd.DataFrame | None:
    for root in settings.data_dir_paths:
        path = root / Split.DEV.filename
        if path.is_file():
            return read_file(path, settings).frame
    return None


def references_for(lm: LoadedModel, settings: Settings, layer: int | None = None,
                   progress: Callable[[float, str], None] | None = None) -> References:
    """The model's references, from the package, the cache or STS-B dev in a data folder; or why there are none.

    Args:
        lm: the model.
        settings: where the data folders and the cache folder are.
        layer: the hidden state the cosines to judge came from (None: the last layer).
        progress: called while a fresh computation encodes sentences.
    """
    if layer is not None and layer != lm.num_layers:
        return References(lm.name, missing="layer", layer=layer)
    with _LOCK:
        found = lm.state.references
        if found is None:
            found = shipped(lm) or _cached(lm, settings) or _computed(lm, settings, progress)
            lm.state.references = found
    if not found:
        return References(lm.name, missing="data")
    return References(lm.name, found)


def _cached(lm: LoadedModel, settings: Settings) -> dict[str, Reference] | None:
    path = _cache_file(lm, settings)
    try:
        body = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return from_json(body, "cached") if body.get("version") == VERSION else None


def _computed(lm: LoadedModel, settings: Settings,
              progress: Callable[[float, str], None] | None) -> dict[str, Reference]:
    """Computed now from STS-B dev in a data folder and cached (empty when there is no such file)."""
    frame = _dev_frame(settings)
    if frame is None:
        return {}
    found = compute_references(lm, frame, progress)
    path = _cache_file(lm, settings)
    try:  # (whole or not at all: another process reading it meanwhile finds no file, never half of one)
        atomic_write(path, lambda handle: handle.write(json.dumps(to_json(found))), binary=False)
    except OSError:
        log.info("could not cache the reference of %s at %s", lm.name, path, exc_info=True)
    return found


def default_pooling(lm: LoadedModel) -> Pooling:
    """The pooling a verdict is read under when several were compared: the model's own recipe, else mean."""
    return Pooling.SBERT if Pooling.SBERT in available_poolings(lm) else Pooling.MEAN
