"""Downloads are safe to open: a spreadsheet never runs a user's text as a formula (OWASP CSV injection)."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import pandas as pd

from assistant.render.terminal import write_downloads
from tools.core.results import csv_text

HOSTILE = ["=HYPERLINK(\"http://evil.example\",\"x\")", "+1+2", "-2+3", "@SUM(A1:A2)", "\tTAB=1", "\rCR=1"]


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_formula_cells_are_prefixed_and_numbers_and_plain_text_stay():
    frame = pd.DataFrame({"text": HOSTILE + ["a plain text", "x=1"], "cosine": [-0.5] * 8})
    rows = _rows(csv_text(frame))
    assert rows[0] == ["text", "cosine"]
    cells = [r[0] for r in rows[1:]]
    assert cells[:6] == ["'" + h for h in HOSTILE]  # shown as text, never evaluated
    assert cells[6:] == ["a plain text", "x=1"]  # only the first character matters
    assert {r[1] for r in rows[1:]} == {"-0.5"}  # a negative number is a value, not a formula
    assert _rows(csv_text(pd.DataFrame({"=cmd|' /C calc'!A0": [1]})))[0] == ["'=cmd|' /C calc'!A0"]


def test_a_reply_with_hostile_texts_downloads_safe_csv_and_exact_json(run, tmp_path):
    reply = run("compare =1+1 | @SUM(A1)")  # the similarity table holds both texts verbatim
    assert reply.ok and reply.result.table("similarity")["a"].tolist() == ["=1+1"]
    paths = write_downloads(reply.result, tmp_path)
    table = next(p for p in paths if p.endswith(".csv"))
    text = open(table, encoding="utf-8", newline="").read()
    assert "'=1+1" in text and "'@SUM(A1)" in text
    assert not any(cell.startswith(("=", "+", "@")) for row in _rows(text) for cell in row)
    data = json.loads(open(next(p for p in paths if p.endswith(".json")), encoding="utf-8").read())
    assert "=1+1" in json.dumps(data) and "'=1+1" not in json.dumps(data)  # JSON stays exact


def test_embed_csv_downloads_are_safe_too(run):
    reply = run("embed =A1*2 | +cmd")
    assert reply.ok
    files = {a.filename: a.data.decode("utf-8") for a in reply.result.artifacts if a.filename.endswith(".csv")}
    assert "'=A1*2" in files["sentence_vectors.csv"] and "'+cmd" in files["sentence_vectors.csv"]
    assert "\r\n1,1,'=," in files["token_vectors.csv"]  # text 2's first token, the `=` of `=A1*2`, neutralised
    assert not any(cell.startswith(("=", "+")) for text in files.values() for row in _rows(text) for cell in row)


def test_projector_zip_stays_exact(run):
    reply = run("vocab --n 300 --method pca")
    assert reply.ok
    zipped = next((a for a in reply.result.artifacts if a.filename.endswith(".zip")), None)
    if zipped is not None:  # the Projector's TSV is not a spreadsheet download: tokens stay as they are
        meta = zipfile.ZipFile(io.BytesIO(zipped.data)).read("metadata.tsv").decode("utf-8")
        assert "\n'" not in meta
