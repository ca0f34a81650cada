"""The words of the projection family: each function turns one tool's facts into a Result.

This is the only place the family writes sentences, names tables, builds charts and the downloads
(coordinates CSV, the chart's Vega-Lite spec, the TensorBoard Projector zip); the tools in this
package compute :mod:`~tools.projection.facts` and call these.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

from tools import charts
from tools.core.results import Artifact, Chart, Result, Table, csv_text
from tools.core.text import code, layer_note
from tools.projection.facts import (
    Color,
    FitSummary,
    GloveMap,
    SentenceMap,
    TokenMap,
    VocabBasisMap,
    Vocabulary,
)

METHOD_NAMES: dict[str, str] = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP"}


# --- what every map shares -----------------------------------------------------------------

def method_name(fit: FitSummary) -> str:
    """``PCA``, ``t-SNE`` or ``UMAP``."""
    return METHOD_NAMES[fit.method.value]


def axis_titles(fit: FitSummary) -> list[str]:
    """``PC1 (12.3%)`` for PCA, ``t-SNE 1`` / ``UMAP 1`` otherwise."""
    if fit.explained is not None:
        return [f"PC{i + 1} ({fit.explained[i]:.1%})" for i in range(fit.dims)]
    return [f"{method_name(fit)} {i + 1}" for i in range(fit.dims)]


def explained_table(fit: FitSummary) -> Table | None:
    """One row per PCA component: its share of the variance and the running total."""
    if fit.explained is None:
        return None
    ratio = fit.explained
    return Table("explained variance", pd.DataFrame({
        "component": [f"PC{i + 1}" for i in range(len(ratio))],
        "explained variance ratio": np.round(ratio, 6),
        "cumulative": np.round(np.cumsum(ratio), 6),
    }))


def explained_sentence(fit: FitSummary) -> str:
    """`` Explained variance: PC1 12.3%, ... (40.1% together).`` for PCA, else nothing."""
    if fit.explained is None:
        return ""
    parts = ", ".join(f"PC{i + 1} {r:.1%}" for i, r in enumerate(fit.explained))
    return f" Explained variance: {parts} ({fit.explained.sum():.1%} together)."


def notes(fit: FitSummary, *before: str) -> str:
    """The fit's notes (and any ``before`` them), each after a space."""
    return "".join(f" {n}" for n in (*before, *fit.notes))


def downloads(command: str, frame: pd.DataFrame, chart: alt.TopLevelMixin) -> list[Artifact]:
    """The projected coordinates as CSV and the chart's Vega-Lite spec as JSON."""
    csv = csv_text(frame).encode("utf-8")
    spec = json.dumps(chart.to_dict(), indent=1).encode("utf-8")
    return [Artifact(f"{command}-coordinates.csv", csv, "text/csv"),
            Artifact(f"{command}-chart.vl.json", spec, "application/json")]


def map_result(command: str, text: str, table: Table, fit: FitSummary, chart: alt.TopLevelMixin,
               warnings: list[str], model: str, settings: dict, *, chart_name: str = "projection",
               extra_tables: Sequence[Table] = (), extra_artifacts: Sequence[Artifact] = ()) -> Result:
    """A map's reply: its table, PCA's explained variance when there is one, the chart, the downloads."""
    tables = [table, *([ev] if (ev := explained_table(fit)) is not None else []), *extra_tables]
    return Result(command, text, tables, [Chart(chart_name, chart)], warnings, model, settings=settings,
                  artifacts=[*downloads(command, table.frame, chart), *extra_artifacts])


def sample_warning(shown: int, total: int, what: str, kept: str = "") -> str:
    """The one sentence for a chart that shows a sample of its table's rows."""
    return (f"The chart shows a seeded sample of {shown:,} of {total:,} {what}{kept} (the chart-row limit); "
            "the table and the downloads have them all.")


def listing(frame: pd.DataFrame) -> pd.Series:
    """One line per point for the brushed-points list: token · text · position."""
    pos = frame["position"].astype("string").fillna("—") if "position" in frame else ""
    return frame["token"].astype(str) + "  ·  " + frame["text"].astype(str).str.slice(0, 28) + "  ·  #" + pos


# --- project ---------------------------------------------------------------------------------

def project(f: TokenMap | SentenceMap | VocabBasisMap | GloveMap) -> Result:
    """Tokens (or sentences, or the texts in the vocab or GloVe basis): the coordinates, the chart, downloads."""
    if isinstance(f, SentenceMap):
        return _sentences(f)
    if isinstance(f, VocabBasisMap):
        return _vocab_basis(f)
    if isinstance(f, GloveMap):
        return _glove(f)
    return _tokens(f)


