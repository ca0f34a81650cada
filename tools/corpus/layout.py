"""The 2-D layout of a corpus (its map), fitted once and stored with it, and the map's binary form.

``layout-<method>.npy`` (float32, N x 2) and ``layout-<method>.json`` (how it was fitted) sit in
the corpus folder, each written atomically; a stored layout whose row count matches is reused,
never refitted. PCA is fitted on the unit vectors of at most :data:`FIT_SAMPLE` rows (every row
when there are fewer) with scikit-learn's exact ``covariance_eigh`` solver, then every row is
projected in chunks of :data:`CHUNK` rows; UMAP (the optional umap-learn) is fitted on a sample of
at most :data:`UMAP_SAMPLE` rows and ``transform`` places the rest, chunk by chunk. Progress is
reported and :func:`tools.core.cancel.check` runs between chunks.

The page receives the map as :func:`points_bytes`: a 16-byte header (``MAP1``, rows, bytes per
colour code, 0; little-endian uint32), then x, y of every row as little-endian float32 pairs,
scaled into [-1, 1] with the aspect kept, then one uint8 (or uint16) colour code per row.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from enum import Enum
from pathlib import Path

import numpy as np

from tools.core import cancel
from tools.core.errors import UserError
from tools.corpus.files import atomic_write, save_npy
from tools.corpus.folder import Corpus

#: Rows PCA is fitted on at most; the rest are projected.
FIT_SAMPLE = 100_000
#: Rows UMAP is fitted on at most (its neighbour graph and epochs grow faster than the rows); ``transform``
#: places the rest.
UMAP_SAMPLE = 20_000
#: Rows projected between progress reports and cancel checks.
CHUNK = 50_000
MAGIC = b"MAP1"
HEADER_BYTES = 16
SEED = 0
LAYOUT_VERSION = 1


class Method(str, Enum):
    """How a corpus is laid out in 2-D."""

    PCA = "pca"
    UMAP = "umap"


def umap_installed() -> bool:
    """Whether the optional umap-learn is importable."""
    import importlib.util

    return importlib.util.find_spec("umap") is not None


def paths(corpus: Corpus, method: Method) -> tuple[Path, Path]:
    """The stored layout's coordinates and its description."""
    return corpus.folder / f"layout-{method.value}.npy", corpus.folder / f"layout-{method.value}.json"


def _sample(n: int, size: int) -> np.ndarray:
    if n <= size:
        return np.arange(n)
    return np.sort(np.random.default_rng(SEED).choice(n, size=size, replace=False))


def _chunks(n: int, place: Callable[[int, int], np.ndarray], progress: Callable[[float, str], None],
            what: str) -> np.ndarray:
    out = np.empty((n, 2), dtype=np.float32)
    for start in range(0, n, CHUNK):
        cancel.check()
        stop = min(n, start + CHUNK)
        out[start:stop] = place(start, stop)
        progress(0.5 + 0.5 * stop / n, f"{what}: {stop:,} of {n:,} rows")
    return out


def fit_pca(unit: np.ndarray, progress: Callable[[float, str], None]) -> tuple[np.ndarray, dict]:
    """PCA coordinates of every row, the fit's sample size and explained variance ratios."""
    from sklearn.decomposition import PCA

    n = len(unit)
    rows = _sample(n, FIT_SAMPLE)
    progress(0.05, f"fitting PCA on {len(rows):,} rows")
    pca = PCA(n_components=2, svd_solver="covariance_eigh", random_state=SEED)
    pca.fit(np.asarray(unit[rows], dtype=np.float32))
    coords = _chunks(n, lambda a, b: pca.transform(np.asarray(unit[a:b], dtype=np.float32)), progress, "projecting")
    return coords, {"fit_rows": int(len(rows)), "explained": [float(v) for v in pca.explained_variance_ratio_]}


