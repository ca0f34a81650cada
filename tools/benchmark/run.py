"""STS-style evaluation: how well cosine similarity ranks sentence pairs against gold scores.

One forward pass per distinct sentence and model gives every pooling at once; the
numbers are the ones papers quote (Spearman and Pearson x 100), plus a paraphrase
decision (gold >= T) at the best cosine threshold, context-blind baselines, and
the pairs where the model and the annotators disagree most. :func:`evaluation` computes these as
:class:`~tools.benchmark.facts.BenchmarkRun`; :mod:`~tools.benchmark.replies` writes the words.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tools.benchmark import data as stsdata
from tools.benchmark import replies
from tools.benchmark.access import WEB, DataAccess
from tools.benchmark.facts import BenchmarkRun, SentenceEmbeddings, System, Timing
from tools.benchmark.metrics import EDGE_CASES, correlations, derangement, edge_cases, pair_cosines, threshold_metrics
from tools.benchmark.published import published_for
from tools.core import cancel
from tools.core.config import CHART_ROWS_LIMIT, Settings
from tools.core.errors import UserError
from tools.core.text import md
from tools.core.timing import answer
from tools.encoding.encode import encode
from tools.encoding.pooling import Pooling, available_poolings, no_recipe, pool
from tools.models.hub import LoadedModel, as_model
from tools.similarity.baselines import GLOVE_NAME, glove_average, input_embedding_average

Progress = Callable[[float, str], None]

#: Models one command may compare.
MAX_MODELS = 4
#: Sentences per call to ``encode``: bounds the memory held by hidden states (all layers).
CHUNK = 256
#: The key of the average-input-embedding vectors beside the poolings.
STATIC = "static"


def _silent(fraction: float, message: str) -> None:
    return None


# --- embedding ---------------------------------------------------------------------------------------

def embed_sentences(
    lm: LoadedModel,
    sentences: Sequence[str],
    poolings: Sequence[Pooling],
    progress: Progress | None = None,
) -> SentenceEmbeddings:
    """Encode each sentence once and pool it every requested way from that one pass.

    Sentences are sorted by length before they are cut into chunks, so the batches
    that :func:`tools.encoding.encode.encode` builds hold sentences of similar length. The
    ``sbert`` pooling reads at most the model's sentence length, as
    sentence-transformers does, so the rare sentence longer than that is encoded
    again at that length.
    """
    report = progress or _silent
    start = time.perf_counter()
    n = len(sentences)
    order = sorted(range(n), key=lambda i: len(sentences[i]))
    recipe = lm.sentence_config() if Pooling.SBERT in poolings else None
    cap = recipe["max_seq_length"] if recipe else lm.max_tokens
    parts: dict[str, list[np.ndarray]] = {p.value: [] for p in poolings}
    parts[STATIC] = []
    truncated = 0
    for begin in range(0, n, CHUNK):
        cancel.check()
        chunk = [sentences[i] for i in order[begin:begin + CHUNK]]
        encs = encode(lm, chunk, last_only=True)  # poolings read the last layer; the static baseline the ids
        truncated += sum(1 for e in encs if e.dropped)
        for p in poolings:
            source = encs
            if p is Pooling.SBERT:
                long = [e.text for e in encs if len(e.tokens) > cap]
                if long:
                    short = dict(zip(long, encode(lm, long, max_length=cap, last_only=True)))
                    source = [short[e.text] if len(e.tokens) > cap else e for e in encs]
            parts[p.value].append(np.stack([pool(lm, e, p).numpy() for e in source]).astype(np.float32))
        parts[STATIC].append(input_embedding_average(lm, [e.input_ids for e in encs]))
        done = min(begin + CHUNK, n)
        report(done / n, f"{lm.name}: encoded {done:,} of {n:,} sentences")
    back = np.argsort(np.asarray(order))  # sorted position of each original sentence
    vectors = {k: np.concatenate(v)[back] if v else np.zeros((0, 0), np.float32) for k, v in parts.items()}
    return SentenceEmbeddings(vectors, truncated, time.perf_counter() - start)


# --- the command -------------------------------------------------------------------------------------

def _poolings(lm: LoadedModel, pool_arg: Sequence[str] | str | None, warnings: list[str]) -> list[Pooling]:
    available = available_poolings(lm)
    if pool_arg is None or (not isinstance(pool_arg, str) and not list(pool_arg)):
        return available
    names = pool_arg.split(",") if isinstance(pool_arg, str) else list(pool_arg)
    wanted = list(dict.fromkeys(Pooling.parse(n.strip()) for n in names if n.strip()))
    missing = [p for p in wanted if p not in available]
    if missing:
        warnings.append(f"{no_recipe(lm)}, so sbert pooling was skipped for it.")
    chosen = [p for p in wanted if p in available]
    if not chosen:
        raise UserError(f"{no_recipe(lm)}; use --pool mean, cls or max.")
    return chosen


def _pairs(data: str, sample: int | None, seed: int, settings: Settings,
           uploads: Sequence[Path | str], access: DataAccess,
           warnings: list[str]) -> tuple[stsdata.Pairs, int]:
    pairs = stsdata.load(data, settings, uploads, access)
    total = len(pairs.frame)
    if sample is not None:
        if sample > settings.max_pairs:
            raise UserError(f"--sample {sample:,} is over the limit of {settings.max_pairs:,} pairs "
                            "(ASSISTANT_MAX_PAIRS); ask for fewer.")
        if sample >= total:
            warnings.append(f"The data has {total:,} pairs, not more than --sample {sample:,}, so all were used.")
        frame = stsdata.stratified_sample(pairs.frame, sample, seed)
    else:
        if total > settings.max_pairs:
            raise UserError(f"{md(pairs.source)} has {total:,} pairs; the limit is {settings.max_pairs:,} "
                            "(ASSISTANT_MAX_PAIRS): add --sample N to use a stratified sample.")
        frame = pairs.frame
    if len(frame) < 3:
        raise UserError(f"{md(pairs.source)} has {len(frame)} pair(s); correlations need at least 3.")
    return stsdata.Pairs(frame.reset_index(drop=True), pairs.source), total


def evaluation(
    model: LoadedModel | str | None,
    texts: Sequence[str] = (),
    *,
    data: str = "stsb-dev",
    sample: int | None = None,
    seed: int = 42,
    models: Sequence[LoadedModel | str] | None = None,
    pool: Sequence[str] | str | None = None,
    threshold: float = 4.0,
    settings: Settings | None = None,
    progress: Progress | None = None,
    uploads: Sequence[Path | str] = (),
    access: DataAccess = WEB,
) -> BenchmarkRun:
    """Evaluate sentence similarity on scored pairs (STS-B or a file) for one or more models.

    Args:
        model: the model to evaluate (used when ``models`` is not given).
        texts: must be empty; the data comes from ``data``.
        data: ``stsb-dev``, ``stsb-test``, ``stsb-train``, or a file inside a data
            folder: STS-B's .tsv layout, or a .csv / .jsonl with sentence1, sentence2, score.
        sample: use this many pairs, stratified by gold-score bins (all pairs when None).
        seed: the sample's and the shuffled pairs' seed.
        models: several models (loaded, or names) to compare side by side.
        pool: poolings to score (``cls``, ``mean``, ``max``, ``sbert``); default every one the model has.
        threshold: gold score from which a pair counts as a paraphrase.
        settings: data folders and limits (default: from the environment).
        progress: called with (fraction done, message) while it runs.
        uploads: files this conversation uploaded (by full path or file name), allowed besides the data folders.
        access: which files ``data`` may name: the data folders and ``uploads`` (the default, as on the
            page), or :meth:`tools.benchmark.access.DataAccess.local` for the user's own files (the command line).

    Returns:
        The facts; ``benchmark`` (the same call) answers with a Result:
        Scores per model x pooling and baselines, edge cases, per-model timing, a
        gold-vs-cosine chart per model/pooling, and CSV / JSON downloads.
    """
    settings = settings or Settings.from_env()
    report = progress or _silent
    warnings: list[str] = []
    if texts:
        raise UserError("`benchmark` takes no texts; name the data with --data stsb-dev, stsb-test or a file name.")
    if not np.isfinite(threshold):
        raise UserError("--threshold must be a number, like 4.0 (gold scores run from 0 to 5).")
    asked: Sequence[LoadedModel | str | None] = models or [model]
    lms = list({m.name: m for m in (as_model(x) for x in asked)}.values())
    if len(lms) > MAX_MODELS:
        raise UserError(f"--models names {len(lms)} models; compare at most {MAX_MODELS} at a time.")
    report(0.0, "reading the data")
    pairs, total = _pairs(data, sample, seed, settings, uploads, access, warnings)
    frame = pairs.frame
    gold = frame["score"].to_numpy(float)
    if not ((gold >= threshold).any() and (gold < threshold).any()):
        warnings.append(f"Every pair is on the same side of --threshold {threshold:g}, so accuracy, precision, "
                        "recall and F1 are left empty.")
    sentences = list(dict.fromkeys([*frame["sentence1"], *frame["sentence2"]]))
    position = {s: i for i, s in enumerate(sentences)}
    left = frame["sentence1"].map(position).to_numpy()
    right = frame["sentence2"].map(position).to_numpy()
    shuffled_right = right[derangement(len(frame), seed)]
    pooling_of = {lm.name: _poolings(lm, pool, warnings) for lm in lms}

    def system(name: str, owner: str, pooling: str, kind: str, vectors: np.ndarray) -> System:
        return System(name, owner, pooling, kind, pair_cosines(vectors, left, right),
                      pair_cosines(vectors, left, shuffled_right))

    systems: list[System] = []
    timings: list[Timing] = []
    share = 0.85 / len(lms)
    for k, lm in enumerate(lms):
        def sub(fraction: float, message: str, k: int = k) -> None:
            report(0.05 + share * (k + fraction), message)

        emb = embed_sentences(lm, sentences, pooling_of[lm.name], sub)
        timings.append(Timing(lm.name, len(sentences), emb.seconds, emb.truncated, str(lm.device)))
        if emb.truncated:
            warnings.append(f"{emb.truncated} sentences were longer than {lm.name}'s limit and were truncated.")
        for p in pooling_of[lm.name]:
            systems.append(system(f"{lm.name} / {p.value}", lm.name, p.value, "model", emb.vectors[p.value]))
        systems.append(system(f"{lm.name} input embeddings (average)", lm.name, STATIC, "baseline",
                              emb.vectors[STATIC]))
    report(0.92, "GloVe baseline")
    glove_vectors, known = glove_average(sentences)
    if (known == 0).any():
        warnings.append(f"{int((known == 0).sum())} sentences have no word in {GLOVE_NAME}; their GloVe cosine is 0.")
    systems.append(system(f"{GLOVE_NAME} (average)", "glove", "average", "baseline", glove_vectors))
    first = systems[0]
    systems.append(System(f"shuffled pairs ({first.name})", first.model, first.pooling, "baseline",
                          first.shuffled, first.shuffled))

    report(0.96, "scoring")
    scores = _scores_table(systems, gold, threshold, len(frame))
    model_rows = scores[scores["kind"] == "model"]
    best = model_rows.loc[model_rows["spearman"].fillna(-np.inf).idxmax(), "system"]
    best_system = next(s for s in systems if s.name == best)
    edges = edge_cases(frame, best_system.cosine, EDGE_CASES)
    limit = min(settings.max_chart_rows, CHART_ROWS_LIMIT)
    per_panel = max(1, limit // sum(1 for s in systems if s.kind == "model"))
    report(1.0, "done")
    return BenchmarkRun(pairs.source, frame, total, sample, seed, tuple(lm.name for lm in lms),
                        {name: tuple(p.value for p in ps) for name, ps in pooling_of.items()}, threshold,
                        tuple(systems), scores, best, edges, tuple(timings), _chart_rows(frame, per_panel, seed),
                        per_panel, limit, warnings,
                        {lm.name: found for lm in lms if (found := published_for(lm)) is not None})


def _chart_rows(frame: pd.DataFrame, per_panel: int, seed: int) -> np.ndarray:
    """The pairs one chart panel shows: all of them, or a stratified sample of ``per_panel``."""
    n = len(frame)
    if n <= per_panel:
        return np.arange(n)
    return np.sort(stsdata.stratified_sample(frame.assign(_i=np.arange(n)), per_panel, seed)["_i"].to_numpy())


#: The one-call tool: :func:`evaluation` answered as a Result by the family's formatter.
benchmark = answer(evaluation, replies.benchmark, "benchmark")


def _scores_table(systems: list[System], gold: np.ndarray, cut: float, n: int) -> pd.DataFrame:
    rows = []
    for s in systems:
        row: dict[str, str | float] = {"system": s.name, "model": s.model, "pooling": s.pooling, "kind": s.kind}
        row.update(correlations(s.cosine, gold))
        row.update(threshold_metrics(s.cosine, gold, cut))
        row.update({"mean cosine": float(np.mean(s.cosine)), "shuffled cosine": float(np.mean(s.shuffled)),
                    "pairs": n})
        rows.append(row)
    frame = pd.DataFrame(rows)
    numeric = ["spearman", "pearson", "threshold", "accuracy", "precision", "recall", "f1",
               "mean cosine", "shuffled cosine"]
    frame[numeric] = frame[numeric].astype(float).round(6)
    return frame.rename(columns={"threshold": "best threshold"})