def _tokens(f: TokenMap) -> Result:
    where, dims = layer_note(f.layer, f.num_layers), f.fit.dims
    chart = charts.projection_views(
        f.shown.assign(listing=listing(f.shown)), dims=dims, axis_titles=axis_titles(f.fit),
        color="text", shape="kind", shape_domain=list(f.kinds), label="token" if len(f.shown) <= 400 else None,
        tooltip=["token", "text", "position", "kind"],
        title=f"{method_name(f.fit)} of token vectors ({where}, {f.model})",
    )
    fitted_on = ("all tokens and the sentence vectors together (t-SNE cannot place points afterwards)"
                 if f.fitted_together else
                 f"all {f.n_tokens} tokens; the sentence vectors are placed in that space afterwards")
    n = len(f.texts)
    text = (f"{n} text{'s' if n > 1 else ''}, {f.n_tokens} tokens from the {where} of **{f.model}**, projected "
            f"to {dims}-D with {f.fit.method.value}, fitted on {fitted_on}. Each text has its own colour; special "
            f"tokens are squares and each text's sentence vector ({f.pooling.value} pooling) is a large diamond."
            f"{explained_sentence(f.fit)}{notes(f.fit)}")
    warnings = list(f.warnings)
    if f.sampled:
        warnings.append(sample_warning(len(f.shown), len(f.points), "points",
                                       ", every special token and sentence vector kept"))
    warnings += f.layer_warnings
    settings = {"level": "tokens", "method": f.fit.method.value, "dims": dims, "layer": f.layer,
                "pool": f.pooling.value, "basis": "texts"}
    return map_result("project", text, Table("coordinates", f.points), f.fit, chart, warnings, f.model, settings)


def _sentences(f: SentenceMap) -> Result:
    where, dims = layer_note(f.layer, f.num_layers), f.fit.dims
    chart = charts.projection_views(
        f.points.assign(listing=f.points["text"]), dims=dims, axis_titles=axis_titles(f.fit), color="text",
        shape=None, label="token", tooltip=["text"],
        title=f"Sentence vectors ({f.pooling.value} pooling, {where}, {f.model})",
    )
    text = (f"{len(f.texts)} sentence vectors ({f.pooling.value} pooling, {where} of **{f.model}**) "
            f"projected to {dims}-D with {f.fit.method.value}, one labelled point per text."
            f"{explained_sentence(f.fit)}{notes(f.fit)}")
    settings = {"level": "sentences", "method": f.fit.method.value, "dims": dims, "layer": f.asked_layer,
                "pool": f.pooling.value, "basis": "texts"}
    return map_result("project", text, Table("coordinates", f.points), f.fit, chart, list(f.warnings), f.model,
                      settings)


def _vocab_basis(f: VocabBasisMap) -> Result:
    where, dims = layer_note(f.layer, f.num_layers), f.fit.dims
    kinds = {"static": "static (input embedding)", "contextual": f"contextual ({where})"}
    long = f.shown.assign(kind=f.shown["kind"].map(kinds))
    chart = charts.projection_views(
        long.assign(listing=listing(long) + "  ·  " + f.shown["kind"]),  # each token is listed twice: say which
        dims=dims, axis_titles=axis_titles(f.fit), color="text",
        shape="kind", shape_domain=sorted(long["kind"].unique(), reverse=True),
        shape_range=["circle", "triangle-up"], size_range=[50, 90],
        label="token" if len(long) <= 400 else None, tooltip=["token", "text", "position", "kind"],
        lines="pair", background=f.background,
        title=f"Static and contextual token vectors in the input-embedding basis ({f.model})",
    )
    sample = (f"UMAP was fitted on a seeded sample of {f.basis_rows:,} vocabulary rows.",) if f.basis_sampled else ()
    text = (f"{method_name(f.fit)} fitted on {f.basis_rows:,} rows of "
            f"**{f.model}**'s input-embedding matrix ({'[unused…] rows skipped' if f.basis_rows else ''}); "
            f"each of the {len(f.tokens)} tokens is drawn twice in that basis: its static row (a circle) and its "
            f"contextual vector from the {where} (a triangle), joined by a line. "
            f"Grey dots are {len(f.background):,} vocabulary rows for orientation. The mean cosine between a "
            f"token's static row and its contextual vector is {f.tokens['cosine static vs contextual'].mean():.3f}."
            f"{explained_sentence(f.fit)} Contextual vectors were never part of the fit, so their spread "
            f"shows how far the layers move a token away from its dictionary entry.{notes(f.fit, *sample)}")
    warnings = list(f.warnings)
    if f.sampled:
        warnings.append(sample_warning(len(long), 2 * len(f.tokens), "points"))
    settings = {"level": "tokens", "method": f.fit.method.value, "dims": dims, "layer": f.layer,
                "pool": f.pooling.value, "basis": "vocab"}
    return map_result("project", text, Table("static and contextual", f.tokens), f.fit, chart, warnings, f.model,
                      settings)


