"""Group a corpus with k-means and name each group by its c-TF-IDF words (as BERTopic does).

k is given, or ``auto``: each k in :data:`AUTO_K` is fitted on a sample and the one with the
best mean silhouette (cosine) wins; then the chosen k is fitted on every row. Corpora above
:data:`MINIBATCH_FROM` rows use scikit-learn's MiniBatchKMeans. A group's label words are its
c-TF-IDF top words: each group's texts joined into one document, word counts ``tf`` (per group,
L1-normalised) times ``log(1 + A / f)``, where ``A`` is the mean number of words per group and
``f`` the word's count across all groups. Its representatives are the rows closest to its centroid. A whole-corpus
run is kept with the corpus with what made it (the k asked, the seed, how k was chosen): the same k and seed read its
groups back, so listing one group's rows (``group``) after the overview costs no second k-means.
"""

from __future__ import annotations

import json
import warnings

import numpy as np

from tools.core import cancel
from tools.core.errors import UserError
from tools.core.text import code
from tools.corpus.facts import Clusters
from tools.corpus.files import atomic_write, save_npy
from tools.corpus.folder import Corpus

#: The k tried by ``auto``.
AUTO_K = range(2, 13)
#: Rows the silhouettes of ``auto`` are measured on (silhouette is quadratic in rows).
SILHOUETTE_SAMPLE = 2000
#: Above this many rows, MiniBatchKMeans (full k-means passes over every row get slow).
MINIBATCH_FROM = 20_000
MAX_K = 200
LABEL_WORDS = 8
REPRESENTATIVES = 3
#: The last whole-corpus clustering, kept in the corpus folder (``map --color cluster`` draws it).
LABELS_FILE, WORDS_FILE = "clusters.npy", "clusters.json"


def _kmeans(k: int, rows: int, seed: int):
    from sklearn.cluster import KMeans, MiniBatchKMeans

    if rows > MINIBATCH_FROM:
        return MiniBatchKMeans(n_clusters=k, random_state=seed, batch_size=4096, n_init=3)
    return KMeans(n_clusters=k, random_state=seed, n_init=3)


