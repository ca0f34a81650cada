"""`why a | b`: which tokens make two texts similar.

Mean pooling (and an sbert recipe that is a mean) has an exact answer: the cosine
splits into token-pair contributions that add up to it (:mod:`tools.similarity.why_math`).
CLS, max and other sbert recipes get integrated gradients per token against a
blanked-out baseline (:mod:`tools.similarity.attribution`), with the completeness check.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from tools.core.errors import UserError
from tools.core.text import text_label as label
from tools.core.timing import answer
from tools.encoding.encode import Encoded, check_layer, encode, truncation_warnings
from tools.encoding.pooling import Pooling, cosine_matrix, sbert_layer_warnings, sentence_vectors
from tools.models.hub import LoadedModel, as_model
from tools.similarity import replies_why
from tools.similarity.attribution import BASELINE, similarity_attribution
from tools.similarity.compare import parse_poolings
from tools.similarity.facts import WhyExact, WhyGradients
from tools.similarity.why_math import IG_TOLERANCE, pair_contributions, shares

#: Word pairs (exact) or words per text (integrated gradients) the reply names.
NAMED_PAIRS = 3


def token_kind(lm: LoadedModel, token: str, token_id: int) -> str:
    """word, word piece, punctuation or special."""
    if token_id in set(lm.tokenizer.all_special_ids):
        return "special"
    bare = token.removeprefix("##").lstrip("Ġ▁")
    if bare and all(unicodedata.category(ch).startswith("P") or unicodedata.category(ch).startswith("S")
                    for ch in bare):
        return "punctuation"
    return "word piece" if token.startswith("##") else "word"


def _tokens_frame(lm: LoadedModel, which: int, text: str, tokens: list[str], ids: Sequence[int] | np.ndarray,
                  values: np.ndarray, total: float) -> pd.DataFrame:
    return pd.DataFrame({
        "text": label(which, text),
        "position": range(len(tokens)),
        "token": tokens,
        "label": [f"{i} {t}" for i, t in enumerate(tokens)],
        "kind": [token_kind(lm, t, int(i)) for t, i in zip(tokens, ids)],
        "contribution": values.astype(float),
        "share": values.astype(float) / total if total else np.nan,
    })


def word_groups(text: str, offsets: Sequence[tuple[int, int]], kinds: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Group tokens into the words they spell: pieces that touch (no space between) join the word before.

    Returns:
        A one-hot (words, tokens) matrix, so ``groups @ values`` sums each word's tokens, and each word's text.
    """
    index: list[int] = []
    labels: list[str] = []
    spans: list[tuple[int, int]] = []
    for k, ((start, end), kind) in enumerate(zip(offsets, kinds)):
        joins = (k > 0 and kind in ("word", "word piece") and kinds[k - 1] in ("word", "word piece")
                 and start == spans[-1][1] and end > start)
        if joins:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
            labels.append("")
        index.append(len(spans) - 1)
        labels[-1] = text[spans[-1][0]:spans[-1][1]] if kind != "special" else ""
    groups = np.zeros((len(spans), len(offsets)))
    groups[index, np.arange(len(offsets))] = 1.0
    return groups, labels


def _words_frame(which: int, text: str, tokens: pd.DataFrame, enc_tokens: list[str],
                 offsets: Sequence[tuple[int, int]], total: float) -> tuple[pd.DataFrame, np.ndarray]:
    kinds = tokens["kind"].tolist()
    groups, labels = word_groups(text, offsets, kinds)
    first = groups.argmax(axis=1)
    values = groups @ tokens["contribution"].to_numpy(float)
    frame = pd.DataFrame({
        "text": label(which, text),
        "word": [w or enc_tokens[i] for w, i in zip(labels, first)],
        "tokens": [" ".join(enc_tokens[j] for j in np.flatnonzero(row)) for row in groups],
        "kind": [kinds[i] if kinds[i] != "word piece" else "word" for i in first],
        "contribution": values,
        "share": values / total if total else np.nan,
    })
    return frame, groups


def explanation(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    pool: str = "mean",
    layer: int | None = None,
) -> WhyExact | WhyGradients:
    """Which tokens make two texts similar.

    Args:
        model: a loaded model or its name.
        texts: exactly two texts.
        pool: ``mean`` (exact token-pair decomposition), ``cls``, ``max`` or ``sbert``
            (integrated gradients, unless the model's sbert recipe is a mean).
        layer: hidden state to pool (default: the last layer; sbert reads the last).

    Returns:
        The facts; ``why`` (the same call) answers with a Result:
        Tables ``tokens`` (each token's contribution), ``words`` (word pieces summed into the
        words they spell) and, for the exact decomposition, ``pairs`` (each token pair's); for
        integrated gradients ``completeness``. The reply names the top word pairs. Charts:
        the token-pair heatmap (exact) and each text's token bars.
    """
    lm = as_model(model)
    if len(texts) != 2:
        raise UserError(f"`why` explains the similarity of exactly two texts, like `why A cat sat. | A kitten "
                        f"sat.`; got {len(texts)}.")
    if pool.lower() == "all":
        raise UserError("`why` explains one pooling at a time; use --pool mean, cls, max or sbert.")
    pooling = parse_poolings(lm, pool)[0]
    layer_index = check_layer(lm, layer)
    vectors, encs = sentence_vectors(lm, texts, pooling, layer_index)
    cosine = float(cosine_matrix(vectors)[0, 1])
    warnings = truncation_warnings(lm, encs)
    recipe = lm.sentence_config() if pooling is Pooling.SBERT else None
    warnings += sbert_layer_warnings(lm, [pooling], layer_index)
    if pooling is Pooling.SBERT:
        layer_index = lm.num_layers
    if pooling is Pooling.MEAN or (recipe is not None and recipe["mode"] in ("mean", "mean_sqrt_len")):
        if recipe is not None:
            encs = [e if len(e.tokens) <= recipe["max_seq_length"]
                    else encode(lm, [e.text], max_length=recipe["max_seq_length"])[0] for e in encs]
        return _exact(lm, texts, encs, layer_index, cosine, pooling, warnings)
    return _gradients(lm, texts, vectors, pooling, layer_index, cosine, warnings)


