"""The model's input-embedding matrix, projected and labelled, with a TensorBoard Projector export."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np
import pandas as pd

from tools import charts
from tools.core import cancel
from tools.core.errors import UserError
from tools.core.results import Artifact, Result, Table
from tools.core.timing import timed
from tools.models.hub import LoadedModel, as_model
from tools.projection.fit import (
    MAX_TSNE_POINTS,
    Method,
    axis_titles,
    chart_sample,
    check_dims,
    coordinate_columns,
    explained_sentence,
    fit,
    map_result,
    min_points,
    parse_choice,
    sample_warning,
    umap_module,
)
from tools.projection.vocab_basis import embedding_matrix, vocab_size, vocabulary

#: The first rows of the matrix in id order; for BERT's vocabulary 994 of the first 4,000 are
#: [unused…] placeholders and about 1,000 are single characters.
DEFAULT_N = 4000
MIN_N = 10
VOWELS = "aeiou"
#: Columns of metadata.tsv after the token, in this order.
LABELS = ("length", "vowels", "number", "subword", "special")


class Color(str, Enum):
    """The label that colours the vocabulary chart."""

    LENGTH = "length"
    VOWELS = "vowels"
    NUMBER = "number"
    SUBWORD = "subword"
    SPECIAL = "special"


@dataclass(frozen=True)
class ColorSpec:
    """How a label is drawn: its Vega-Lite type and what the legend calls it."""

    kind: str
    title: str


COLORS: dict[Color, ColorSpec] = {
    Color.LENGTH: ColorSpec("quantitative", "length (characters)"),
    Color.VOWELS: ColorSpec("quantitative", "vowels (a e i o u)"),
    Color.NUMBER: ColorSpec("nominal", "is a number"),
    Color.SUBWORD: ColorSpec("nominal", "is a word piece"),
    Color.SPECIAL: ColorSpec("nominal", "is special"),
}


def word_markers(lm: LoadedModel) -> tuple[str, str]:
    """(continuation prefix, word-start marker) of the tokenizer: ``("##", "")`` for WordPiece,
    ``("", "Ġ")`` for byte-level BPE, ``("", "▁")`` for SentencePiece."""
    model = getattr(getattr(lm.tokenizer, "backend_tokenizer", None), "model", None)
    prefix = getattr(model, "continuing_subword_prefix", None)
    if prefix:
        return str(prefix), ""
    vocab = lm.tokenizer.get_vocab()
    for marker in ("Ġ", "▁"):
        if sum(1 for t in vocab if t.startswith(marker)) > len(vocab) // 10:
            return "", marker
    return "", ""


def token_labels(tokens: Sequence[str], specials: set[str], prefix: str = "##", start: str = "") -> pd.DataFrame:
    """The source notebook's labels (length, vowels, is a number) plus is a word piece and is special.

    Length, vowels and number are read from the token's surface: without the word-piece
    prefix (``##ing`` has length 3) or word-start marker.
    """
    rows = []
    for token in tokens:
        cancel.check()
        special = token in specials
        if prefix:
            subword = token.startswith(prefix) and token != prefix and not special
            surface = token[len(prefix):] if subword else token
        else:
            subword = bool(start) and not token.startswith(start) and not special
            surface = token[len(start):] if start and token.startswith(start) else token
        rows.append({
            "token": token,
            "length": len(surface),
            "vowels": sum(ch in VOWELS for ch in surface.lower()),
            "number": surface.isdigit(),
            "subword": subword,
            "special": special,
        })
    return pd.DataFrame(rows, columns=["token", *LABELS])


def projector_zip(vectors: np.ndarray, labels: pd.DataFrame, tensor_name: str) -> bytes:
    """A zip for the TensorBoard Embedding Projector.

    ``vectors.tsv``: one row per token, tab-separated, no header. ``metadata.tsv``: a
    header row naming the label columns, then one row per token in the same order.
    ``projector_config.pbtxt`` lets TensorBoard (``--logdir`` on the unzipped folder)
    find both; projector.tensorflow.org takes the two TSV files through "Load".
    """
    vec = io.BytesIO()
    np.savetxt(vec, vectors, fmt="%.6g", delimiter="\t")
    meta = labels.copy()
    meta["token"] = meta["token"].map(_tsv_safe)
    # plain tab-separated lines: the projector splits on tabs and knows no CSV quoting (a `"` token stays `"`)
    lines = ["\t".join(meta.columns), *("\t".join(str(v) for v in row) for row in meta.itertuples(index=False))]
    meta_text = "\n".join(lines) + "\n"
    config = (f'embeddings {{\n  tensor_name: "{_tsv_safe(tensor_name).replace(chr(34), "")}"\n'
              f'  tensor_path: "vectors.tsv"\n  metadata_path: "metadata.tsv"\n}}\n')
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr("vectors.tsv", vec.getvalue())
        zf.writestr("metadata.tsv", meta_text.encode("utf-8"))
        zf.writestr("projector_config.pbtxt", config.encode("utf-8"))
    return out.getvalue()


def _tsv_safe(token: str) -> str:
    """Tabs and line breaks would split a metadata row; show them as spaces."""
    return " ".join(str(token).replace("\t", " ").splitlines()) or " "


@timed("vocab")
def vocab(
    model: LoadedModel | str | None,
    texts: Sequence[str] = (),
    n: int = DEFAULT_N,
    method: str = "pca",
    color: str = "length",
    dims: int = 2,
    progress: Callable[[float, str], None] | None = None,
    chart_rows: int = charts.MAX_ROWS,
) -> Result:
    """Project the first ``n`` rows of the input-embedding matrix, labelled, with a Projector export.

    Args:
        model: a loaded model or its name.
        texts: unused (the command takes none).
        n: how many rows of the matrix, in id order, to consider; ``[unused…]``
            placeholder rows among them are skipped.
        method: ``pca``, ``tsne`` (at most 3,000 points) or ``umap`` (optional extra).
        color: ``length``, ``vowels``, ``number``, ``subword`` or ``special``.
        dims: 2, or 3 for three linked pairwise views.
        progress: called with (fraction, message) as the work advances.
        chart_rows: the most points the chart shows (a seeded sample past it; the table keeps all).

    Returns:
        A table of coordinates and labels, PCA's explained variance, a chart of at
        most 5,000 points, and downloads: the coordinates (CSV), the chart spec
        (JSON) and ``vocab-projector.zip``.
    """
    lm = as_model(model)
    report = progress or (lambda fraction, message: None)
    chosen = parse_choice(Method, method, "method")
    paint = parse_choice(Color, color, "color")
    check_dims(dims)
    size = vocab_size(lm)
    if not MIN_N <= n <= size:
        raise UserError(f"--n {n} is outside {lm.name}'s vocabulary: use --n from {MIN_N} to {size:,} "
                        f"(the rows of its input-embedding matrix).")
    if chosen is Method.UMAP:
        umap_module()
    report(0.05, "reading the input-embedding matrix")
    ids, tokens = vocabulary(lm, n)
    skipped = n - len(ids)
    if len(ids) < min_points(dims):
        raise UserError(f"--n {n} leaves {len(ids)} token{'s' if len(ids) != 1 else ''} once the [unused…] rows "
                        f"are skipped and a {dims}-D projection needs {min_points(dims)}; use a larger --n.")
    if chosen is Method.TSNE and len(ids) > MAX_TSNE_POINTS:
        most = int(vocabulary(lm)[0][MAX_TSNE_POINTS - 1]) + 1
        raise UserError(f"t-SNE of {len(ids):,} vocabulary rows takes minutes on this machine (the limit is "
                        f"{MAX_TSNE_POINTS:,} points); use --n {most} or fewer, or --method pca.")
    prefix, start = word_markers(lm)
    labels = token_labels(tokens, set(lm.tokenizer.all_special_tokens), prefix, start)
    vectors = embedding_matrix(lm)[ids]
    report(0.15, f"fitting {chosen.value} on {len(ids):,} rows")
    fitted = fit(vectors, chosen, dims)
    cols = coordinate_columns(dims)
    frame = pd.concat([pd.DataFrame({"id": ids}), labels], axis=1)
    frame[cols] = np.round(fitted.coords, 6)
    report(0.7, "drawing the chart")
    chart_frame, sampled = chart_sample(frame, max(1, min(chart_rows, charts.MAX_ROWS)), keep=frame["special"])
    spec = COLORS[paint]
    chart_data = chart_frame[["token", "id", *dict.fromkeys([paint.value, "special"]), *cols]].round(
        {c: 4 for c in cols})  # only what the chart draws: the spec stays small
    chart = charts.projection_views(
        chart_data, dims=dims, axis_titles=axis_titles(fitted, dims), color=paint.value, color_type=spec.kind,
        color_title=spec.title,
        label=None, listing="token", tooltip=["token", "id", paint.value], title=f"{lm.name} input embeddings, coloured by {paint.value}",
    )
    report(0.85, "writing the TensorBoard Projector export")
    bundle = projector_zip(vectors, labels, f"{lm.name} input embeddings")
    report(1.0, "done")
    text = (f"The first {n:,} rows of **{lm.name}**'s input-embedding matrix ({lm.hidden_size} wide), "
            f"{skipped:,} `[unused…]` placeholder rows skipped: {len(ids):,} tokens projected to {dims}-D with "
            f"{chosen.value}, coloured by {paint.value}.{explained_sentence(fitted)} "
            f"`vocab-projector.zip` holds vectors.tsv and metadata.tsv ({', '.join(LABELS)}) for the TensorBoard "
            "Embedding Projector.")
    text += "".join(f" {note}" for note in fitted.notes)
    warnings = []
    if sampled:
        warnings.append(sample_warning(len(chart_frame), len(frame), "tokens"))
    summary = frame.groupby(paint.value).size().rename("tokens").reset_index()
    settings = {"n": n, "method": chosen.value, "color": paint.value, "dims": dims, "tokens": len(ids)}
    return map_result("vocab", text, Table("vocabulary", frame), fitted, chart, warnings, lm.name, settings,
                      chart_name="vocabulary", extra_tables=[Table(f"tokens by {paint.value}", summary)],
                      extra_artifacts=[Artifact("vocab-projector.zip", bundle, "application/zip")])
