"""`probe`, `contextuality` and `cka` on a person's own texts: `--corpus NAME` draws the sentences from the corpus
(found as every corpus command finds it) instead of STS-B train, and the reply says which corpus and how many."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from assistant.commands.base import Context
from assistant.commands.registry import TABLE
from assistant.dispatch import execute
from assistant.parsing import parse
from assistant.session import Session
from tools.benchmark.access import DataAccess
from tools.layers.inputs import STSB_SOURCE, distinct, sample


def facts(hub, line: str, session: Session | None = None):
    """The facts a command line computes (what its reply is written from)."""
    inv = parse(line, TABLE, hub.settings)
    command = TABLE[inv.verb]
    return command.compute(Context(session or Session(), hub, hub.settings), inv.texts, command.params(inv.options))


@pytest.fixture(scope="module")
def reviews(hub):
    """The distinct texts of the `reviews` corpus the shared hub holds."""
    from assistant.corpora import open_corpus

    return distinct(open_corpus(hub.settings, Session().key, "reviews").texts())


def test_probe_reads_a_seeded_sample_of_the_corpus_and_says_so(hub, reviews):
    session = Session()
    mine = facts(hub, "probe --corpus reviews --sentences 6 --seed 2 --task pos", session)
    assert mine.source == "corpus reviews" and session.corpus == "reviews"
    assert list(mine.sentences) == sample(reviews, 6, 2) and set(mine.sentences) <= set(reviews)
    stsb = facts(hub, "probe --sentences 6 --seed 2 --task pos")
    assert stsb.source == STSB_SOURCE and not set(stsb.sentences) & set(reviews)
    assert not np.array_equal(mine.scores[0].accuracy, stsb.scores[0].accuracy)
    reply = TABLE["probe"].reply(mine)
    assert "6 texts of corpus `reviews`" in reply.text
    assert reply.settings["source"] == "corpus reviews" and reply.settings["sentences"] == 6


def test_contextuality_picks_its_words_in_the_corpus(hub, reviews):
    mine = facts(hub, "contextuality --corpus reviews --sentences 12")
    assert mine.source == "corpus reviews" and mine.sentences == 12
    words = {w for text in reviews for w in text.lower().replace("(", " ").replace(")", " ").split()}
    assert set(mine.words) <= words
    stsb = facts(hub, "contextuality --sentences 12")
    assert mine.words != stsb.words and not np.allclose(mine.baseline, stsb.baseline)
    named = facts(hub, "contextuality refund --corpus reviews --sentences 6")
    assert named.words == ("refund",) and named.counts[0] == 6


def test_cka_reads_the_corpus(hub, run):
    mine = facts(hub, "cka --corpus reviews --sentences 6")
    stsb = facts(hub, "cka --sentences 6")
    assert (mine.source, mine.sentences) == ("corpus reviews", 6) and stsb.source == STSB_SOURCE
    assert not np.allclose(mine.matrix, stsb.matrix)
    reply = run("cka --corpus reviews --sentences 6")
    assert reply.ok and "6 texts of corpus `reviews`" in reply.result.text


def test_a_missing_or_too_small_corpus_and_texts_with_a_corpus_are_one_sentence(hub, tmp_path):
    settings = dataclasses.replace(hub.settings, corpus_dir=str(tmp_path / "corpora"))
    (tmp_path / "three.txt").write_text("The cat sat.\nA dog ran.\nThe cat sat.\nBirds sing.\n", encoding="utf-8")
    session = Session()
    loaded = execute(f"corpus load {tmp_path / 'three.txt'} --name three", session, hub, settings,
                     access=DataAccess.local())
    assert loaded.ok, loaded.error
    small = execute("probe --corpus three", Session(), hub, settings)
    assert not small.ok
    assert small.error == ("Corpus `three` has 3 distinct texts and `probe` needs at least 4; load a larger one "
                           "with `corpus load FILE`, or leave out --corpus to read STS-B.")
    assert execute("cka --corpus three --sentences 3", Session(), hub, settings).ok  # enough for cka
    missing = execute("contextuality --corpus nope", Session(), hub, settings)
    assert not missing.ok and missing.error.startswith("There is no corpus `nope`; the corpora here are `three`.")
    both = execute("probe The cat sat. | A dog ran. --corpus three", Session(), hub, settings)
    assert both.error == "`probe` reads either the sentences you give or --corpus, not both; drop one."
