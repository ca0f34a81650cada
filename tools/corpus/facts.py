"""What the corpus tools find, as typed facts: numbers, frames and the choices that shaped them.

The tools (``read``, ``store``, ``encode``, ``search``, ``clusters``, ``duplicates``, ``outliers``)
compute these; :mod:`~tools.corpus.replies` turns each into the words, tables, charts and
downloads a person reads. Nothing here is prose.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class ReadReport:
    """How one file became rows.

    Attributes:
        source: the file's name (never a server path).
        file_format: ``csv``, ``tsv``, ``jsonl``, ``parquet`` or ``txt``.
        sha256: the hex digest of the file's bytes.
        size_bytes: the file's size.
        rows_read: records found in the file (before refusals).
        rows_kept: rows that became the corpus.
        text_column: the column the texts came from (``text`` for a .txt file).
        chosen_by: ``given`` (``column=``), ``longest`` (the string column with the longest mean length)
            or ``only`` (a .txt file, or a single column).
        mean_lengths: each candidate text column's mean length in characters.
        metadata_columns: the other columns, kept beside each text.
        refused: rows refused, by reason (``empty text``, ``malformed line``, ``not JSON``,
            ``not a JSON object``, ``over the row limit``); every reason is listed, zeros included.
        truncated: texts cut to ``max_chars``.
        max_chars: the character limit texts were cut at.
        undecodable_lines: lines that are not UTF-8 (read as Windows-1252, :data:`tools.corpus.read.NOT_UTF8`).
        renamed: each metadata column kept under another name, as (the file's name, the kept name): a column
            named like the corpus's own ``id`` or ``text``.
    """

    source: str
    file_format: str
    sha256: str
    size_bytes: int
    rows_read: int
    rows_kept: int
    text_column: str
    chosen_by: str
    mean_lengths: dict[str, float]
    metadata_columns: tuple[str, ...]
    refused: dict[str, int]
    truncated: int
    max_chars: int
    undecodable_lines: int
    renamed: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ReadCorpus:
    """A file's rows: ``frame`` has ``text`` first, then the metadata columns; ``report`` says how."""

    frame: pd.DataFrame
    report: ReadReport


@dataclass(frozen=True)
class CorpusInfo:
    """One stored corpus, as its manifest describes it.

    Attributes:
        key: the folder name: a digest of (file hash, text column, model, pooling).
        name: the name a person uses for it.
        model: the model that encodes it; pooling: ``sbert`` (the model's recipe) or ``mean``.
        source: the file it came from; sha256: that file's digest; text_column: where texts came from.
        rows: rows in the corpus; dims: vector size (0 until the first chunk is encoded).
        chunk_rows: rows per encoded chunk; chunks_total, chunks_done: how far encoding got.
        complete: every chunk encoded and the vectors consolidated.
        index_kind: ``exact`` or ``hnsw`` for all-row neighbours ("" until complete);
            index_recall: the HNSW index's recall@10 against exact search on a sample (None for exact).
        metadata_columns: the columns kept beside each text.
        created: ISO time of creation; bytes_on_disk: the folder's size.
        read: the file's read report (refusals, truncation) as recorded at load.
    """

    key: str
    name: str
    model: str
    pooling: str
    source: str
    sha256: str
    text_column: str
    rows: int
    dims: int
    chunk_rows: int
    chunks_total: int
    chunks_done: int
    complete: bool
    index_kind: str
    index_recall: float | None
    metadata_columns: tuple[str, ...]
    created: str
    bytes_on_disk: int
    read: dict = field(default_factory=dict)


@dataclass(frozen=True)
class CorpusList:
    """Every corpus under one folder, and the space they take."""

    corpora: tuple[CorpusInfo, ...]
    bytes_on_disk: int
    disk_limit_bytes: int


@dataclass(frozen=True)
class EncodeReport:
    """One encoding run over a corpus.

    Attributes:
        info: the corpus after the run.
        engine: who encoded (``local``...).
        chunks_encoded: chunks encoded in this run; chunks_skipped: chunks found already done.
        rows_encoded: rows encoded in this run.
        seconds: wall time of the run; reused: the corpus was complete already (nothing encoded).
        displaced: the new name of the corpus of the same file (read another way) whose name this one took, or "".
        read_otherwise: how many texts the file gives otherwise now than when the corpus was made (by an earlier
            version's reading), whose vectors are of the texts as first read.
    """

    info: CorpusInfo
    engine: str
    chunks_encoded: int
    chunks_skipped: int
    rows_encoded: int
    seconds: float
    reused: bool
    displaced: str = ""
    read_otherwise: int = 0


@dataclass(frozen=True)
class SearchHits:
    """The closest rows to each query.

    Attributes:
        corpus: the corpus searched (its info); model, pooling: how the queries were encoded
            (the corpus's own model and pooling).
        queries: the query texts.
        k: hits asked per query.
        hits: one row per (query, rank): rank (1 = best), id, score (cosine), text, then the
            corpus's metadata columns; best first within each query.
        index_kind: ``exact`` or ``hnsw``.
        among: rows searched when the search was limited to a selection (0: every row).
        query_texts: the text each query stands for: a row's own text for a query ``#N`` (whose hits leave that row
            out), the query itself otherwise.
    """

    corpus: CorpusInfo
    model: str
    pooling: str
    queries: tuple[str, ...]
    k: int
    hits: pd.DataFrame
    index_kind: str
    among: int = 0
    query_texts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Clusters:
    """k-means groups of a corpus.

    Attributes:
        corpus: the corpus; k: groups made; method: ``kmeans`` or ``minibatch-kmeans``.
        chosen_by: ``given`` or ``silhouette``; silhouettes: k -> mean silhouette on the sample
            (empty when k was given); sample_rows: rows the silhouettes were measured on.
        labels: every row's group (0..k-1); unassigned: rows in no group (0 for k-means).
        sizes: rows per group.
        label_words: per group, its c-TF-IDF words, best first, with their weights.
        representatives: per group, the rows (positions in ``rows``) closest to its centroid, closest first.
        rows: the rows clustered (id, text, metadata: every row, or a selection); seed: the random seed.
        reused: whether the groups were read back from the last run of the same k and seed, not fitted again.
        shown: the group whose rows the reply lists (``--group``), or None; members: its rows (positions in
            ``rows``), closest to its centroid first; closeness: each one's cosine to that centroid.
    """

    corpus: CorpusInfo
    k: int
    method: str
    chosen_by: str
    silhouettes: dict[int, float]
    sample_rows: int
    labels: np.ndarray
    unassigned: int
    sizes: tuple[int, ...]
    label_words: tuple[tuple[tuple[str, float], ...], ...]
    representatives: tuple[tuple[int, ...], ...]
    rows: pd.DataFrame
    seed: int
    reused: bool = False
    shown: int | None = None
    members: tuple[int, ...] = ()
    closeness: tuple[float, ...] = ()


@dataclass(frozen=True)
class Duplicates:
    """Near-duplicate pairs and the groups they join into.

    Attributes:
        corpus: the corpus; threshold: the cosine a pair reaches to count.
        neighbours: the k nearest neighbours each row was compared with; index_kind: how they were found.
        pairs: one row per pair (a, b, cosine, group), a < b, highest cosine first.
        groups: per group (connected component of the pairs), its row ids, largest group first.
        rows: the corpus's rows (id, text, metadata).
    """

    corpus: CorpusInfo
    threshold: float
    neighbours: int
    index_kind: str
    pairs: pd.DataFrame
    groups: tuple[tuple[int, ...], ...]
    rows: pd.DataFrame


@dataclass(frozen=True)
class Outliers:
    """The rows farthest from their nearest neighbours.

    Attributes:
        corpus: the corpus; top: rows asked for; k: neighbours each distance is averaged over.
        index_kind: how the neighbours were found.
        ids: the outlying rows, farthest first; distances: their mean cosine distance (1 - cosine)
            to their ``k`` nearest neighbours.
        all_distances: every row's mean distance (for the distribution).
        rows: the corpus's rows (id, text, metadata).
    """

    corpus: CorpusInfo
    top: int
    k: int
    index_kind: str
    ids: tuple[int, ...]
    distances: tuple[float, ...]
    all_distances: np.ndarray
    rows: pd.DataFrame


@dataclass(frozen=True)
class CorpusMap:
    """Every row of a corpus on one 2-D map, with a colour category per row.

    Attributes:
        corpus: the corpus; method: ``pca`` or ``umap``; rows: points on the map.
        fit_rows: rows the layout was fitted on (the rest projected or placed by ``transform``).
        seconds: how long the fit took when it was made; reused: read back from the corpus folder, not refitted.
        explained: PCA's explained variance ratio per axis (empty for UMAP).
        color: what colours the points (``cluster``, ``length`` or a column); color_source: ``stored``
            (the last ``clusters``), ``quick`` (k-means made for the map), ``text length`` or ``column C``.
        categories, counts: each colour category's name and rows.
        xy: (rows, 2) float32 in [-1, 1]; codes: each row's category (uint8, or uint16 above 256).
        anchors: for clusters, (row id, label) where each group's label is drawn (the row nearest its centre).
        bytes_per_point: what the binary map costs per row.
        map_id: the id the page fetches the map under ("" until a face serves it).
    """

    corpus: CorpusInfo
    method: str
    rows: int
    fit_rows: int
    seconds: float
    reused: bool
    explained: tuple[float, ...]
    color: str
    color_source: str
    categories: tuple[str, ...]
    counts: tuple[int, ...]
    xy: np.ndarray
    codes: np.ndarray
    anchors: tuple[tuple[int, str], ...]
    bytes_per_point: float
    map_id: str = ""
