"""Fitting projections (PCA, t-SNE, UMAP) and what every projection map shares.

The enums that turn the user's ``--method``, ``--level`` and ``--basis`` into choices,
:func:`fit`, and the small helpers the maps share (coordinate columns, which rows a chart keeps).
The words, tables, charts and downloads of every map are in :mod:`~tools.projection.replies`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

import numpy as np
import pandas as pd

from tools.core import cancel
from tools.core.errors import UserError

Progress = Callable[[float, str], None]

#: t-SNE has no fast path here: above this many points it takes minutes on 2 CPU cores.
MAX_TSNE_POINTS = 3000
#: Above this many points t-SNE and UMAP first reduce the vectors to this many PCA components.
PRE_REDUCE_POINTS = 1000
PRE_REDUCE_DIMS = 50
#: UMAP's basis is fitted on at most this many vocabulary rows (sampled), to stay quick.
UMAP_FIT_ROWS = 3000
#: Background vocabulary points drawn behind ``--basis vocab`` charts.
BACKGROUND_POINTS = 1500
SEED = 0
UMAP_INSTALL = "pip install -r requirements-umap.txt"

E = TypeVar("E", bound=Enum)


def parse_choice(enum: type[E], value: str, option: str) -> E:
    """The member of ``enum`` that ``value`` names (any case), or a UserError listing the allowed values."""
    try:
        return enum(str(value).lower())
    except ValueError:
        allowed = ", ".join(m.value for m in enum)
        raise UserError(f"--{option} `{value}` is not allowed; use one of {allowed}.") from None


class Method(str, Enum):
    """The projection method."""

    PCA = "pca"
    TSNE = "tsne"
    UMAP = "umap"


class Level(str, Enum):
    """What becomes a point: every token, or each text's sentence vector."""

    TOKENS = "tokens"
    SENTENCES = "sentences"


class Basis(str, Enum):
    """What the projection is fitted on."""

    TEXTS = "texts"
    VOCAB = "vocab"
    GLOVE = "glove"


@dataclass(frozen=True)
class Fitted:
    """A projection fitted on a matrix.

    Attributes:
        method: how it was fitted.
        coords: the fitted matrix's rows in the projected space, shape (n, dims).
        explained: PCA's explained-variance ratio per component (None otherwise).
        notes: sentences about choices the method made for this input (perplexity...).
        place: maps new rows into the same space (None for t-SNE, which cannot).
    """

    method: Method
    coords: np.ndarray
    explained: np.ndarray | None
    notes: tuple[str, ...]
    place: Callable[[np.ndarray], np.ndarray] | None


def min_points(dims: int) -> int:
    """The fewest points a ``dims``-D projection can spread: n centred points span n - 1 dimensions."""
    return dims + 1


def check_dims(dims: int) -> int:
    """2 or 3; Altair draws 2-D charts, so 3-D is shown as three pairwise views."""
    if dims not in (2, 3):
        raise UserError(
            f"--dims {dims} is not possible: use --dims 2 (one view) or --dims 3 (three linked pairwise views)."
        )
    return dims


def tsne_perplexity(n_points: int) -> float:
    """scikit-learn's default perplexity (30), lowered for small inputs so it stays below ``n_points``."""
    return float(min(30.0, max(1.0, (n_points - 1) / 3)))


def _pca(matrix: np.ndarray, dims: int) -> Fitted:
    from sklearn.decomposition import PCA

    pca = PCA(n_components=dims, random_state=SEED)
    coords = pca.fit_transform(matrix)
    return Fitted(Method.PCA, coords, pca.explained_variance_ratio_, (), pca.transform)


def _pre_reduce(matrix: np.ndarray) -> tuple[np.ndarray, tuple[str, ...], Callable[[np.ndarray], np.ndarray]]:
    if len(matrix) <= PRE_REDUCE_POINTS or matrix.shape[1] <= PRE_REDUCE_DIMS:
        return matrix, (), lambda m: m
    from sklearn.decomposition import PCA

    pca = PCA(n_components=PRE_REDUCE_DIMS, random_state=SEED).fit(matrix)
    note = (f"The {len(matrix):,} vectors were first reduced to {PRE_REDUCE_DIMS} PCA components "
            f"({pca.explained_variance_ratio_.sum():.0%} of their variance), as is usual before this method.")
    return pca.transform(matrix), (note,), pca.transform


def _tsne(matrix: np.ndarray, dims: int) -> Fitted:
    from sklearn.manifold import TSNE

    n = len(matrix)
    if n > MAX_TSNE_POINTS:
        raise UserError(
            f"t-SNE of {n:,} points takes minutes on this machine (the limit is {MAX_TSNE_POINTS:,}); "
            "use fewer points or --method pca."
        )
    reduced, notes, _ = _pre_reduce(matrix)
    perplexity = tsne_perplexity(n)
    if perplexity < 30:
        notes += (f"t-SNE perplexity {perplexity:g} (the default 30 needs more points: it must stay below "
                  f"the number of points, here {n}).",)
    tsne = TSNE(n_components=dims, perplexity=perplexity, init="pca", learning_rate="auto", random_state=SEED)
    coords = tsne.fit_transform(reduced.astype(np.float64))
    return Fitted(Method.TSNE, coords, None, notes, None)


def umap_module():
    """The ``umap`` module, or a UserError that says how to install the optional extra."""
    try:
        import umap
    except ImportError:
        raise UserError(
            "UMAP needs the optional package umap-learn (about 210 MB with numba and llvmlite), which is not "
            f"installed here; install it with `{UMAP_INSTALL}` or use --method pca or tsne."
        ) from None
    return umap


def _umap(matrix: np.ndarray, dims: int) -> Fitted:
    umap = umap_module()
    n = len(matrix)
    reduced, notes, reduce = _pre_reduce(matrix)
    neighbours = int(min(15, n - 1))
    if neighbours < 15:
        notes += (f"UMAP n_neighbors {neighbours} (the default 15 needs more than 15 points).",)
    init = "spectral" if n > dims + 10 else "random"
    model = umap.UMAP(n_components=dims, n_neighbors=max(2, neighbours), init=init, random_state=SEED, n_jobs=1)
    coords = model.fit_transform(reduced)
    return Fitted(Method.UMAP, coords, None, notes, lambda m: model.transform(reduce(m)))


FITTERS: dict[Method, Callable[[np.ndarray, int], Fitted]] = {
    Method.PCA: _pca,
    Method.TSNE: _tsne,
    Method.UMAP: _umap,
}


def fit(matrix: np.ndarray, method: Method, dims: int) -> Fitted:
    """Fit ``method`` on the rows of ``matrix`` and return their ``dims``-D coordinates."""
    cancel.check()  # scikit-learn's t-SNE and umap-learn offer no hook inside their iterations
    fitted = FITTERS[method](np.asarray(matrix, dtype=np.float32), dims)
    cancel.check()
    return fitted


def coordinate_columns(dims: int) -> list[str]:
    """The coordinate columns of a map: ``dim1``, ``dim2`` [, ``dim3``]."""
    return [f"dim{i + 1}" for i in range(dims)]


def chart_sample(frame: pd.DataFrame, limit: int, keep: pd.Series | None = None) -> tuple[pd.DataFrame, bool]:
    """At most ``limit`` rows for a chart: every ``keep`` row, then a seeded sample of the rest."""
    if len(frame) <= limit:
        return frame, False
    keep = keep if keep is not None else pd.Series(False, index=frame.index)
    kept = frame[keep]
    rest = frame[~keep].sample(n=max(0, limit - len(kept)), random_state=SEED)
    return pd.concat([kept, rest]).sort_index(), True
