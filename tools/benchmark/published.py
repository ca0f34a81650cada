"""The STS-B figures published for the embedded models, to read a benchmark's best score against.

all-MiniLM-L6-v2: Spearman x 100 of the cosine of its sentence-transformers vectors (``sbert`` pooling) on the
STS-B test split, as the MTEB leaderboard reports it (STSBenchmark, ``cosine_spearman`` 0.8203); this project
measures the same 82.03 (``bench/throughput.py``'s full-precision run).
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.models.hub import LoadedModel


@dataclass(frozen=True)
class Published:
    """One published STS-B score.

    Attributes:
        model: the model's name here.
        spearman: Spearman x 100.
        split: the STS-B split it was measured on (``stsb-test``).
        pooling: the pooling it used.
        source: who published it.
    """

    model: str
    spearman: float
    split: str
    pooling: str
    source: str


#: Embedded model name -> its published figure.
PUBLISHED = {
    "minilm": Published("minilm", 82.03, "stsb-test", "sbert", "the MTEB leaderboard (STSBenchmark)"),
}


def published_for(lm: LoadedModel) -> Published | None:
    """The published figure of an embedded model, or None (a local folder or hub model has none here)."""
    return PUBLISHED.get(lm.name) if lm.source.kind == "embedded" else None
