"""Reading a corpus file: every format, the text column it takes, and each refusal counted."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tools.core.config import Settings
from tools.core.errors import UserError
from tools.corpus.read import read_texts

SETTINGS = Settings(corpus_max_chars=60, corpus_max_rows=1000)
LONG = "A fairly long sentence about the weather turning cold in the hills."  # 68 characters: cut to 60


def test_csv_takes_the_longest_string_column_keeps_metadata_and_counts_refusals(tmp_path):
    path = tmp_path / "notes.csv"
    path.write_text(
        "id,label,sentence\n"
        "1,pets,A cat sat on the mat.\n"
        "2,pets,\n"                              # empty text: refused
        "3,weather,It rained all day long.\n"
        "4,weather,\"Quoted, with a comma\"\n"
        f"5,weather,{LONG}\n"
        "6,x,too,many,fields,here\n",            # malformed: skipped and counted
        encoding="utf-8")
    got = read_texts(path, SETTINGS)
    r = got.report
    assert r.file_format == "csv" and r.text_column == "sentence" and r.chosen_by == "longest"
    assert "id" not in r.mean_lengths  # digits are not a text column
    assert got.frame["text"].tolist() == ["A cat sat on the mat.", "It rained all day long.", "Quoted, with a comma",
                                          LONG[:60]]
    assert list(got.frame.columns) == ["text", "id_1", "label"]  # `id` is the store's own: the file's is renamed
    assert r.renamed == (("id", "id_1"),)  # (the load's reply says so: test_corpus_commands)
    assert got.frame["label"].tolist() == ["pets", "weather", "weather", "weather"]
    assert r.refused["empty text"] == 1 and r.refused["malformed line"] == 1
    assert r.truncated == 1 and r.rows_kept == 4 and len(r.sha256) == 64


def test_tsv_keeps_stray_quotes_as_text(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text('genre\ttext\nnews\tHe said "stop" twice.\nnews\tA "quote that never closes.\n', encoding="utf-8")
    got = read_texts(path, SETTINGS)
    assert got.frame["text"].tolist() == ['He said "stop" twice.', 'A "quote that never closes.']
    assert got.report.text_column == "text" and got.report.metadata_columns == ("genre",)


def test_jsonl_counts_lines_that_are_not_json_or_not_objects(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = [json.dumps({"body": "The first document is here.", "n": 1, "tags": ["a", "b"]}),
             "{not json",
             json.dumps([1, 2]),
             json.dumps({"body": "  ", "n": 3}),
             json.dumps({"body": "The second document.", "n": 4})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = read_texts(path, SETTINGS)
    r = got.report
    assert r.text_column == "body"
    assert got.frame["text"].tolist() == ["The first document is here.", "The second document."]
    assert r.refused["not JSON"] == 1 and r.refused["not a JSON object"] == 1 and r.refused["empty text"] == 1
    assert got.frame["tags"].iloc[0] == '["a", "b"]'  # nested values kept as JSON text


def test_parquet_and_a_given_column(tmp_path):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"title": ["Short one", "Short two"], "abstract": ["A much longer abstract text.", "Another one."],
                  "year": [2020, 2021]}).to_parquet(path)
    assert read_texts(path, SETTINGS).report.text_column == "abstract"
    got = read_texts(path, SETTINGS, column="Title")  # case-insensitive when unambiguous
    assert got.report.chosen_by == "given" and got.frame["text"].tolist() == ["Short one", "Short two"]
    assert got.frame["year"].tolist() == [2020, 2021]  # numbers stay numbers
    with pytest.raises(UserError, match=r"no column `body`; its columns are `title`, `abstract`, `year`"):
        read_texts(path, SETTINGS, column="body")


def test_txt_is_one_text_per_line_with_lines_not_utf8_read_as_windows_1252_and_counted(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes("first line\n\nsecond café line\n".encode() + "Crème brûlée, 5 €\nthird line\n".encode("cp1252"))
    got = read_texts(path, SETTINGS)
    r = got.report
    assert r.file_format == "txt" and r.text_column == "text" and r.chosen_by == "only"
    assert got.frame["text"].tolist() == ["first line", "second café line", "Crème brûlée, 5 €", "third line"]
    assert r.undecodable_lines == 1 and r.refused["empty text"] == 1 and r.metadata_columns == ()


def test_row_limit_and_size_limit_and_bad_files(tmp_path):
    path = tmp_path / "many.txt"
    path.write_text("\n".join(f"text number {i}" for i in range(30)), encoding="utf-8")
    got = read_texts(path, Settings(corpus_max_rows=25))
    assert got.report.rows_kept == 25 and got.report.refused["over the row limit"] == 5
    big = tmp_path / "big.txt"
    big.write_bytes(b"x\n" * (1024 * 1024))
    with pytest.raises(UserError, match="the limit is 1 MB"):
        read_texts(big, Settings(corpus_max_mb=1))
    with pytest.raises(UserError, match="unknown file type"):
        read_texts(tmp_path / "x.docx", SETTINGS)
    empty = tmp_path / "empty.csv"
    empty.write_text("a,b\n,\n", encoding="utf-8")
    with pytest.raises(UserError, match="no column of text"):
        read_texts(empty, SETTINGS)


def test_a_spreadsheets_utf16_text_is_read_and_a_binary_file_is_named_as_one(tmp_path):
    path = tmp_path / "unicode.tsv"  # a spreadsheet's "Unicode text": UTF-16 with its BOM, tab-separated
    path.write_bytes("review\tstars\nCafé crème, très bon\t5\nCold soup\t1\n".encode("utf-16"))
    got = read_texts(path, SETTINGS)
    assert got.frame["text"].tolist() == ["Café crème, très bon", "Cold soup"]
    assert got.report.text_column == "review" and got.report.undecodable_lines == 0
    binary = tmp_path / "sheet.csv"
    binary.write_bytes(b"PK\x03\x04\x14\x00\x06\x00" + bytes(range(256)) * 4)  # an .xlsx (a zip) renamed .csv
    with pytest.raises(UserError, match=r"^`sheet.csv` is not a text file .*save your texts as CSV"):
        read_texts(binary, SETTINGS)