def choose_k(unit: np.ndarray, seed: int = 0, sample: int = SILHOUETTE_SAMPLE) -> tuple[int, dict[int, float], int]:
    """The k of :data:`AUTO_K` with the best mean cosine silhouette on a sample; every k's score; the sample size."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.metrics import silhouette_score

    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(len(unit), size=min(sample, len(unit)), replace=False))
    data = np.asarray(unit[rows], dtype=np.float32)
    scores: dict[int, float] = {}
    for k in AUTO_K:
        if k >= len(data):
            break
        cancel.check()
        with warnings.catch_warnings():  # (more groups than distinct rows: fewer labels, scored as they are)
            warnings.simplefilter("ignore", ConvergenceWarning)
            labels = _kmeans(k, len(data), seed).fit_predict(data)
        if len(set(labels.tolist())) > 1:
            scores[k] = float(silhouette_score(data, labels, metric="cosine"))
    if not scores:
        raise UserError("This corpus is too small to choose k; give --k.")
    return max(scores, key=lambda k: (scores[k], -k)), scores, len(data)


def c_tf_idf(documents: list[str], top: int = LABEL_WORDS) -> list[list[tuple[str, float]]]:
    """Per class document (a group's texts joined), its ``top`` words by class-based TF-IDF, best first."""
    from sklearn.feature_extraction.text import CountVectorizer

    try:
        vectorizer = CountVectorizer(stop_words="english")
        counts = vectorizer.fit_transform(documents).toarray().astype(np.float64)
    except ValueError:  # no word left (only stop words, numbers of one digit...)
        return [[] for _ in documents]
    words = vectorizer.get_feature_names_out()
    per_class = counts.sum(axis=1, keepdims=True)
    tf = counts / np.where(per_class > 0, per_class, 1.0)
    frequency = counts.sum(axis=0)
    idf = np.log(1.0 + per_class.mean() / frequency)
    weights = tf * idf
    out = []
    for row in weights:
        order = np.lexsort((words, -row))[:top]
        out.append([(str(words[i]), float(row[i])) for i in order if row[i] > 0])
    return out


def store_labels(corpus: Corpus, labels: np.ndarray, words: list[list[str]], run: dict | None = None) -> bool:
    """Keep a whole-corpus clustering beside the corpus (False when its folder is read-only); ``run``: what made it
    (the k asked, the seed, how k was chosen), so the same run is read back, not fitted again (:func:`_same_run`)."""
    try:
        save_npy(corpus.folder / LABELS_FILE, labels.astype(np.int32))
        atomic_write(corpus.folder / WORDS_FILE,
                     lambda h: json.dump({"k": int(labels.max()) + 1, "words": words, "run": run or {}}, h),
                     binary=False)
    except OSError:
        return False
    return True


def _same_run(corpus: Corpus, asked: str, seed: int) -> tuple[np.ndarray, dict] | None:
    """The labels and the run kept by the last whole-corpus clustering when it asked the same k with the same seed
    (k-means with a seed gives the same groups again: "what's in cluster 3?" reads them back), or None."""
    kept = _kept(corpus)
    if kept is None:
        return None
    run = kept[1].get("run") or {}
    return (kept[0], run) if run.get("asked") == asked and run.get("seed") == seed else None


def stored_labels(corpus: Corpus) -> tuple[np.ndarray, list[list[str]]] | None:
    """The last whole-corpus clustering's labels and label words, or None."""
    kept = _kept(corpus)
    return None if kept is None else (kept[0], kept[1].get("words", []))


def _kept(corpus: Corpus) -> tuple[np.ndarray, dict] | None:
    """The last whole-corpus clustering's labels and what is kept beside them (its words, the run), or None."""
    labels_path, words_path = corpus.folder / LABELS_FILE, corpus.folder / WORDS_FILE
    if not (labels_path.is_file() and words_path.is_file()):
        return None
    labels = np.load(labels_path).astype(np.int64)
    if len(labels) != corpus.manifest.rows:
        return None
    return labels, json.loads(words_path.read_text(encoding="utf-8"))


def clusters(corpus: Corpus, k: int | str = "auto", seed: int = 0, among: np.ndarray | None = None,
             group: str | None = None) -> Clusters:
    """Every row's group, the groups' sizes, label words and representative texts.

    ``among``: only these row ids (a selection on the map); otherwise every row, and the labels are stored
    with the corpus (:func:`stored_labels`). ``group``: a group's number, ``largest`` or ``smallest``, whose rows
    the facts list, closest to its centroid first.
    """
    unit = np.asarray(corpus.unit_vectors() if among is None else corpus.unit_vectors()[among], dtype=np.float32)
    n = len(unit)
    if n < 3:
        raise UserError(f"Corpus `{corpus.name}` has {n} rows; clusters need at least 3.")
    if isinstance(k, str) and k.lower() != "auto":
        raise UserError(f"--k takes a number or `auto`, not `{k}`.")
    if not isinstance(k, str) and not 2 <= k <= min(MAX_K, n - 1):
        raise UserError(f"--k must be between 2 and {min(MAX_K, n - 1)} for this corpus of {n} rows, not {k}.")
    asked = str(k).lower()
    same = None if among is not None else _same_run(corpus, asked, seed)
    silhouettes: dict[int, float] = {}
    if same is not None:
        labels, run = same
        k_chosen, chosen_by, sample_rows = int(labels.max()) + 1, run["chosen_by"], run["sample_rows"]
        silhouettes = {int(key): float(v) for key, v in run["silhouettes"].items()}
    else:
        sample_rows = 0
        if isinstance(k, str):
            k_chosen, silhouettes, sample_rows = choose_k(unit, seed)
            chosen_by = "silhouette"
        else:
            k_chosen, chosen_by = int(k), "given"
        cancel.check()
        labels = _kmeans(k_chosen, n, seed).fit_predict(unit).astype(np.int64)
    rows = corpus.rows() if among is None else corpus.rows().iloc[among].reset_index(drop=True)
    texts = rows["text"].tolist()
    sizes, reps, docs, ranked = [], [], [], []
    for g in range(k_chosen):
        members = np.flatnonzero(labels == g)
        sizes.append(len(members))
        docs.append(" ".join(texts[i] for i in members))
        centroid = unit[members].mean(axis=0) if len(members) else np.zeros(unit.shape[1], np.float32)
        centroid /= max(float(np.linalg.norm(centroid)), 1e-12)
        closeness = unit[members] @ centroid
        order = np.lexsort((members, -closeness))
        reps.append(tuple(int(members[i]) for i in order[:REPRESENTATIVES]))
        ranked.append((members[order], closeness[order]))
    words = c_tf_idf(docs)
    if among is None and same is None:
        store_labels(corpus, labels, [[w for w, _ in words_of] for words_of in words],
                     {"asked": asked, "seed": seed, "chosen_by": chosen_by, "sample_rows": sample_rows,
                      "silhouettes": {str(key): v for key, v in silhouettes.items()}})
    method = "minibatch-kmeans" if n > MINIBATCH_FROM else "kmeans"
    shown = None if group is None else _group(group, sizes)
    return Clusters(corpus=corpus.info(), k=k_chosen, method=method, chosen_by=chosen_by, silhouettes=silhouettes,
                    sample_rows=sample_rows, labels=labels, unassigned=0, sizes=tuple(sizes),
                    label_words=tuple(tuple(w) for w in words), representatives=tuple(reps), rows=rows, seed=seed,
                    reused=same is not None, shown=shown,
                    members=() if shown is None else tuple(int(i) for i in ranked[shown][0]),
                    closeness=() if shown is None else tuple(float(c) for c in ranked[shown][1]))


#: The groups ``--group`` names by their size: the word, whether the largest.
BY_SIZE = {"largest": True, "biggest": True, "smallest": False}


def _group(said: str, sizes: list[int]) -> int:
    """The group ``said`` names: its number, or ``largest`` / ``smallest`` (the first of equals)."""
    word = said.strip().lower().lstrip("#")
    if word in BY_SIZE:
        return (max if BY_SIZE[word] else min)(range(len(sizes)), key=lambda g: sizes[g])
    if not word.isdigit() or int(word) >= len(sizes):
        raise UserError(f"There are {len(sizes)} clusters, numbered 0 to {len(sizes) - 1}: --group {code(said, 20)} "
                        "is none of them (or say largest or smallest).")
    return int(word)
