"""What a cosine means for one model: its reference distribution on STS-B dev, and the verdict it gives.

A model's cosines have their own scale (anisotropic models put unrelated sentences at 0.6), so a number is
read against that model's own cosines for pairs people rated: STS-B dev pairs grouped by gold band (0-1
... 4-5) and shuffled, unrelated pairs (two sentences from different dev pairs). A :class:`Reference`
holds each group's size, mean and percentiles (0 to 100) for one pooling at the last layer;
:func:`verdict` places a cosine in it. The references are computed by
:func:`tools.benchmark.reference.compute_references` (``bench/reference.py`` writes the embedded model's,
shipped in ``tools/benchmark/references/``); nothing here is prose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

#: The gold-score bands, as STS-B's annotators' scale reads (5 = the same meaning, 0 = unrelated topics);
#: a pair belongs to the band whose lower edge its score reaches (5.0 belongs to 4-5).
BANDS: tuple[tuple[str, float, float], ...] = (
    ("0-1", 0.0, 1.0), ("1-2", 1.0, 2.0), ("2-3", 2.0, 3.0), ("3-4", 3.0, 4.0), ("4-5", 4.0, 5.0001))
#: The percentile of unrelated pairs a cosine must pass to read as more than "like unrelated pairs".
UNRELATED_PERCENTILE = 95.0


@dataclass(frozen=True)
class Distribution:
    """One group's cosines, summarised.

    Attributes:
        n: how many pairs.
        mean: their mean cosine.
        percentiles: the 0th to 100th percentile (101 values, rising).
    """

    n: int
    mean: float
    percentiles: tuple[float, ...]

    @classmethod
    def of(cls, cosines: Sequence[float] | np.ndarray) -> Distribution:
        """The summary of ``cosines`` (numpy's linear-interpolated percentiles)."""
        values = np.asarray(cosines, dtype=np.float64)
        return cls(int(values.size), round(float(values.mean()), 6),
                   tuple(round(float(q), 6) for q in np.percentile(values, np.arange(101))))

    def rank(self, cosine: float) -> float:
        """The share of this group's pairs (in percent, 0-100) whose cosine is below ``cosine``."""
        q = np.asarray(self.percentiles)
        if cosine <= q[0]:
            return 0.0
        if cosine >= q[-1]:
            return 100.0
        return float(np.interp(cosine, q, np.arange(101)))


@dataclass(frozen=True)
class Reference:
    """One model's cosines for STS-B dev pairs by gold band and for unrelated pairs, under one pooling.

    Attributes:
        model: the model's name.
        pooling: the pooling the cosines were made with (last layer).
        source: the data (``STS-B dev``) and how many pairs.
        bands: one :class:`Distribution` per gold band in :data:`BANDS` order (a band may be missing).
        unrelated: shuffled pairs (the two sentences from different dev pairs).
        computed: ``shipped`` (in the package), ``full precision`` (in the package, for the model a fast path
            runs), ``cached`` (computed here before) or ``computed`` (just now).
    """

    model: str
    pooling: str
    source: str
    bands: Mapping[str, Distribution]
    unrelated: Distribution
    computed: str = "shipped"


@dataclass(frozen=True)
class References:
    """A model's references per pooling, or why it has none.

    Attributes:
        model: the model's name.
        by_pooling: one :class:`Reference` per pooling name (empty when there is none).
        missing: why there is none: ``""`` (there is), ``layer`` (they are made at the last layer only),
            ``data`` (no STS-B dev in the data folders to compute them from).
        layer: the layer the cosine came from, when ``missing == "layer"``.
    """

    model: str
    by_pooling: Mapping[str, Reference] = field(default_factory=dict)
    missing: str = ""
    layer: int | None = None


@dataclass(frozen=True)
class Verdict:
    """Where one cosine falls in a model's reference.

    Attributes:
        cosine: the cosine placed.
        unrelated_rank: the percent of unrelated pairs with a lower cosine.
        band: the gold band whose pairs this cosine is most typical of (its rank there nearest the median).
        like_unrelated: the cosine does not pass :data:`UNRELATED_PERCENTILE` of unrelated pairs.
        reference: the reference it was placed in.
    """

    cosine: float
    unrelated_rank: float
    band: str
    like_unrelated: bool
    reference: Reference


def verdict(reference: Reference, cosine: float) -> Verdict:
    """Place ``cosine`` among the reference's unrelated pairs and find the gold band it is most typical of."""
    unrelated = reference.unrelated.rank(cosine)
    band = min(reference.bands, key=lambda b: abs(reference.bands[b].rank(cosine) - 50.0))
    return Verdict(float(cosine), unrelated, band, unrelated < UNRELATED_PERCENTILE, reference)


def band_of(score: float) -> str:
    """The name of the gold band ``score`` (0-5) falls in."""
    return next(name for name, low, high in BANDS if low <= score < high)