def fit_umap(unit: np.ndarray, progress: Callable[[float, str], None]) -> tuple[np.ndarray, dict]:
    """UMAP coordinates: fitted on a sample, the other rows placed by ``transform``."""
    from tools.projection.fit import umap_module

    umap = umap_module()
    n = len(unit)
    if n < 4:
        raise UserError(f"UMAP needs at least 4 rows; this corpus has {n}. Use --method pca.")
    rows = _sample(n, UMAP_SAMPLE)
    progress(0.05, f"fitting UMAP on {len(rows):,} rows")
    reducer = umap.UMAP(n_components=2, n_neighbors=int(min(15, len(rows) - 1)), metric="cosine",
                        random_state=SEED, n_jobs=1)
    fitted = reducer.fit_transform(np.asarray(unit[rows], dtype=np.float32)).astype(np.float32)
    if len(rows) == n:
        return fitted, {"fit_rows": n, "explained": []}
    progress(0.5, f"UMAP fitted on {len(rows):,} rows; placing the other {n - len(rows):,}")
    inside = np.zeros(n, dtype=bool)
    inside[rows] = True
    out = np.empty((n, 2), dtype=np.float32)
    out[rows] = fitted
    rest = np.flatnonzero(~inside)
    for start in range(0, len(rest), CHUNK):
        cancel.check()
        part = rest[start:start + CHUNK]
        out[part] = reducer.transform(np.asarray(unit[part], dtype=np.float32))
        progress(0.5 + 0.5 * (start + len(part)) / len(rest), f"placing {start + len(part):,} of {len(rest):,} rows")
    return out, {"fit_rows": int(len(rows)), "explained": []}


def load_or_fit(corpus: Corpus, method: Method = Method.PCA,
                progress: Callable[[float, str], None] | None = None) -> tuple[np.ndarray, dict]:
    """The corpus's stored layout (N x 2 float32) and how it was made; fitted and stored on first use.

    The description holds ``method``, ``rows``, ``fit_rows``, ``explained`` (PCA), ``seconds`` (the fit's
    time) and ``reused`` (True when read back from the folder).
    """
    report = progress or (lambda fraction, message: None)
    unit = corpus.unit_vectors()
    coords_path, meta_path = paths(corpus, method)
    if coords_path.is_file() and meta_path.is_file():
        coords = np.load(coords_path, mmap_mode="r")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if coords.shape == (len(unit), 2) and meta.get("version") == LAYOUT_VERSION:
            return coords, {**meta, "reused": True}
    if method is Method.UMAP and not umap_installed():
        from tools.projection.fit import umap_module

        umap_module()  # raises the sentence that says how to install it
    start = time.perf_counter()
    coords, meta = (fit_umap if method is Method.UMAP else fit_pca)(unit, report)
    meta = {"version": LAYOUT_VERSION, "method": method.value, "rows": len(unit), **meta,
            "seconds": round(time.perf_counter() - start, 3)}
    try:
        save_npy(coords_path, coords)
        atomic_write(meta_path, lambda h: json.dump(meta, h), binary=False)
    except OSError:  # a read-only (published) corpus: the map is drawn, not kept
        meta["unsaved"] = True
    return coords, {**meta, "reused": False}


def normalized(coords: np.ndarray, margin: float = 0.05) -> np.ndarray:
    """``coords`` centred and scaled into [-1 + margin, 1 - margin] on the wider axis (aspect kept), float32."""
    xy = np.asarray(coords, dtype=np.float64)
    if not len(xy):
        return np.zeros((0, 2), dtype=np.float32)
    low, high = xy.min(axis=0), xy.max(axis=0)
    centre, half = (low + high) / 2, float((high - low).max()) / 2
    scale = (1.0 - margin) / half if half > 0 else 1.0
    return ((xy - centre) * scale).astype(np.float32)


def code_dtype(categories: int) -> np.dtype:
    """uint8 for up to 256 colour categories, else uint16."""
    return np.dtype("<u1") if categories <= 256 else np.dtype("<u2")


def points_bytes(xy: np.ndarray, codes: np.ndarray) -> bytes:
    """The map's binary body: header, interleaved little-endian float32 x, y, then one colour code per row."""
    xy = np.ascontiguousarray(xy, dtype="<f4")
    codes = np.ascontiguousarray(codes)
    if codes.dtype.itemsize not in (1, 2) or len(codes) != len(xy):
        raise ValueError(f"{len(xy)} rows need as many uint8/uint16 codes, got {codes.dtype} x {len(codes)}")
    header = MAGIC + np.array([len(xy), codes.dtype.itemsize, 0], dtype="<u4").tobytes()
    return header + xy.tobytes() + codes.astype(codes.dtype.newbyteorder("<"), copy=False).tobytes()


def bytes_per_point(rows: int, categories: int) -> float:
    """What :func:`points_bytes` costs per row: 8 bytes of coordinates, 1 or 2 of colour, the header shared."""
    return (HEADER_BYTES + rows * (8 + code_dtype(categories).itemsize)) / max(rows, 1)
