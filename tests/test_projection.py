"""project and vocab: PCA / t-SNE maps of tokens, sentences and the vocabulary, and the Projector export."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
from sklearn.decomposition import PCA

from tools import charts, projection
from tools.core.errors import UserError
from tools.projection import vocab

PARAPHRASES = ("In 1995, the last survey, those numbers were equal. | "
               "The last time the survey was conducted, in 1995, those numbers matched.")


def chart_rows(spec: dict) -> int:
    """All data rows a Vega-Lite spec embeds (datasets plus inline values)."""
    rows = sum(len(v) for v in spec.get("datasets", {}).values())

    def inline(node):
        nonlocal rows
        if isinstance(node, dict):
            if isinstance(node.get("data"), dict) and "values" in node["data"]:
                rows += len(node["data"]["values"])
            for v in node.values():
                inline(v)
        elif isinstance(node, list):
            for v in node:
                inline(v)

    inline({k: v for k, v in spec.items() if k != "datasets"})
    return rows


def dims_of(frame) -> np.ndarray:
    return frame[[c for c in frame.columns if c.startswith("dim")]].to_numpy(dtype=float)


# --- the numbers -------------------------------------------------------------------------


def test_pca_matches_scikit_learn_and_the_svd():
    matrix = np.random.default_rng(1).normal(size=(40, 12)).astype(np.float32)
    fitted = projection.fit(matrix, projection.Method.PCA, 3)
    reference = PCA(n_components=3, random_state=0)
    expected = reference.fit_transform(matrix)
    np.testing.assert_allclose(fitted.coords, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fitted.explained, reference.explained_variance_ratio_, rtol=1e-5)
    # and independently of scikit-learn: squared singular values of the centred matrix
    s = np.linalg.svd(matrix - matrix.mean(axis=0), compute_uv=False)
    np.testing.assert_allclose(fitted.explained, (s**2 / (s**2).sum())[:3], rtol=1e-4)


def test_project_tokens_pca_equals_scikit_learn_on_the_same_tokens(lm):
    from tools.encoding.encode import encode

    result = projection.project(lm, PARAPHRASES.split(" | "))
    table = result.table("coordinates")
    tokens = table[table["kind"] != "sentence vector (mean)"]
    encs = encode(lm, PARAPHRASES.split(" | "))
    matrix = np.vstack([e.layer().numpy() for e in encs])
    assert len(tokens) == len(matrix) and list(tokens["token"]) == [t for e in encs for t in e.tokens]
    reference = PCA(n_components=2, random_state=0)
    np.testing.assert_allclose(dims_of(tokens), reference.fit_transform(matrix), rtol=1e-5, atol=1e-4)
    ev = result.table("explained variance")
    np.testing.assert_allclose(ev["explained variance ratio"], reference.explained_variance_ratio_,
                               rtol=1e-5, atol=1e-7)
    assert "PC1" in result.text and "explained" in result.text.lower()
    # mean pooling is linear, so each sentence vector lands at the mean of its own tokens' positions
    sentences = table[table["kind"] == "sentence vector (mean)"]
    first = tokens[tokens["text"] == sentences["text"].iloc[0]]
    np.testing.assert_allclose(dims_of(sentences)[0], dims_of(first).mean(axis=0), atol=1e-4)


def test_tsne_on_three_points_picks_a_valid_perplexity_and_says_so():
    matrix = np.random.default_rng(0).normal(size=(3, 8))
    fitted = projection.fit(matrix, projection.Method.TSNE, 2)
    assert fitted.coords.shape == (3, 2) and np.isfinite(fitted.coords).all()
    assert projection.tsne_perplexity(3) < 3
    assert any("perplexity" in note for note in fitted.notes)
    assert projection.tsne_perplexity(500) == 30.0


def test_sentence_level_tsne_with_three_texts(run):
    reply = run("project A cat sat. | A dog ran. | Stocks fell. --level sentences --method tsne")
    assert reply.ok, reply.error
    assert len(reply.result.table("coordinates")) == 3
    assert "perplexity" in reply.result.text


def test_static_rows_and_contextual_vectors_share_the_vocabulary_basis(lm):
    result = projection.project(lm, ["I deposited money at the bank."], basis="vocab")
    table = result.table("static and contextual")
    ids, _ = projection.vocabulary(lm)
    matrix = projection.embedding_matrix(lm)
    pca = PCA(n_components=2, random_state=0).fit(matrix[ids])
    static = pca.transform(matrix[table["id"].to_numpy()])
    np.testing.assert_allclose(table[["static dim1", "static dim2"]].to_numpy(), static, atol=1e-4)
    assert "[unused" not in " ".join(table["token"])  # the text's own tokens
    spec = result.charts[0].chart.to_dict()
    marks = json.dumps(spec)
    assert '"line"' in marks  # the line from each static position to its contextual one
    assert chart_rows(spec) <= charts.MAX_ROWS
    listed = [row["listing"] for rows in spec["datasets"].values() for row in rows if "listing" in row]
    bank = list(dict.fromkeys(line for line in listed if line.startswith("bank ")))  # drawn twice: listed as which
    assert len(bank) == 2 and len(set(bank)) == 2 and {b.rsplit(" ", 1)[-1] for b in bank} == {"static", "contextual"}
    assert "PC1 (" in marks and "PC2 (" in marks  # the axes name the components and their explained variance


# --- the charts --------------------------------------------------------------------------


def test_token_chart_marks_specials_and_sentence_vectors_with_tooltips_and_a_brush_list(lm):
    result = projection.project(lm, PARAPHRASES.split(" | "))
    spec = result.charts[0].chart.to_dict()
    rows = next(iter(spec["datasets"].values()))
    kinds = {r["kind"] for r in rows}
    assert kinds == {"token", "special token", "sentence vector (mean)"}
    assert {r["token"] for r in rows if r["kind"] == "special token"} == {"[CLS]", "[SEP]"}
    assert spec["params"][0]["name"] == "brush" and spec["params"][0]["select"]["type"] == "interval"
    text = json.dumps(spec)
    for field in ("token", "text", "position"):
        assert f'"field": "{field}"' in text
    listing = spec["hconcat"][-1]
    assert listing["transform"][0]["filter"]["param"] == "brush"
    assert listing["mark"]["type"] == "text"


def test_three_dims_are_three_linked_pairwise_views(run):
    reply = run("project The bank of the river. | The bank raised its rates. --dims 3")
    assert reply.ok, reply.error
    spec = reply.result.charts[0].chart.to_dict()
    assert len(spec["hconcat"]) == 4  # 1-2, 1-3, 2-3 and the brushed list
    pairs = []
    for view in spec["hconcat"][:3]:
        enc = next(layer["encoding"] for layer in view["layer"] if "x" in layer.get("encoding", {}))
        pairs.append((enc["x"]["field"], enc["y"]["field"]))
    assert pairs == [("dim1", "dim2"), ("dim1", "dim3"), ("dim2", "dim3")]
    assert len(spec["params"][0]["views"]) == 3  # one brush, shared by all three views
    assert list(reply.result.table("explained variance")["component"]) == ["PC1", "PC2", "PC3"]


@pytest.mark.parametrize("n", [6000, pytest.param(30000, marks=pytest.mark.slow)])
def test_vocab_chart_stays_under_the_row_limit_and_says_it_sampled(lm, n):
    result = vocab.vocab(lm, n=n, color="subword")
    table = result.table("vocabulary")
    assert len(table) > charts.MAX_ROWS
    for chart in result.charts:
        assert chart_rows(chart.chart.to_dict()) <= charts.MAX_ROWS
    assert any("sample" in w for w in result.warnings)


@pytest.mark.slow
def test_vocab_30000_through_the_command_line_reports_progress(hub):
    from assistant.dispatch import execute
    from assistant.session import Session

    steps = []
    reply = execute("vocab --n 30000 --dims 3", Session(), hub, progress=lambda f, m: steps.append((f, m)))
    assert reply.ok, reply.error
    assert all(chart_rows(c.chart.to_dict()) <= charts.MAX_ROWS for c in reply.result.charts)
    assert len(reply.result.table("vocabulary")) == 30000 - 994  # minilm has 994 [unused…] rows
    assert steps and steps[-1][0] == 1.0 and [f for f, _ in steps] == sorted(f for f, _ in steps)


# --- vocab labels and the Projector export ---------------------------------------------------


def test_labels_follow_the_source_notebook():
    frame = vocab.token_labels(["the", "##ing", "1995", "[CLS]", "queue"], {"[CLS]"})
    rows = frame.set_index("token")
    assert rows.loc["##ing", "length"] == 3 and rows.loc["##ing", "subword"]
    assert rows.loc["queue", "vowels"] == 4
    assert rows.loc["1995", "number"] and not rows.loc["the", "number"]
    assert rows.loc["[CLS]", "special"] and not rows.loc["[CLS]", "subword"]


def test_projector_export_round_trips(run, lm):
    reply = run("vocab --n 1500 --color vowels")
    assert reply.ok, reply.error
    result = reply.result
    table = result.table("vocabulary")
    assert not table["token"].str.startswith("[unused").any()
    bundle = next(a for a in result.artifacts if a.filename == "vocab-projector.zip")
    with zipfile.ZipFile(io.BytesIO(bundle.data)) as zf:
        vectors = zf.read("vectors.tsv").decode("utf-8").splitlines()
        metadata = zf.read("metadata.tsv").decode("utf-8").splitlines()
        config = zf.read("projector_config.pbtxt").decode("utf-8")
    assert len(vectors) == len(table) == len(metadata) - 1
    assert metadata[0].split("\t") == ["token", "length", "vowels", "number", "subword", "special"]
    parsed = np.array([[float(v) for v in line.split("\t")] for line in vectors])
    assert parsed.shape == (len(table), lm.hidden_size)
    matrix = projection.embedding_matrix(lm)
    np.testing.assert_allclose(parsed, matrix[table["id"].to_numpy()], rtol=1e-5, atol=1e-6)
    assert [line.split("\t")[0] for line in metadata[1:]] == list(table["token"])
    assert 'tensor_path: "vectors.tsv"' in config and 'metadata_path: "metadata.tsv"' in config


def test_downloads_hold_the_coordinates_and_the_chart_spec(run):
    reply = run("project A cat sat. | A dog ran. | Stocks fell. --level sentences")
    assert reply.ok, reply.error
    files = {a.filename: a for a in reply.result.artifacts}
    csv = files["project-coordinates.csv"].data.decode("utf-8").splitlines()
    assert csv[0].split(",")[-2:] == ["dim1", "dim2"] and len(csv) == 4
    spec = json.loads(files["project-chart.vl.json"].data)
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


# --- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(("line", "expected"), [
    ("project Only one text. --level sentences", "needs at least 3 points"),
    ("project A. | B. | C. --level sentences --dims 3", "needs at least 4 points"),
    ("project Some text --dims 4", "--dims 4 is not possible"),
    ("vocab --n 40000", "--n 40000 is outside minilm's vocabulary"),
    ("vocab --n 9000 --method tsne", "t-SNE of 8,006 vocabulary rows"),
    ("project Some text --basis glove --method tsne", "t-SNE cannot place new points"),
    ("project Zxqvbnm wqxzt --basis glove", "not in GloVe"),
    ("project A cat. | A dog. | A cow. --basis glove --level sentences", "--level tokens"),
    ("project Some text --basis vocab --method tsne", "t-SNE cannot place new points"),
    ("project Some text --method umapp", "Did you mean `umap`"),
])
def test_bad_input_gets_one_sentence(run, line, expected):
    reply = run(line)
    assert not reply.ok
    assert expected in reply.error
    assert "\n" not in reply.error and reply.error.rstrip().endswith((".", "?"))


def test_umap_is_an_optional_extra_with_an_install_hint(run):
    try:
        import umap  # noqa: F401 - imported only to see whether the extra is installed
    except ImportError:
        reply = run("project A cat sat. --method umap")
        assert not reply.ok and "pip install" in reply.error and "umap-learn" in reply.error
    else:
        reply = run("project A cat sat on the mat today. --method umap")
        assert reply.ok, reply.error


def test_sentence_level_refuses_basis_vocab():
    with pytest.raises(UserError, match="--level tokens"):
        projection.project("minilm", ["a", "b", "c"], level="sentences", basis="vocab")


def test_glove_basis_places_each_word_once_whatever_its_sentence(run):
    reply = run("project I sat by the river bank. | I took out a bank loan. --basis glove")
    assert reply.ok, reply.error
    words = reply.result.tables[0].frame
    bank = words[words["word"] == "bank"]
    assert len(bank) == 2 and bank["text"].nunique() == 2
    assert bank[["dim1", "dim2"]].nunique().tolist() == [1, 1]  # static: one point in both sentences
    river = words[words["word"] == "river"][["dim1", "dim2"]].values.tolist()
    assert river != bank[["dim1", "dim2"]].values[:1].tolist()
    assert "`bank`" in reply.result.text and "GloVe" in reply.result.text
    assert reply.result.charts and reply.result.settings["basis"] == "glove"


def test_glove_basis_leaves_out_unknown_words_and_says_so(run):
    reply = run("project The zxqvbnm sat by the bank. --basis glove")
    assert reply.ok, reply.error
    assert "zxqvbnm" not in set(reply.result.tables[0].frame["word"])
    assert any("zxqvbnm" in w and "left out" in w for w in reply.result.warnings)


def test_labels_that_would_overlap_are_thinned_and_the_rest_kept():
    import pandas as pd

    from tools.charts.scatter import thinned

    crowded = pd.DataFrame({"dim1": [0.0, 0.001, 0.002, 1.0, 0.5], "dim2": [0.0, 0.0, 0.001, 1.0, 0.5],
                            "token": ["bank", "banks", "banker", "river", "money"]})
    kept = thinned(crowded, "dim1", "dim2", "token", 300)
    assert list(kept["token"]) == ["bank", "river", "money"]  # three words on one spot: the first stays
    spread = crowded.assign(dim1=[0.0, 0.3, 0.6, 1.0, 0.45], dim2=[0.0, 0.3, 0.6, 1.0, 0.9])
    assert len(thinned(spread, "dim1", "dim2", "token", 300)) == 5  # nothing overlaps: every label drawn
