"""The corpus family as a person uses it: load a file, search it, group it, find duplicates and odd ones out,
name its rows in any command, from one conversation, from a new process, and on a shared server where one
visitor's corpora are invisible to another."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from assistant.commands.registry import TABLE
from assistant.corpora import Jobs
from assistant.dispatch import execute
from assistant.session import Session
from assistant.understanding import understand
from tools.benchmark.access import DataAccess
from tools.corpus.folder import ROWS

TOPICS = {
    "delivery": ["My parcel arrived {} days late", "The courier lost my package", "Delivery was delayed again"],
    "refund": ["I never got my refund", "They refused to return my money", "Still waiting for the refund"],
    "quality": ["The fabric tore after {} washes", "The stitching came apart", "Sturdy and well made"],
}


def write_reviews(path, n=120):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["stars", "review", "topic"])
        for i in range(n):
            topic = list(TOPICS)[i % 3]
            template = TOPICS[topic][(i // 3) % 3]
            w.writerow([1 + i % 5, template.format(2 + i % 7) + f" (order {i})", topic])
        w.writerow([3, "", "refund"])  # refused: no text
    return path


@pytest.fixture()
def corpus_settings(hub, tmp_path):
    return dataclasses.replace(hub.settings, corpus_dir=str(tmp_path / "corpora"))


def run(line, session, hub, settings, **kw):
    kw.setdefault("access", DataAccess.local())
    return execute(line, session, hub, settings, **kw)


def test_load_then_search_cluster_duplicates_outliers_and_rows_in_other_commands(hub, corpus_settings, tmp_path):
    data = write_reviews(tmp_path / "reviews.csv")
    session = Session()
    loaded = run(f"corpus load {data} --name reviews", session, hub, corpus_settings)
    assert loaded.ok, loaded.error
    assert "120 texts" in loaded.result.text and "`review`" in loaded.result.text
    assert "1 row refused" in loaded.result.text
    assert session.corpus == "reviews"

    hits = run("search package was lost --k 5", session, hub, corpus_settings)
    assert hits.ok, hits.error
    frame = hits.result.table("hits")
    assert len(frame) == 5 and list(frame["score"]) == sorted(frame["score"], reverse=True)
    assert (frame["topic"] == "delivery").sum() >= 4  # metadata travels with the hits
    near = run("search #0 --k 5", session, hub, corpus_settings)  # a row's neighbours: never the row itself
    assert near.ok, near.error
    neighbours = near.result.table("hits")
    assert 0 not in set(neighbours["id"]) and len(neighbours) == 5 and "row itself left out" in near.result.text
    said = run("search My parcel arrived 2 days late (order 0) --k 6", session, hub, corpus_settings)
    typed = said.result.table("hits")  # the row's text typed: the same row first, then the same neighbours
    assert typed["id"].iloc[0] == 0 and typed["score"].iloc[0] == pytest.approx(1.0, abs=1e-5)
    assert list(typed["id"].iloc[1:]) == list(neighbours["id"])
    assert list(typed["score"].iloc[1:]) == pytest.approx(list(neighbours["score"]), abs=1e-5)
    past = run("search #500", session, hub, corpus_settings)
    assert not past.ok and "rows #0 to #119" in past.error
    many = run("search package was lost --k 80", session, hub, corpus_settings)  # more hits than the chart's bars
    assert many.ok, many.error
    assert len(many.result.table("hits")) == 80 and len(many.result.charts) == 1

    groups = run("clusters --k 3", session, hub, corpus_settings)
    assert groups.ok and len(groups.result.table("rows")) == 120  # every row's group, in the JSON and CSV

    dupes = run("duplicates --threshold 0.97", session, hub, corpus_settings)
    assert dupes.ok and "near-duplicate" in dupes.result.text

    odd = run("outliers --top 3", session, hub, corpus_settings)
    assert odd.ok and len(odd.result.table("outliers")) == 3

    rows = run("compare #0 | #1", session, hub, corpus_settings)
    assert rows.ok, rows.error
    assert list(rows.result.tables[0].frame[["a", "b"]].iloc[0]) == ["My parcel arrived 2 days late (order 0)",
                                                                   "I never got my refund (order 1)"]
    missing = run("compare #0 | #999", session, hub, corpus_settings)
    assert not missing.ok and "#999" in missing.error


def test_the_same_file_loaded_again_with_another_column_takes_the_name_and_keeps_the_earlier_corpus(
        hub, corpus_settings, tmp_path):
    data = write_reviews(tmp_path / "reviews.csv", 30)
    session = Session()
    assert run(f"corpus load {data} --name reviews", session, hub, corpus_settings).ok
    again = run("load it again but take the topic column", session, hub, corpus_settings)
    assert again.ok, again.error
    assert again.interpreted_as == f"corpus load {data} --name reviews --column topic"
    assert "(column `topic`, as asked)" in again.result.text
    assert re.search(r"earlier corpus of this file, which had the name, is kept as \*\*reviews\\?-review\*\*",
                     again.result.text)
    listed = run("corpus", session, hub, corpus_settings).result.tables[0].frame
    assert sorted(listed["name"]) == ["reviews", "reviews-review"]
    found = run("search late parcel --corpus reviews-review --k 1", session, hub, corpus_settings)
    assert found.ok and "order" in found.result.tables[0].frame["text"].iloc[0]  # the earlier texts, still there
    other = write_reviews(tmp_path / "other.csv", 20)  # another file keeps its refusal
    refused = run(f"corpus load {other} --name reviews", session, hub, corpus_settings)
    assert not refused.ok and "taken by another corpus" in refused.error


@pytest.mark.slow
def test_a_new_process_finds_the_corpus_without_encoding_it_again(tmp_path):
    write_reviews(tmp_path / "reviews.csv", 60)
    env = {**os.environ, "ASSISTANT_CORPUS_DIR": str(tmp_path / "corpora"), "HF_HUB_OFFLINE": "1"}

    def cli(line):
        done = subprocess.run([sys.executable, "-m", "assistant", "run", line, "--json"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        return json.loads(done.stdout)

    first = cli("corpus load reviews.csv --name shop")
    assert first["ok"], first["error"]
    again = cli("corpus load reviews.csv --name shop")
    assert again["ok"] and "nothing was encoded again" in again["text"]
    found = cli("search refund --corpus shop --k 3")
    assert found["ok"] and found["tables"][0]["rows"][0][0] == "refund"


def test_on_a_shared_server_one_visitors_corpus_is_invisible_to_another(hub, corpus_settings, tmp_path):
    shared = dataclasses.replace(corpus_settings, corpus_shared=True, data_dir=str(tmp_path))
    write_reviews(tmp_path / "mine.csv", 30)
    alice, bob = Session(), Session()
    assert run("corpus load mine.csv --name private", alice, hub, shared, access=DataAccess()).ok
    assert "private" in run("corpus", alice, hub, shared).result.text
    listed = run("corpus", bob, hub, shared)
    assert listed.ok and "private" not in listed.result.text
    refused = run("search refund --corpus private", bob, hub, shared)
    assert not refused.ok and "There is no corpus `private`" in refused.error
    assert run("search refund --corpus private", alice, hub, shared).ok


def test_the_web_faces_read_only_data_folders_and_uploads(hub, corpus_settings):
    refused = execute("corpus load /etc/passwd", Session(), hub, corpus_settings)  # WEB access
    assert not refused.ok and "/etc/passwd" in refused.error and "Traceback" not in refused.error


def test_a_quoted_file_name_with_a_space_loads_that_file_as_typed_and_as_asked(hub, corpus_settings, tmp_path,
                                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)  # the local face reads names relative to its folder
    write_reviews(tmp_path / "reviews.csv", 120)
    write_reviews(tmp_path / "my reviews.csv", 30)  # ends in the other's name: the whole quoted name counts
    typed = run('corpus load "my reviews.csv"', Session(), hub, corpus_settings)  # as the page writes an upload
    assert typed.ok and not typed.routed, typed.error
    assert "30 texts from `my reviews.csv`" in typed.result.text
    asked = understand("load 'my reviews.csv' as a corpus", Session(), hub, TABLE, corpus_settings)
    assert asked.line == "corpus load my reviews.csv"


def test_a_files_own_id_column_is_kept_under_a_name_the_reply_gives(hub, corpus_settings, tmp_path):
    (tmp_path / "tagged.csv").write_text("id,text,label\nA7,The cat sat on the mat.,pets\n"
                                         "B9,Stocks fell sharply today.,money\n", encoding="utf-8")
    session = Session()
    loaded = run(f"corpus load {tmp_path / 'tagged.csv'}", session, hub, corpus_settings)
    assert loaded.ok and "Metadata kept: `id_1` (the file's `id`: `id` numbers the corpus's rows), `label`." \
        in loaded.result.text, loaded.error
    hits = run("search a kitten", session, hub, corpus_settings).result.table("hits")
    assert hits[["id", "id_1", "label"]].values.tolist()[0] == [0, "A7", "pets"]


def test_a_files_own_cluster_and_length_columns_are_kept_under_names_the_map_can_be_coloured_by(
        hub, corpus_settings, tmp_path):
    (tmp_path / "tagged.csv").write_text("text,cluster,length\n" + "".join(
        f"{s} {i},{'ab'[i % 2]},{i}\n" for i, s in enumerate(["The cat sat.", "Stocks fell.", "A dog ran."] * 4)),
        encoding="utf-8")
    session = Session()
    loaded = run(f"corpus load {tmp_path / 'tagged.csv'}", session, hub, corpus_settings)
    assert loaded.ok and "Metadata kept: `cluster_1` (the file's `cluster`: `cluster` is what `map --color cluster` " \
        "paints, the groups of `clusters`), `length_1` (the file's `length`:" in loaded.result.text, loaded.error
    own = run("map --color cluster_1", session, hub, corpus_settings)
    assert own.ok and "coloured by column `cluster_1`" in own.result.text, own.error
    assert run("map --color length", session, hub, corpus_settings).result.text.count("coloured by text length") == 1


def test_a_hit_named_by_its_rank_is_that_row_and_a_rank_past_the_hits_is_refused(hub, corpus_settings, tmp_path):
    session = Session()
    assert run(f"corpus load {write_reviews(tmp_path / 'reviews.csv')} --name reviews", session, hub,
               corpus_settings).ok

    def hits():
        found = run("search late delivery --k 5", session, hub, corpus_settings)
        assert found.ok
        return found.result.table("hits").set_index("rank")["id"]

    ids = hits()
    why = run("why did the second hit match?", session, hub, corpus_settings)
    assert why.ok and why.interpreted_as == f"why late delivery | #{ids[2]}", why.interpreted_as
    hits()
    close = run("how similar is the last result to the query?", session, hub, corpus_settings)
    assert close.ok and close.interpreted_as == f"compare late delivery | #{ids[5]}"
    ids = hits()
    near = run("what are the neighbours of the first hit?", session, hub, corpus_settings)  # not `neighbors`' words
    assert near.ok and near.interpreted_as == f"search #{ids[1]} --k 5", near.interpreted_as  # (its k kept)
    assert ids[1] not in set(near.result.table("hits")["id"])
    alone = run("what are the neighbours of #3?", Session(corpus="reviews"), hub, corpus_settings)
    assert alone.ok and alone.interpreted_as == "search #3", alone.interpreted_as
    hits()
    past = run("why did the 9th hit match?", session, hub, corpus_settings)
    assert not past.ok and "ranks 5 rows" in past.error and "ranks 1 to 5" in past.error
    assert "Traceback" not in past.error
    odd = run("outliers --top 3", session, hub, corpus_settings).result.table("outliers").set_index("rank")["id"]
    why_odd = run("why is the third one an outlier?", session, hub, corpus_settings)
    assert why_odd.ok and why_odd.interpreted_as == f"search #{odd[3]}", why_odd.interpreted_as
    # a typed command's texts and a question's quoted texts are texts, whatever they say
    hits()
    typed = "compare The top one is red. | The 12th one is blue."
    assert run(typed, session, hub, corpus_settings).interpreted_as == typed
    hits()
    quoted = run("how similar are 'the first one' and 'the second one'?", session, hub, corpus_settings)
    assert quoted.interpreted_as == "compare the first one | the second one"
    # without a ranking before it, the same words are no row (`compare` ranks nothing)
    assert run("compare A cat. | A dog.", session, hub, corpus_settings).ok
    assert "#" not in (run("why did the second hit match?", session, hub, corpus_settings).interpreted_as or "")


def test_a_long_load_goes_on_in_the_background_and_the_conversation_stays_usable(hub, corpus_settings, tmp_path):
    data = write_reviews(tmp_path / "big.csv", 2000)
    quick = dataclasses.replace(corpus_settings, time_limit_s=0.5)
    jobs, session = Jobs(), Session()
    first = run(f"corpus load {data} --name big", session, hub, quick, jobs=jobs)
    assert first.ok and "goes on in the background" in first.result.text
    assert run("compare A cat. | A dog.", session, hub, quick, jobs=jobs).ok  # meanwhile, other commands answer
    deadline = time.monotonic() + 240
    while jobs.running(next(iter(jobs._jobs))) is not None and time.monotonic() < deadline:
        time.sleep(0.5)
    info = run("corpus info big", session, hub, corpus_settings, jobs=jobs)
    assert info.ok and "fully encoded" in info.result.text


@pytest.mark.parametrize("question, line", [
    ("find reviews about late delivery in my file", "search late delivery"),
    ("group my texts into topics", "clusters"),
    ("are there duplicates in my data?", "duplicates"),
    ("which of my texts are unusual?", "outliers"),
])
def test_plain_english_reaches_the_corpus_commands(hub, question, line):
    assert understand(question, Session(), hub, TABLE, hub.settings).line == line


def test_a_typed_search_that_opens_with_a_corpus_name_searches_that_corpus(hub, corpus_settings, tmp_path):
    (tmp_path / "notes.csv").write_text("text\nA man is playing the guitar.\nThe stock market fell today.\n"
                                        "A woman slices an onion.\n", encoding="utf-8")
    (tmp_path / "pets.csv").write_text("text\nThe cat sat on the mat.\nA dog chased the ball.\n", encoding="utf-8")
    session = Session()
    assert run(f"corpus load {tmp_path / 'notes.csv'} --name notes", session, hub, corpus_settings).ok
    assert run(f"corpus load {tmp_path / 'pets.csv'} --name pets", session, hub, corpus_settings).ok
    assert run("corpus use pets", session, hub, corpus_settings).ok  # the active corpus is not the one named
    for line in ("search notes for someone playing music", "search in notes for someone playing music",
                 "search the notes corpus for someone playing music"):
        reply = run(line, session, hub, corpus_settings)
        assert reply.ok and reply.interpreted_as == "search someone playing music --corpus notes", (line, reply)
        assert reply.result.table("hits")["text"].iloc[0] == "A man is playing the guitar."
    typed = run("search notes on the fridge", session, hub, corpus_settings)  # no corpus named so: the text as typed
    assert typed.ok and not typed.routed and "notes on the fridge" in typed.result.text


def test_a_csv_saved_by_excel_on_western_windows_keeps_its_accents_and_says_how_it_was_read(hub, corpus_settings,
                                                                                           tmp_path):
    (tmp_path / "menu.csv").write_bytes("text\nCafé crème brûlée à la française\nA plain line.\n".encode("cp1252"))
    session = Session()
    loaded = run(f"corpus load {tmp_path / 'menu.csv'}", session, hub, corpus_settings)
    assert loaded.ok and any("1 line was not UTF-8; it was read as Windows-1252" in w for w in loaded.result.warnings)
    hits = run("search a French dessert", session, hub, corpus_settings).result.table("hits")
    assert hits["text"].iloc[0] == "Café crème brûlée à la française"
    stored = next(Path(corpus_settings.corpus_dir).rglob(ROWS))
    rows = pd.read_parquet(stored)  # as an earlier version stored it, which read that line with U+FFFD for each accent
    rows.loc[0, "text"] = "Caf\ufffd cr\ufffdme br\ufffdl\ufffde \ufffd la fran\ufffdaise"
    rows.to_parquet(stored, index=False)
    again = run(f"corpus load {tmp_path / 'menu.csv'}", Session(), hub, corpus_settings)
    assert again.ok and "It was already encoded" in again.result.text
    assert "1 of its texts reads otherwise now than when this corpus was encoded (an earlier version read the " \
           "file), and its vector is of the text as read then: `corpus drop menu`, then load the file again, to " \
           "encode it as read now." in again.result.warnings


def test_a_files_own_score_rank_and_query_columns_sit_beside_the_ones_search_and_outliers_add(hub, corpus_settings,
                                                                                             tmp_path):
    (tmp_path / "logs.csv").write_text("query,text,score,rank\n"
                                       "how to cook rice,Boil rice in water for 12 minutes.,5,1\n"
                                       "fix a bike,Pump the tyres and oil the chain.,3,2\n"
                                       "cheap flights,Book early and fly midweek.,4,3\n", encoding="utf-8")
    session = Session()
    assert run(f"corpus load {tmp_path / 'logs.csv'}", session, hub, corpus_settings).ok
    hits = run("search cooking grains", session, hub, corpus_settings)
    assert hits.ok, hits.error
    frame = hits.result.table("hits")
    assert list(frame.columns) == ["rank", "id", "score", "text", "query_1", "score_1", "rank_1", "query"]
    assert frame["text"].iloc[0] == "Boil rice in water for 12 minutes." and frame["score_1"].iloc[0] == "5"
    assert frame["score"].iloc[0] > frame["score"].iloc[1] and frame["query"].iloc[0] == "cooking grains"
    far = run("outliers --k 1", session, hub, corpus_settings)
    assert far.ok, far.error
    assert list(far.result.table("outliers").columns)[:3] == ["rank", "id", "mean distance"]
    assert "rank_1" in far.result.table("outliers").columns


def test_a_corpus_of_repeated_texts_reads_in_the_singular_and_clusters_without_library_warnings(
        hub, corpus_settings, tmp_path, recwarn):
    (tmp_path / "same.csv").write_text("text\n" + "same text\n" * 5 + "other text\n", encoding="utf-8")
    session = Session()
    assert run(f"corpus load {tmp_path / 'same.csv'}", session, hub, corpus_settings).ok
    found = run("duplicates", session, hub, corpus_settings).result.text
    assert "**1 near-duplicate group** (5 rows, 10 pairs" in found
    far = run("outliers --k 1", session, hub, corpus_settings).result.text
    assert "to its 1 nearest neighbour, against" in far
    grouped = run("clusters", session, hub, corpus_settings)  # k = 3.. finds fewer distinct rows than groups
    assert grouped.ok and "chosen by the best mean cosine silhouette" in grouped.result.text
    noisy = [str(w.message) for w in recwarn if type(w.message).__name__ == "ConvergenceWarning"]
    assert not noisy, noisy
