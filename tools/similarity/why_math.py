"""The arithmetic behind `why`: an exact token-pair decomposition of a mean-pooled cosine, and
integrated gradients for poolings that have no such decomposition.

Mean pooling: with token vectors t_1..t_n of text a and u_1..u_m of text b, the
sentence vectors are their means, so

    cos(a, b) = sum_ij (t_i . u_j) / (n * m * |mean t| * |mean u|)

and every cell of the n x m matrix is one token pair's share of the cosine; the
cells add up to it exactly (up to float rounding). Row sums are each token of a's
share, column sums each token of b's.

Integrated gradients (Sundararajan et al., 2017) attribute ``f(x) - f(x')`` to the
inputs along the straight path from a baseline ``x'`` to ``x``:
``IG_i = (x_i - x'_i) * integral_0^1 df/dx_i(x' + s (x - x')) ds``. Here the integral
is taken with Gauss-Legendre quadrature, and the sum of the attributions is checked
against ``f(x) - f(x')`` (completeness), which a reply reports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

#: Quadrature points integrated gradients start with, double up to IG_MAX_STEPS until the completeness
#: gap is within IG_TOLERANCE of the score difference. Measured on 8 STS-B test pairs with
#: all-MiniLM-L6-v2 (bench/why.py): CLS pooling, 32 points: median gap 0.06%, worst 0.28%; max pooling
#: (piecewise, so slower to converge), 32 points: median 1.6%, worst 6.3%; 64: median 0.35%, worst 1.9%.
IG_STEPS = 32
IG_MAX_STEPS = 128
IG_TOLERANCE = 0.02
#: Path points evaluated in one forward/backward pass, and the most positions x points in one pass
#: (a pass keeps every layer's attention for the backward pass: 12 heads x T x T floats per point).
IG_CHUNK = 16
IG_CHUNK_TOKENS = 2048
#: Points are doubled only while points x positions stay within this (512 tokens: 32 points, about
#: 20 s per text on 2 busy cores; 128 tokens: up to 128 points, about 1.5 s per 32).
IG_TOKEN_STEPS = 16384


def pair_contributions(a: torch.Tensor, b: torch.Tensor) -> np.ndarray:
    """Each token pair's share of the cosine of two mean-pooled texts.

    Args:
        a: token vectors of text a, shape (n, d).
        b: token vectors of text b, shape (m, d).

    Returns:
        An (n, m) float64 matrix whose cells sum to ``cos(mean(a), mean(b))``.
    """
    a64, b64 = a.double(), b.double()
    n, m = a64.shape[0], b64.shape[0]
    norm = float(a64.mean(dim=0).norm() * b64.mean(dim=0).norm())
    if norm == 0.0:
        return np.zeros((n, m))
    return ((a64 @ b64.T) / (n * m * norm)).numpy()


def shares(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's and each column's total: one text's tokens' shares of the cosine."""
    return matrix.sum(axis=1), matrix.sum(axis=0)


@dataclass(frozen=True)
class Attribution:
    """Integrated gradients over one input.

    Attributes:
        scores: one attribution per position (summed over the embedding dimensions).
        value: ``f(x)``, the score of the input.
        baseline_value: ``f(x')``, the score of the baseline.
        steps: quadrature points used.
    """

    scores: np.ndarray
    value: float
    baseline_value: float
    steps: int

    @property
    def total(self) -> float:
        """The attributions' sum."""
        return float(self.scores.sum())

    @property
    def gap(self) -> float:
        """Completeness error: the attributions' sum minus ``f(x) - f(x')``."""
        return self.total - (self.value - self.baseline_value)

    @property
    def relative_gap(self) -> float:
        """The completeness error as a fraction of ``|f(x) - f(x')|`` (0 when both are 0)."""
        diff = abs(self.value - self.baseline_value)
        return abs(self.gap) / diff if diff > 0 else abs(self.gap)


def integrated_gradients(
    f: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    baseline: torch.Tensor,
    steps: int = IG_STEPS,
    chunk: int | None = None,
) -> Attribution:
    """Integrated gradients of a scalar function, one score per position.

    Args:
        f: maps a batch of inputs (k, *x.shape) to k scalars; it must be differentiable.
        x: the input, shape (T, D) (one row per position).
        baseline: the reference input, same shape as ``x``.
        steps: Gauss-Legendre points on the path (exact for polynomials of degree < 2 x steps).
        chunk: path points per call of ``f`` (default: 16, fewer for long inputs, to bound memory).

    Returns:
        Per-position attributions (gradient x difference, summed over D) and the values
        of ``f`` at ``x`` and at the baseline, for the completeness check.
    """
    if x.shape != baseline.shape:
        raise ValueError(f"baseline shape {tuple(baseline.shape)} differs from input shape {tuple(x.shape)}")
    chunk = chunk or max(1, min(IG_CHUNK, IG_CHUNK_TOKENS // max(1, x.shape[0])))
    nodes, weights = np.polynomial.legendre.leggauss(steps)
    alphas = torch.tensor((nodes + 1) / 2, dtype=x.dtype)  # from [-1, 1] to [0, 1]
    w = torch.tensor(weights / 2, dtype=x.dtype)
    diff = (x - baseline).detach()
    total = torch.zeros_like(x)
    for start in range(0, steps, chunk):
        a = alphas[start:start + chunk].view(-1, *([1] * x.dim()))
        path = (baseline.detach() + a * diff).requires_grad_(True)
        out = f(path)
        (grad,) = torch.autograd.grad(out.sum(), path)
        total += (grad * w[start:start + chunk].view_as(a)).sum(dim=0)
    with torch.no_grad():
        ends = f(torch.stack([x.detach(), baseline.detach()]))
    scores = (total * diff).sum(dim=-1).double().numpy()
    return Attribution(scores, float(ends[0]), float(ends[1]), steps)


def integrated_gradients_to(
    f: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    baseline: torch.Tensor,
    tolerance: float = IG_TOLERANCE,
    steps: int = IG_STEPS,
    most: int = IG_MAX_STEPS,
) -> Attribution:
    """Integrated gradients with ``steps`` points, doubled up to ``most`` until completeness holds.

    Returns the first result whose :attr:`Attribution.relative_gap` is within
    ``tolerance``, or the one with ``most`` points (whose gap the caller reports).
    """
    while True:
        found = integrated_gradients(f, x, baseline, steps)
        if found.relative_gap <= tolerance or steps * 2 > most:
            return found
        steps *= 2
