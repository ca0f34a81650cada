"""Rendering without a model: escaping, table sizes, JSON shape, downloads."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd

from assistant.dispatch import Reply
from assistant.render.html import chart_hint, reply_payload
from assistant.render.terminal import table_text, terminal_text, write_downloads
from assistant.session import Session
from tools.core.results import Artifact, Chart, Result, Table
from tools.core.text import code, md

HOSTILE = ("<script>alert(1)</script> <img src=x onerror=alert(2)> ![x](http://evil.example/a.png) "
           "[go](javascript:alert(3))")


def sample_result() -> Result:
    frame = pd.DataFrame({"text": [HOSTILE] + [f"row {i}" for i in range(29)], "value": np.arange(30) / 7})
    chart = alt.Chart(frame).mark_bar().encode(x="value:Q", y="text:N")
    return Result("compare", f"About {md(HOSTILE)}", [Table("rows", frame)], [Chart("bars", chart)],
                  warnings=["one warning"], model="minilm", settings={"pool": "mean", "layer": None},
                  artifacts=[Artifact("vectors.npy", b"\x93NUMPY")])


def test_md_escapes_markup_and_links():
    out = md(HOSTILE)
    assert "<script>" not in out and "<img" not in out
    assert "](" not in out and "![" not in out


def test_code_span_survives_backticks():
    assert code("a`b") == "``a`b``"
    assert code("`x`") == "`` `x` ``"


def test_a_long_path_keeps_its_start_and_its_last_folders_and_a_long_text_its_start():
    deep = "/tmp/" + "x" * 100 + "/reviews/mine"
    shown = code(deep, 40, path=True)
    assert shown.startswith("`/tmp/x") and shown.endswith("/reviews/mine`") and "…" in shown
    assert len(shown) == 40 + 2
    assert code(deep, 40) == f"`{deep[:39]}…`"
    assert code("/tmp/short", 40, path=True) == "`/tmp/short`"


def test_reply_html_escapes_and_shows_eight_rows_then_folds_the_rest():
    payload = reply_payload(Reply("x", result=sample_result()))
    html = payload["html"]
    assert "<script>" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert "javascript:" not in html.replace("[go](javascript:alert(3))", "")  # shown as text, never a link
    opened, folded = html.split("<details class='more-rows'>")
    assert opened.count("<tr") == 9  # header + 8 rows, then the other 22 one click away
    assert folded.count("<tr") == 23 and "22 more rows" in folded


def test_reply_html_reads_answer_warning_chart_table_footer_in_that_order():
    payload = reply_payload(Reply("x", result=sample_result()))
    html = payload["html"]
    order = [html.index(k) for k in ("class='answer'", "one warning", "class='chart'", "class='table-block'",
                                     "compare · minilm · pool=mean")]
    assert order == sorted(order)
    (chart,) = payload["charts"]
    assert chart["spec"]["mark"]["type"] == "bar" and f"data-chart='{chart['id']}'" in html


def test_error_reply_escapes_prose_but_keeps_code_spans():
    html = reply_payload(Reply("x", error="Unknown command `<b>`. <i>hi</i>"))["html"]
    assert "<code>&lt;b&gt;</code>" in html and "&lt;i&gt;" in html and "<i>" not in html
    assert reply_payload(Reply("x", error="Nope."))["ok"] is False


def test_json_shape_is_stable():
    data = Reply("x", result=sample_result()).to_json()
    assert set(data) == {"ok", "command", "model", "elapsed_ms", "text", "warnings", "settings",
                         "tables", "charts", "drawings", "error", "interpreted_as", "read_because", "suggestions"}
    assert data["tables"][0]["columns"] == ["text", "value"]
    assert isinstance(data["tables"][0]["rows"][1][1], float)
    assert data["charts"][0]["vega_lite"]["mark"]["type"] == "bar"
    json.dumps(data)
    bad = Reply("x", error="Nope.", command="compare").to_json()
    assert bad["ok"] is False and bad["error"] == "Nope." and bad["tables"] == []


def test_terminal_text_shows_tables():
    out = terminal_text(Reply("x", result=sample_result()))
    assert "[rows]" in out and "row 5" in out and "warning: one warning" in out
    assert terminal_text(Reply("x", error="Nope.")) == "error: Nope."


def test_the_terminal_shows_a_replys_words_without_markdown_but_keeps_code_literal():
    name = "my-notes & co_2 *draft*"
    line = "x --name my\\-y `z`"
    result = dataclasses.replace(sample_result(), text=f"Loaded **{md(name)}** from {code(line)}.",
                                 warnings=[f"Column {md('a_b')} is empty."])
    out = terminal_text(Reply("x", result=result))
    assert f"Loaded {name} from {code(line)}." in out  # as the page's markdown shows it, the code span as typed
    assert "warning: Column a_b is empty." in out
    assert terminal_text(Reply("x", error=f"No corpus {md('my-notes')}.")) == "error: No corpus my-notes."


def test_an_artifact_named_as_the_replys_json_is_written_beside_it_not_over_it():
    result = dataclasses.replace(sample_result(), artifacts=[Artifact("x.json", b'{"summary": 1}', "application/json")])
    result = dataclasses.replace(result, command="x")
    paths = [Path(p) for p in write_downloads(result, Session().downloads_dir(fresh=True))]
    names = [p.name for p in paths]
    assert len(names) == len(set(names)) and "x.json" in names and "x-2.json" in names
    assert json.loads((paths[0].parent / "x.json").read_text())["command"] == "x"  # the reply's own JSON
    assert json.loads((paths[0].parent / "x-2.json").read_text()) == {"summary": 1}


def test_a_table_wider_than_the_terminal_is_wrapped_and_keeps_every_word():
    usage = "compare a | b [| c ...] [--pool cls|mean|max|sbert|all] [--layer N] [--vs MODEL] " * 2
    texts = pd.DataFrame({"command": ["compare", "help"], "usage": [usage.strip(), "help [command]"],
                          "score": [0.123456789, 2.0]})
    out = table_text(texts, 60)
    assert max(len(line) for line in out.splitlines()) <= 60
    first = out.split("\n\n")[0]
    assert " ".join(first.split()).startswith("command: compare usage: " + " ".join(usage.split()))
    assert "score: 0.123457" in first and "help [command]" in out.split("\n\n")[1]
    numbers = pd.DataFrame({f"{n}: text {n}": [0.5, 0.25] for n in range(1, 13)})
    wrapped = table_text(numbers, 60)  # numbers: columns continue below, as pandas writes them
    assert max(len(line) for line in wrapped.splitlines()) <= 60 and "12: text 12" in wrapped
    assert table_text(numbers, 1000) == numbers.to_string(index=False)  # it fits: one aligned table


def test_downloads_are_csv_json_and_artifacts_in_the_conversations_folder_freed_with_it():
    session = Session()
    paths = [Path(p) for p in write_downloads(sample_result(), session.downloads_dir(fresh=True))]
    assert {p.suffix for p in paths} == {".csv", ".json", ".npy"}
    assert {p.parent for p in paths} == {session.downloads_dir()}
    frame = pd.read_csv(paths[0])
    assert len(frame) == 30 and frame["text"][0] == HOSTILE
    assert json.loads(paths[1].read_text())["command"] == "compare"
    other = Session()
    assert Path(write_downloads(sample_result(), other.downloads_dir(fresh=True))[0]).parent != paths[0].parent
    session.close()
    assert not paths[0].parent.exists() and Path(other.downloads).exists()  # each conversation's own folder
    other.close()


def test_the_page_says_how_to_use_a_chart_from_what_its_spec_declares(run):
    project = run("project The cat sat. | A dog ran.").result.charts[0].chart.to_dict()
    heatmap = run("compare A cat. | A dog.").result.charts[0].chart.to_dict()
    assert chart_hint(project) == "Hover a point for its details; drag a box to list the points inside it."
    assert chart_hint(heatmap) == "Hover the chart for exact values."
    assert chart_hint(alt.Chart(pd.DataFrame({"a": [1]})).mark_point().encode(x="a").to_dict()) == ""
    assert "drag a box" not in run("project The cat sat. | A dog ran.").result.text  # the tool keeps to facts


def test_a_small_number_in_a_table_is_not_shown_as_zero():
    """selfattn's differences from the model (about 2e-7) read 0.0000 at four decimals."""
    from assistant.render.tables import number

    assert number(2.37e-07) == "2.37e-07" and number(-3e-05) == "-3.00e-05"
    assert number(0.0) == "0.0000" and number(0.80662) == "0.8066" and number(-0.5) == "-0.5000"


def test_the_side_panels_table_rounds_as_the_reply_does_and_keeps_large_tables_whole():
    """The page's sortable full table shows 4 decimals (and small values in 3 significant digits), keeps the order
    of the values, and takes a table of 300,000 rows (past what a pandas Styler formats)."""
    import gradio as gr

    from assistant.render.tables import shown

    frame = pd.DataFrame({"text": ["a", "b", "c"], "share": [1 / 3, 0.225, 2.37e-07], "n": [1, 2, 3]})
    got = shown(frame)
    assert got["share"].tolist() == [0.3333, 0.225, 2.37e-07] and got["n"].tolist() == [1, 2, 3]
    assert frame["share"][0] == 1 / 3  # the reply's own table (and its downloads) keep every digit
    big = pd.DataFrame({"x": np.linspace(0, 1, 300_000), "word": ["w"] * 300_000})
    value = gr.Dataframe(interactive=False).postprocess(shown(big))
    assert len(value.data) == 300_000 and value.data[150_000][0] == round(150_000 / 299_999, 4)