#: The one-call tool: :func:`explanation` answered as a Result by the family's formatter.
why = answer(explanation, replies_why.why, "why")


def _exact(lm: LoadedModel, texts: Sequence[str], encs: list[Encoded], layer: int, cosine: float,
           pooling: Pooling, warnings: list[str]) -> WhyExact:
    a, b = encs
    matrix = pair_contributions(a.layer(layer), b.layer(layer))
    rows, cols = shares(matrix)
    tokens = pd.concat([_tokens_frame(lm, 0, texts[0], a.tokens, a.input_ids, rows, cosine),
                        _tokens_frame(lm, 1, texts[1], b.tokens, b.input_ids, cols, cosine)], ignore_index=True)
    kinds_a = tokens["kind"][: len(a.tokens)].to_numpy()
    kinds_b = tokens["kind"][len(a.tokens):].to_numpy()
    n, m = matrix.shape
    ii, jj = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    pairs = pd.DataFrame({
        "a position": ii.ravel(), "a token": [a.tokens[i] for i in ii.ravel()],
        "b position": jj.ravel(), "b token": [b.tokens[j] for j in jj.ravel()],
        "contribution": matrix.ravel(), "share": matrix.ravel() / cosine if cosine else np.nan,
    })
    special = (kinds_a[ii] == "special") | (kinds_b[jj] == "special")
    punct = ~special & ((kinds_a[ii] == "punctuation") | (kinds_b[jj] == "punctuation"))
    words_a, groups_a = _words_frame(0, texts[0], tokens[: n], a.tokens, a.offsets, cosine)
    words_b, groups_b = _words_frame(1, texts[1], tokens[n:].reset_index(drop=True), b.tokens, b.offsets, cosine)
    top = _top_word_pairs(groups_a @ matrix @ groups_b.T, words_a, words_b)
    return WhyExact(lm.name, (texts[0], texts[1]), pooling, layer, lm.num_layers, cosine, tuple(a.tokens),
                    tuple(b.tokens), matrix, rows, cols, tokens, pairs,
                    pd.concat([words_a, words_b], ignore_index=True),
                    tuple(top), float(matrix[special].sum()), float(matrix[punct].sum()), warnings)


def _top_word_pairs(matrix: np.ndarray, words_a: pd.DataFrame, words_b: pd.DataFrame) -> list[tuple[str, str, float]]:
    """The word pairs (neither a special token) that carry the most, largest first."""
    keep = np.outer(words_a["kind"].to_numpy() != "special", words_b["kind"].to_numpy() != "special")
    order = [k for k in np.argsort(-matrix, axis=None) if keep.flat[k]][:NAMED_PAIRS]
    return [(words_a["word"][i], words_b["word"][j], float(matrix[i, j]))
            for i, j in (np.unravel_index(k, matrix.shape) for k in order)]


def _gradients(lm: LoadedModel, texts: Sequence[str], vectors: torch.Tensor, pooling: Pooling, layer: int,
               cosine: float, warnings: list[str]) -> WhyGradients:
    frames, word_frames, checks, top = [], [], [], []
    for i, text in enumerate(texts):
        tokens, found = similarity_attribution(lm, text, vectors[1 - i], pooling, layer)
        ids = lm.tokenizer.convert_tokens_to_ids(tokens)
        frame = _tokens_frame(lm, i, text, tokens, ids, found.scores, found.total)
        frames.append(frame)
        offsets = lm.tokenizer(text, truncation=True, max_length=len(tokens), return_offsets_mapping=True)
        words, _ = _words_frame(i, text, frame, tokens, [tuple(o) for o in offsets["offset_mapping"]], found.total)
        word_frames.append(words)
        checks.append({"text": label(i, text), "attributions sum": found.total, "score": found.value,
                       "baseline score": found.baseline_value,
                       "score - baseline": found.value - found.baseline_value, "gap": found.gap,
                       "relative gap": found.relative_gap, "steps": found.steps})
        best = words[words["kind"] != "special"].sort_values("contribution", ascending=False).head(NAMED_PAIRS)
        top.append(tuple((r.word, float(r.contribution)) for r in best.itertuples()))
    return WhyGradients(lm.name, (texts[0], texts[1]), pooling, layer, lm.num_layers, cosine,
                        pd.concat(frames, ignore_index=True), pd.concat(word_frames, ignore_index=True),
                        pd.DataFrame(checks), tuple(top), BASELINE, IG_TOLERANCE, warnings)