def _glove(f: GloveMap) -> Result:
    name, dims, shown = method_name(f.fit), f.fit.dims, f.shown
    chart = charts.projection_views(
        shown.assign(listing=shown["word"] + " · " + shown["text"]), dims=dims,
        axis_titles=axis_titles(f.fit), color="text", label="word" if len(shown) <= 400 else None,
        tooltip=["word", "text", "position"], background=f.background,
        title=f"The texts' words in {f.source} ({name} fitted on its {f.basis_words:,} most frequent words)",
    )
    shared = f.shared
    same_note = (f" {', '.join(code(w, 30) for w in shared[:5])} appear{'s' if len(shared) == 1 else ''} in "
                 "more than one text and land on one point: GloVe has one vector per word, whatever the "
                 "sentence." if shared else
                 " GloVe has one vector per word, whatever the sentence: a word repeated in another text "
                 "would land on the same point.")
    n = len(f.texts)
    text = (f"{len(f.words)} words of {n} text{'s' if n != 1 else ''} placed in {f.source} "
            f"(50 wide), in a {name} map fitted on its {f.basis_words:,} most frequent words; grey dots "
            f"are {len(f.background):,} of those words for orientation.{same_note} No transformer is involved: "
            "use `--basis vocab` to see the model move tokens away from their dictionary rows."
            f"{explained_sentence(f.fit)}")
    warnings = list(f.warnings)
    if len(shown) < len(f.words):
        warnings.append(f"The chart shows the first {len(shown):,} of {len(f.words):,} words; the table has them all.")
    settings = {"level": "tokens", "method": f.fit.method.value, "dims": dims, "basis": "glove"}
    return map_result("project", text, Table("words in GloVe", f.words), f.fit, chart, warnings, f.source, settings)


# --- vocab -----------------------------------------------------------------------------------

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


def vocab(f: Vocabulary) -> Result:
    """The vocabulary map: coordinates and labels, tokens per label, the chart, and the Projector zip."""
    paint, dims, spec = f.color.value, f.fit.dims, COLORS[f.color]
    cols = [f"dim{i + 1}" for i in range(dims)]
    chart_data = f.shown[["token", "id", *dict.fromkeys([paint, "special"]), *cols]].round(
        {c: 4 for c in cols})  # only what the chart draws: the spec stays small
    chart = charts.projection_views(
        chart_data, dims=dims, axis_titles=axis_titles(f.fit), color=paint, color_type=spec.kind,
        color_title=spec.title, label=None, listing="token", tooltip=["token", "id", paint],
        title=f"{f.model} input embeddings, coloured by {paint}",
    )
    bundle = projector_zip(f.vectors, f.labels, f"{f.model} input embeddings")
    text = (f"The first {f.n:,} rows of **{f.model}**'s input-embedding matrix ({f.hidden_size} wide), "
            f"{f.skipped:,} `[unused…]` placeholder rows skipped: {len(f.tokens):,} tokens projected to {dims}-D "
            f"with {f.fit.method.value}, coloured by {paint}.{explained_sentence(f.fit)} "
            f"`vocab-projector.zip` holds vectors.tsv and metadata.tsv ({', '.join(f.labels.columns[1:])}) for the "
            f"TensorBoard Embedding Projector.{notes(f.fit)}")
    warnings = [sample_warning(len(f.shown), len(f.tokens), "tokens")] if f.sampled else []
    summary = f.tokens.groupby(paint).size().rename("tokens").reset_index()
    settings = {"n": f.n, "method": f.fit.method.value, "color": paint, "dims": dims, "tokens": len(f.tokens)}
    return map_result("vocab", text, Table("vocabulary", f.tokens), f.fit, chart, warnings, f.model, settings,
                      chart_name="vocabulary", extra_tables=[Table(f"tokens by {paint}", summary)],
                      extra_artifacts=[Artifact("vocab-projector.zip", bundle, "application/zip")])


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
