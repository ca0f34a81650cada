"""Corpus: a person's own texts, read once, encoded once (resumably), stored, searched and analysed.

Lives here: ``read`` (CSV, TSV, JSONL, Parquet, TXT -> texts and metadata, refusals counted), ``folder`` (one
corpus folder: ``rows.parquet``, vector chunks in text-length order then ``vectors.npy``, the index,
``manifest.json``; atomic writes), ``store`` (the folders under one root: list, info, drop, size on disk, limits),
``encode`` (chunked, resumable encoding with progress and cancellation; the
:class:`~tools.corpus.encode.ChunkEncoder`), ``engines/`` (who encodes: ``local`` now, the same store for any
engine), ``index`` (exact search while small, a usearch HNSW graph above, its recall measured), ``search``,
``clusters`` (k-means, c-TF-IDF label words), ``duplicates`` (near-duplicate pairs and groups), ``outliers`` (rows
far from their neighbours), ``files`` (crash-safe writes: a temporary name, then moved into place), ``layout`` (the
2-D map coordinates, fitted once and stored; the map's binary form), ``maps`` (a map's colour categories and
cluster label anchors); typed ``facts`` and the family's one formatter, ``replies``.

May import: ``tools.core``, ``tools.models``, ``tools.encoding``, ``tools.charts``, ``tools.projection``
(the UMAP import), numpy, pandas,
pyarrow, scipy, scikit-learn, usearch; never ``assistant`` or ``gradio``.
"""
