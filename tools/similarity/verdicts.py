"""Verdicts from baselines: whether two vectors of a word are the same, and how tight a neighbourhood is.

Pure classification of numbers the tools computed; :mod:`~tools.similarity.replies` says them in words.
A cosine between two occurrences of a word is read on the scale from its floor (the higher of its baselines:
the word against the other tokens of its sentence, and against a random token) to 1.0.
"""

from __future__ import annotations

import math
from enum import Enum

import numpy as np

#: Past this share of the way from the floor to 1.0, two occurrences are "the same vector", nearly.
SAME_SHARE = 0.8
#: Below this share they are "different": hardly closer to each other than to the baselines.
DIFFERENT_SHARE = 0.2
#: A neighbourhood is tight when its mean cosine beats this percentile of sampled vocabulary words', loose below
#: :data:`LOOSE_PERCENTILE`.
TIGHT_PERCENTILE = 75.0
LOOSE_PERCENTILE = 25.0


class Sameness(str, Enum):
    """How alike two vectors of one word are, against its baselines."""

    SAME = "same"
    RELATED = "related"
    DIFFERENT = "different"


def floor_of(*baselines: float) -> float:
    """The higher of the baselines that exist (NaN ones are skipped; 0.0 when none)."""
    found = [b for b in baselines if b is not None and not math.isnan(b)]
    return max(found) if found else 0.0


def share_above(cosine: float, floor: float) -> float:
    """How far ``cosine`` lies from ``floor`` towards 1.0 (0 at the floor, 1 at 1.0; negative below the floor)."""
    return (cosine - floor) / (1.0 - floor) if floor < 1.0 else 0.0


def sameness(cosine: float, floor: float) -> Sameness:
    """Same, related or different, by :func:`share_above`."""
    share = share_above(cosine, floor)
    if share >= SAME_SHARE:
        return Sameness.SAME
    return Sameness.RELATED if share >= DIFFERENT_SHARE else Sameness.DIFFERENT


class Tightness(str, Enum):
    """How close a word's nearest neighbours are, against sampled vocabulary words' own."""

    TIGHT = "tight"
    TYPICAL = "typical"
    LOOSE = "loose"


def percentile_in(value: float, sample: np.ndarray) -> float:
    """The percent of ``sample`` below ``value``."""
    return float((np.asarray(sample) < value).mean() * 100.0) if len(sample) else 50.0


def tightness(percentile: float) -> Tightness:
    """Tight, typical or loose, by where the word's mean neighbour cosine falls among sampled words'."""
    if percentile >= TIGHT_PERCENTILE:
        return Tightness.TIGHT
    return Tightness.LOOSE if percentile < LOOSE_PERCENTILE else Tightness.TYPICAL
