"""Questions in plain English: routing accuracy on the committed question sets (the packaged model,
float32 and int8), texts and options read from words, no guess when unsure, follow-ups, the JSON face."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from assistant.commands.registry import COMMANDS, TABLE
from assistant.parsing import parse
from assistant.session import Session
from assistant.understanding import fill, is_question, slots, spoken, understand
from assistant.understanding.examples import examples, rows
from tests.conftest import ROOT
from tests.question_sets import LEARNT, SETS, questions, score
from tools.core.results import Result

pytestmark = pytest.mark.long

#: Rows a question can be routed to (`again` is reached by follow-ups, never by the router).
ROUTABLE = [spec for spec in COMMANDS if spec.name != "again"]


def test_every_routable_row_has_at_least_five_phrasings():
    thin = {spec.name: len(spec.phrasings) for spec in ROUTABLE if len(spec.phrasings) < 5}
    assert not thin, f"rows with fewer than 5 phrasings (assistant/commands/phrasings.py): {thin}"


def test_the_question_sets_are_big_enough_and_valid():
    measured = {name: rows(path) for name, path in SETS.items()}
    learnt = {name: rows(path) for name, path in LEARNT.items()}
    assert len(measured["held-out"]) >= 50 and all(len(measured[k]) >= 100 for k in SETS if k != "held-out")
    multi_turn = {k: sum(1 for r in got if r.get("before")) for k, got in {**measured, **learnt}.items()}
    assert all(n >= 25 for k, n in multi_turn.items() if k not in ("held-out", "tuning")), multi_turn
    for row in (row for got in (*measured.values(), *learnt.values()) for row in got):
        for line in (*row.get("before", ()), row["line"]):
            parse(line, TABLE)  # every expected line is a real command line
    # every question asked without a conversation before it teaches the router (none is skipped unread)
    assert len(examples(TABLE)) == sum(1 for got in learnt.values() for r in got if not r.get("before"))
    # a measured question that is word for word one the router knows ("what can you do?") is not scored: most are
    # (fresh's short questions are the ones later writers asked word for word: 151 of its 183 are scored)
    for name, path in SETS.items():
        assert len(questions(path)) >= 0.8 * len(measured[name]), name


#: Floors a few points under the rates measured with full-precision routing (the same on every CPU), on
#: minilm: (command, command+texts+options). docs/understanding.md gives each set's clean rate (scored once before
#: its misses were read); the learnt sets' floors guard what they teach.
FLOORS = {"held-out": (0.94, 0.94), "fresh": (0.96, 0.95), "fresh31": (0.96, 0.95), "fresh32": (0.95, 0.93),
          "fresh34": (0.96, 0.93), "fresh35": (0.96, 0.94), "fresh37": (0.95, 0.93), "fresh38": (0.97, 0.95),
          "fresh39": (0.96, 0.94), "fresh40": (0.96, 0.93), "fresh41": (0.97, 0.95), "fresh36": (0.97, 0.96),
          "fresh42": (0.96, 0.93), "fresh43": (0.96, 0.94), "fresh44": (0.96, 0.92), "fresh45": (0.97, 0.96),
          "fresh46": (0.96, 0.93), "fresh47": (0.97, 0.94), "fresh48": (0.96, 0.94), "fresh49": (0.97, 0.96),
          "fresh50": (0.97, 0.95), "fresh51": (0.97, 0.95), "fresh52": (0.95, 0.93), "fresh53": (0.96, 0.93),
          "fresh54": (0.96, 0.94), "fresh55": (0.97, 0.96), "fresh56": (0.97, 0.96), "fresh57": (0.97, 0.95),
          "fresh58": (0.97, 0.94), "fresh59": (0.96, 0.95), "fresh60": (0.96, 0.95), "fresh61": (0.96, 0.95),
          "fresh62": (0.96, 0.94), "fresh63": (0.96, 0.95), "fresh64": (0.96, 0.93), "fresh65": (0.96, 0.94),
          "fresh68": (0.97, 0.96),
          "fresh66": (0.96, 0.93), "fresh67": (0.95, 0.93), "fresh69": (0.96, 0.94), "fresh70": (0.96, 0.93),
          "fresh71": (0.96, 0.92), "fresh72": (0.96, 0.93), "fresh73": (0.96, 0.93),
          "fresh74": (0.96, 0.93), "fresh75": (0.96, 0.94), "fresh76": (0.96, 0.93), "fresh77": (0.96, 0.95),
          "fresh78": (0.96, 0.95), "fresh79": (0.95, 0.93), "fresh80": (0.96, 0.94), "fresh81": (0.95, 0.92),
          "fresh82": (0.96, 0.93), "fresh83": (0.96, 0.95), "fresh84": (0.96, 0.93), "fresh85": (0.95, 0.93),
          "fresh86": (0.96, 0.95), "fresh87": (0.96, 0.95), "fresh88": (0.96, 0.95), "fresh89": (0.95, 0.92),
          "fresh90": (0.96, 0.94), "fresh91": (0.95, 0.93), "fresh92": (0.96, 0.94), "fresh93": (0.96, 0.92),
          "fresh94": (0.97, 0.96), "fresh95": (0.97, 0.94),
          "fresh96": (0.97, 0.96), "fresh97": (0.97, 0.95),
          "fresh98": (0.97, 0.96),
          "fresh33": (0.97, 0.96), "fresh30": (0.97, 0.96), "fresh29": (0.97, 0.95), "fresh28": (0.97, 0.96),
          "fresh27": (0.96, 0.94),
          "fresh26": (0.96, 0.94),
          "fresh25": (0.95, 0.91), "fresh24": (0.96, 0.93),
          "fresh23": (0.95, 0.93),
          "fresh22": (0.96, 0.92),
          "fresh21": (0.96, 0.93), "fresh20": (0.96, 0.93),
          "fresh19": (0.93, 0.87),
          "fresh18": (0.94, 0.86),
          "fresh17": (0.96, 0.95), "fresh16": (0.95, 0.91),
          "fresh15": (0.96, 0.93),
          "fresh14": (0.96, 0.92),
          "fresh13": (0.96, 0.93),
          "fresh12": (0.93, 0.87), "tuning": (0.96, 0.95), "fresh2": (0.96, 0.94), "fresh3": (0.97, 0.97),
          "fresh4": (0.95, 0.94), "fresh5": (0.96, 0.95), "fresh6": (0.95, 0.94), "fresh7": (0.96, 0.92),
          "fresh8": (0.95, 0.93), "fresh9": (0.93, 0.90), "fresh10": (0.94, 0.89), "fresh11": (0.95, 0.88)}
#: Floors for the newest learnt sets' follow-ups together (what they still measure: the router learns only their
#: rows without a conversation before them), a few points under the measured rates; every learnt set's rows, its
#: follow-ups included, are scored by the slow test below.
FOLLOW_UP_FLOORS = (0.94, 0.90)
#: How many of the newest learnt sets `make test` scores by their follow-ups (the newest read most recently).
NEWEST_LEARNT = 5


#: How many of the newest measured sets `make test` scores beside held-out and fresh (the sets the issue names); the
#: older ones are `slow`: `make test-all` and `bench/routing.py` score every set (each set costs `make test` 8-12 s
#: on a 2-core AMD EPYC 25/1).
NEWEST_MEASURED = 2


def measured(names: list[str]) -> list:
    """The measured sets' names, the older ones marked `slow`."""
    newest = {"held-out", "fresh", *names[-NEWEST_MEASURED:]}
    return [name if name in newest else pytest.param(name, marks=pytest.mark.slow) for name in names]


@pytest.mark.parametrize("name", measured(list(SETS)))
def test_questions_are_routed_to_the_right_command(hub, name):
    got = score(hub, "minilm", questions(SETS[name]))
    print(f"\n{name}: {got.rows} questions, {got.verb_rate:.1%} command, {got.full_rate:.1%} command+texts+options")
    print("\n".join(got.misses))
    verb, full = FLOORS[name]
    assert got.verb_rate >= verb and got.full_rate >= full, got.misses


def test_the_learnt_sets_follow_ups_are_read_right(hub):
    newest = list(LEARNT.values())[-NEWEST_LEARNT:]
    got = score(hub, "minilm", [r for path in newest for r in questions(path) if r.get("before")])
    print(f"\nlearnt follow-ups: {got.rows} questions, {got.verb_rate:.1%} command, {got.full_rate:.1%} full")
    print("\n".join(got.misses))
    verb, full = FOLLOW_UP_FLOORS
    assert got.verb_rate >= verb and got.full_rate >= full, got.misses


@pytest.mark.slow
@pytest.mark.parametrize("name", list(LEARNT))
def test_the_learnt_sets_are_read_right(hub, name):
    """Every row of a learnt set, those it taught included (they test the texts and options read, which the router
    does not learn); `make test-all` runs it, `make test` scores their follow-ups."""
    got = score(hub, "minilm", questions(LEARNT[name]))
    print(f"\n{name}: {got.rows} questions, {got.verb_rate:.1%} command, {got.full_rate:.1%} command+texts+options")
    verb, full = FLOORS[name]
    assert got.verb_rate >= verb and got.full_rate >= full, got.misses


def test_a_suggestion_known_to_be_refused_on_this_model_is_not_offered(hub, monkeypatch):
    from tools.models.mlm_head import masked_lm_head

    question = "how does the meaning of 'bank' change across layers?"  # `lens` is among its likeliest readings
    assert not masked_lm_head(hub.get("minilm")).usable  # now known: minilm has no masked-LM head for `lens`
    offered = understand(question, Session(), hub, TABLE, hub.settings).suggestions
    assert len(offered) >= 2 and not any(line.startswith("lens ") for line in offered), offered
    monkeypatch.setattr(type(TABLE["lens"]), "offered", lambda self, ctx: True)  # as before: every likely row
    assert any(line.startswith("lens ") for line in understand(question, Session(), hub, TABLE,
                                                               hub.settings).suggestions)


def test_a_word_asked_about_borrows_only_the_previous_texts_that_hold_it(hub):
    question = "how does the meaning of 'bank' change across layers?"
    session = Session()
    session.remember("rollout The cat sat on the mat because it was tired.", Result("rollout", ""))
    read = understand(question, session, hub, TABLE, hub.settings)  # not `word bank | The cat sat ...`, which fails
    assert read.line is None and "contextuality bank" in read.suggestions, (read.line, read.suggestions)
    session.remember("compare We sat on the river bank. | The cat slept. | I paid the bank.", Result("compare", ""))
    read = understand(question, session, hub, TABLE, hub.settings)
    assert read.line == "word bank | We sat on the river bank. | I paid the bank."


def test_a_question_read_as_the_reading_that_takes_the_texts_it_points_at_says_which_it_passed_over(hub):
    session = Session()
    session.remember("compare Lamps glow. | Candles flicker.", Result("compare", ""))
    read = understand("whats the score exactly", session, hub, TABLE, hub.settings)
    assert read.line == "compare Lamps glow. | Candles flicker."
    assert read.because.startswith("it points back at the previous texts, which benchmark (its nearest example")
    assert "the nearest for compare is" in read.because


def test_a_command_name_then_a_question_about_the_last_reply_offers_that_reply_on_its_texts(hub):
    from assistant.reading import read_line

    session = Session()
    session.remember("tokenize Words split oddly.", Result("tokenize", ""))
    read = read_line("why are there so many pieces", session, hub, hub.settings)
    assert read.unclear is not None and "found 1 text" in read.unclear.message
    assert "tokenize Words split oddly." in read.unclear.suggestions


def test_a_question_says_why_it_was_read_so_and_a_typed_command_does_not(hub):
    from assistant.dispatch import execute

    asked = execute("what would GloVe say about 'bank' in 'the river bank' and 'the bank loan'?", Session(), hub,
                    hub.settings).to_json()
    assert asked["interpreted_as"].startswith("static bank | ")
    assert "nearest example question" in asked["read_because"] and "cosine" in asked["read_because"]
    assert "glove" in asked["read_because"].split("spoke most for static:")[1].lower()  # the deciding word
    typed = execute("compare A cat. | A kitten.", Session(), hub, hub.settings).to_json()
    assert typed["read_because"] is None


def test_a_typed_sentence_that_opens_with_the_is_not_read_but_words_about_a_thing_are(hub, monkeypatch):
    import assistant.reading as reading

    asked = []
    real = reading.understand
    monkeypatch.setattr(reading, "understand", lambda *a, **k: asked.append(a[0]) or real(*a, **k))
    for line in ("attend The cat sat on the mat", "mask The [MASK] sat on the mat."):  # never waits on the router
        assert reading.read_line(line, Session(), hub, hub.settings).ran == line and not asked, asked
    assert reading.read_line("project the vocabulary", Session(), hub, hub.settings).ran == "vocab"


# --- texts and options read from words (no model) ----------------------------------------

@pytest.mark.parametrize("question", [
    "How similar are 'the cat sat' and 'a kitten sat'?",
    'How similar are "the cat sat" and "a kitten sat"?',
    "How similar are “the cat sat” and “a kitten sat”?",
    "How similar are ‘the cat sat’ and ‘a kitten sat’?",
    "how similar are: the cat sat, a kitten sat",
    "how similar are the cat sat and a kitten sat",
    "the cat sat vs a kitten sat",
    "the cat sat versus a kitten sat?",
])
def test_texts_come_from_every_quote_style_a_colon_and_separators(question):
    assert slots.read(question, asking=fill.asking_words(TABLE["compare"])).texts == ["the cat sat", "a kitten sat"]


def test_an_apostrophe_is_not_a_quote():
    read = slots.read("what's the model's view of 'don't stop' and 'keep going'")
    assert read.texts == ["don't stop", "keep going"]
    assert slots.read("How similar are 'a' and 'b'?").texts == ["a", "b"]


def test_blanks_become_the_mask_and_the_word_is_found():
    assert slots.read("fill in the blank: the ___ sat on the mat").texts == ["the [MASK] sat on the mat"]
    assert slots.read("what goes in 'I drank a cup of _'?").texts == ["I drank a cup of [MASK]"]
    assert slots.read("is 'bank' the same in 'river bank' and 'bank loan'").word == "bank"
    assert slots.read("neighbours of the word bank").word == "bank"


@pytest.mark.parametrize("verb, words, options", [
    ("attend", "at layer 2 head 5", {"layer": "2", "head": "5"}),
    ("attend", "in the 3rd layer", {"layer": "3"}),
    ("compare", "with CLS pooling", {"pool": "cls"}),
    ("compare", "using every pooling at layer four", {"pool": "all", "layer": "4"}),
    ("neighbors", "top 10 in glove", {"k": "10", "space": "glove"}),
    ("mask", "top 10", {"top": "10"}),
    ("project", "in 3D with t-SNE, one point per sentence", {"dims": "3", "method": "tsne", "level": "sentences"}),
    ("vocab", "coloured by word length", {"color": "length"}),
    ("benchmark", "on the test split with a sample of 300", {"data": "stsb-test", "sample": "300"}),
    ("benchmark", "cls and mean pooling", {"pool": "cls,mean"}),
    ("selfattn", "with the causal mask and 8 heads", {"causal": "", "heads": "8"}),
    ("word", "with the concat-last4 strategy", {"strategy": "concat-last4"}),
])
def test_options_said_in_words_become_the_rows_own_options(verb, words, options):
    assert spoken.read(words, TABLE[verb]).options == options


@pytest.mark.parametrize("verb, words, options", [
    # choices said together: a list option takes them all, a one-value option its "all"/"both" choice
    ("benchmark", "with sbert, max or cls", {"pool": "sbert,max,cls"}),
    ("probe", "for pos and dep", {"task": "all"}),
    ("probe", "pos-and-dep", {"task": "all"}),
    ("export", "as markdown and html", {"format": "both"}),
    ("export", "in every format", {"format": "both"}),
    ("word", "the first and last strategies", {"strategy": "all"}),
    # "every" one of a list option's choices, where that is its default (every pooling the model has): none set
    ("benchmark", "every pooling", {}),
    # numbers in words, an option named after its value, hyphenated
    ("contextuality", "with fifty sentences", {"sentences": "50"}),
    ("probe", "on twenty-five sentences", {"sentences": "25"}),
    ("vocab", "the first one thousand words", {"n": "1000"}),
    ("attend", "use layer three", {"layer": "3"}),
    ("attend", "layer-2, head-4", {"layer": "2", "head": "4"}),
    ("compare", "at layer zero", {"layer": "0"}),
    ("selfattn", "with four heads", {"heads": "4"}),
    # a command's count: the noun its help counts ("how many groups"), or the command's own name
    ("clusters", "into five groups", {"k": "5"}),
    ("clusters", "with the number of clusters chosen automatically", {"k": "auto"}),
    ("outliers", "the ten outliers with 5 neighbours", {"top": "10", "k": "5"}),
    ("neighbors", "12 neighbours in glove", {"k": "12", "space": "glove"}),
    # choices said without their joins, or glued to their option's word
    ("word", "with the sum last 4 strategy", {"strategy": "sum-last4"}),
    ("compare", "cls-pooled", {"pool": "cls"}),
    ("benchmark", "on the stsb test data", {"data": "stsb-test"}),
    ("project", "with glove", {"basis": "glove"}),
    # a number that fills one option and names the choice of another
    ("tokenize", "padded to twelve tokens", {"max-length": "12", "padding": "max_length"}),
    ("duplicates", "above 0.9", {"threshold": "0.9"}),
    # models, for the options whose help speaks of models
    ("mask", "with bert base", {"model": "bert-base"}),
    ("cka", "against bert-small", {"with": "bert-small"}),
    ("benchmark", "minilm and bert-small", {"models": "minilm,bert-small"}),
    ("compare", "beside minilm int8", {"vs": "minilm:int8"}),
    # names said around their value: corpora, a loaded corpus's name and column, a file, rows, the lasso
    ("clusters", "of the reviews corpus into 8 groups", {"k": "8", "corpus": "reviews"}),
    ("search", "in a corpus called tickets", {"corpus": "tickets"}),
    ("search", "in my own corpus", {}),  # "own" describes, it does not name
    ("corpus", "using the body column and call it tickets", {"column": "body", "name": "tickets"}),
    ("benchmark", "my pairs file my-pairs.csv", {"data": "my-pairs.csv"}),
    ("search", "among rows 1-50", {"in": "1-50"}),
    ("search", "only the points I lassoed", {"in": "selection"}),
    ("map", "coloured by the rating column", {"color": "rating"}),
    # choices said as phrases: probe tasks, layer strategies, a colour, a flag
    ("probe", "for dependency labels", {"task": "dep"}),
    ("probe", "for part of speech and dependencies", {"task": "all"}),
    ("word", "from the last layer only", {"strategy": "last"}),
    ("word", "concat of the last four layers", {"strategy": "concat-last4"}),
    ("vocab", "colored by number of vowels", {"color": "vowels"}),
    ("mask", "and which words drove the prediction", {"why": ""}),
    ("export", "all of it as html", {"format": "html"}),  # one choice named beats "all"
    # a count said two words before its noun, or as "of them"
    ("outliers", "the 10 most unusual texts", {"top": "10"}),
    ("neighbors", "25 of them", {"k": "25"}),
])
def test_options_said_in_words_are_read_from_the_declarations(verb, words, options):
    assert spoken.read(words, TABLE[verb]).options == options


def test_a_choice_inside_a_longer_one_is_said_once():
    assert spoken.read("the sum of the last four layers", TABLE["word"]).options == {"strategy": "sum-last4"}
    assert spoken.read("mean pooling", TABLE["compare"]).options == {"pool": "mean"}


def test_an_option_the_command_lacks_is_not_invented():
    assert spoken.read("at layer 4 with cls pooling", TABLE["neighbors"]).options == {}
    assert spoken.read("layer 99999", TABLE["compare"]).options == {}  # over the option's maximum


def test_a_line_is_a_question_only_when_its_first_word_is_not_a_command():
    assert is_question("How similar are 'a' and 'b'?", TABLE)
    assert not is_question("compare a | b", TABLE)
    assert not is_question("compar a | b", TABLE)  # a typo of a verb keeps the parser's "did you mean"
    assert is_question("ok which tokens carry their similarity?", TABLE)  # "ok" is a word, not a typo of `tok`
    assert not is_question("<script>x</script>", TABLE)


# --- the conversation --------------------------------------------------------------------

def test_a_question_runs_its_command_and_says_how_it_was_read(run):
    reply = run("How similar are 'A cat sat on the mat.' and 'A kitten sat on the rug.'?")
    assert reply.ok and reply.routed and reply.command == "compare"
    assert reply.interpreted_as == "compare A cat sat on the mat. | A kitten sat on the rug."
    typed = run("compare A cat sat on the mat. | A kitten sat on the rug.")
    assert typed.interpreted_as == "compare A cat sat on the mat. | A kitten sat on the rug." and not typed.routed
    assert reply.result.table("similarity").equals(typed.result.table("similarity"))


@pytest.mark.parametrize("question", ["translate this to French", "what is the weather in Paris tomorrow?"])
def test_an_unclear_question_offers_command_lines_instead_of_guessing(run, question):
    reply = run(question)
    assert not reply.ok and reply.routed and not reply.interpreted_as
    assert 2 <= len(reply.suggestions) <= 3
    for line in reply.suggestions:
        parse(line, TABLE)  # each one runs as it is
    assert "Traceback" not in reply.error and reply.error.count(". ") <= 1


def test_an_off_topic_question_in_a_conversation_is_not_run_on_the_previous_texts(run):
    session = Session()
    assert run("word light | The light is on. | A light bag.", session).ok
    reply = run("what is the weather in Paris tomorrow?", session)  # (not `neighbors light`: it points at nothing)
    assert not reply.ok and reply.routed and not reply.interpreted_as and reply.suggestions
    assert run("and with the sum-all strategy?", session).interpreted_as == (
        "word light | The light is on. | A light bag. --strategy sum-all")  # a follow-up still is one


def test_a_question_without_texts_says_what_it_needs(run):
    reply = run("how similar are they?")
    assert not reply.ok and "no text" in reply.error and "quotes" in reply.error
    assert reply.suggestions and all(parse(s, TABLE) for s in reply.suggestions)


@pytest.mark.parametrize("before, question, offered", [
    ("cka --sentences 20", "what about layer 3?", ("cka --sentences 20", "attend The cat sat on the mat --layer 3")),
    ("probe --task pos", "just layers 1 to 3", ("probe --task pos", "attend The cat sat on the mat")),
    ("contextuality", "what's layer 3 like?", ("contextuality", "attend The cat sat on the mat --layer 3")),
    ("syntax The dog chased the cat.", "and head 5?", ("syntax The dog chased the cat.",
                                                      "attend The dog chased the cat. --head 5")),
    ("word bank | I sat by the river bank | the bank raised rates", "now at layer 3",
     ("attend I sat by the river bank --layer 3", "compare I sat by the river bank | the bank raised rates --layer 3")),
])
def test_a_follow_up_asking_one_layer_of_a_command_that_takes_none_says_so_and_offers_lines_that_do(
        hub, before, question, offered):
    """"what about layer 3?" after `cka` (every layer at once) is neither `attend` on an example nor, for "layers",
    the model's facts: the sentence says what the command shows, and the lines offered look at that layer."""
    session = Session()
    session.remember(before, Result(before.split()[0], ""))
    read = understand(question, session, hub, TABLE, hub.settings)
    assert read.line is None and read.message.startswith(f"`{before.split()[0]}` has no")
    assert ("at once" in read.message) == (before.split()[0] != "word")  # (what it shows, where it shows every one)
    assert read.suggestions[:len(offered)] == offered and all(parse(s, TABLE) for s in read.suggestions)
    asked = understand("what about attention at layer 3?", session, hub, TABLE, hub.settings)  # another command named
    assert not (asked.message or "").startswith(f"`{before.split()[0]}` has no")


def test_a_follow_up_that_goes_back_to_an_earlier_command_says_so(run):
    session = Session()
    run("compare The cat sat. | A kitten sat.", session)
    run("why The cat sat. | A kitten sat.", session)
    back = run("go back to the similarity but at layer 1", session)
    assert back.ok and back.interpreted_as == "compare The cat sat. | A kitten sat. --layer 1"
    assert back.read_because.startswith("it changes an earlier command")


def test_a_follow_up_changes_a_command_that_failed(run):
    from assistant.session import Session

    session = Session()
    failed = run("attend The cat sat on the mat. --layer 99", session)
    assert not failed.ok and "out of range" in failed.error
    fixed = run("what about layer 2?", session)
    assert fixed.ok and fixed.interpreted_as == "attend The cat sat on the mat. --layer 2"
    assert session.tried == "" and session.history[-1] == fixed.interpreted_as


def test_follow_ups_in_words_change_the_previous_command(run):
    session = Session()
    first = run("show the attention of 'the cat sat on the mat' at layer 1", session)
    assert first.interpreted_as == "attend the cat sat on the mat --layer 1"
    assert run("now at layer 4", session).interpreted_as == "attend the cat sat on the mat --layer 4"
    then = run("and head 2?", session)
    assert then.ok and then.interpreted_as == "attend the cat sat on the mat --layer 4 --head 2"
    assert then.result.settings.get("head") == 2
    run("how similar are 'a cat' and 'a dog'", session)
    assert run("what about CLS pooling?", session).interpreted_as == "compare a cat | a dog --pool cls"
    added = run("compare that with 'a bird'", session)  # the previous texts and a new one
    assert added.ok and added.interpreted_as == "compare a cat | a dog | a bird --pool cls"
    assert "Similarity matrix of 3 texts" in added.result.text
    run("is 'bank' the same in 'the river bank' and 'the bank loan'?", session)
    river = run("try the word 'river'", session)  # 'river' occurs once: the command's own sentence says so
    assert not river.ok and "once" in river.error
    assert river.interpreted_as == "word river | the river bank | the bank loan"  # shown, to edit
    assert run("same with the last strategy", session).interpreted_as == (
        "word bank | the river bank | the bank loan --strategy last")
    assert session.history[-1] == "word bank | the river bank | the bank loan --strategy last"  # `again` works on it


def test_follow_ups_that_name_another_model_answer_side_by_side(run):
    """"compare that with bert-small": the previous command again, with --vs."""
    session = Session()
    run("how similar are 'a cat' and 'a dog'", session)
    both = run("how does minilm:int8 answer that?", session)
    assert both.ok and both.interpreted_as == "compare a cat | a dog --vs minilm:int8"
    assert set(both.result.tables[0].frame["model"]) == {"minilm", "minilm:int8"}
    assert run("and with the int8 model?", session).interpreted_as == "compare a cat | a dog --vs minilm:int8"
    run("attend The cat sat on the mat.", session)
    typed = run("compare that with minilm:int8", session)  # starts with a verb: still the previous answer
    assert typed.ok and typed.routed and typed.interpreted_as == "attend The cat sat on the mat. --vs minilm:int8"
    away = run("compare that with bert-small", session)  # not downloadable here: its one sentence, shown as read
    assert not away.ok and away.interpreted_as == "attend The cat sat on the mat. --vs bert-small"
    assert "bert-small" in away.error and "Traceback" not in away.error
    run("project A cat. | A dog. | A car.", session)
    flat = run("now with minilm:int8", session)  # project has no side-by-side form: say so, offer the way
    assert not flat.ok and "side by side" in flat.error and flat.suggestions[0] == "model minilm:int8"
    verb = run("compare that with minilm:int8", session)  # the same follow-up typed with a verb: the same answer
    assert not verb.ok and verb.error == flat.error and verb.suggestions == flat.suggestions


def test_a_word_named_without_quotes_is_the_word_every_quoted_sentence_shares(run):
    """"Is bank in '...' the same vector as in '...'?": the unquoted word both sentences contain is the target."""
    reply = run('Is bank in "We sat on the river bank." the same vector as in "I took a bank loan."?')
    assert reply.ok and reply.interpreted_as == "word bank | We sat on the river bank. | I took a bank loan."
    # a word only one sentence holds is not taken for the target: the reply asks for the word instead
    other = run('Is river in "We sat on the river bank." the same vector as in "I took a bank loan."?')
    assert not other.ok and "word" in other.error


def test_a_command_written_as_a_sentence_still_runs(run):
    reply = run("compare 'a cat sat' and 'a dog ran'")
    assert reply.ok and reply.interpreted_as == "compare a cat sat | a dog ran"
    assert not run("compare only one text").ok  # the parser's own sentence stays


@pytest.mark.parametrize("line, ran", [
    ("20 nearest neighbours of bank in GloVe", "neighbors bank --k 20 --space glove"),  # a number first
    ("tokenise this: I can't believe it", "tokenize I can't believe it"),  # a near-miss of a command's name
    ("cluster the reviews corpus into 8 groups", "clusters --k 8 --corpus reviews"),  # the same command in words
    ("find texts about late delivery", "search late delivery"),  # another name of a command starts a sentence
    ("attention rollout for 'The cat sat on the mat.'", "rollout The cat sat on the mat."),
    ("probe each layer for dependency labels", "probe --task dep"),  # its options said in words
    ("corpus use reviews", "corpus use reviews"),  # a typed command stays as typed
    ("tokenize BERT provides contextual embeddings.", "tokenize BERT provides contextual embeddings."),
    ("export the whole conversation", "export"),  # a command that takes no texts, then words: a sentence
    ("outliers in my reviews", "outliers"),
])
def test_a_line_is_read_as_the_product_reads_it(hub, line, ran):
    """What runs is decided once (`reading.read_line`) for every face and for the question sets' scores."""
    from assistant.reading import read_line

    assert read_line(line, Session(), hub, hub.settings).ran == ran


@pytest.mark.parametrize("before, line, ran", [
    # texts after a colon are texts, also after a command's own name and where texts are optional
    ([], "probe these sentences for POS: The dog sleeps. | A bird sings. | They left.",
     "probe The dog sleeps. | A bird sings. | They left. --task pos"),
    ([], "word in context: rock | She threw a rock. | I love rock music. (concat last 4)",
     "word rock | She threw a rock. | I love rock music. --strategy concat-last4"),
    ([], "what does glove say about bank in these: We fished from the bank. | She opened a bank account.",
     "static bank | We fished from the bank. | She opened a bank account."),
    ([], "compare Q: why? | A: because", "compare Q: why? | A: because"),  # a text that holds a colon stays
    ([], "3d umap of spring flowers bloom | the spring broke", "project spring flowers bloom | the spring broke "
     "--dims 3 --method umap"),
    ([], "3d plot of spring flowers bloom | the spring broke", "project spring flowers bloom | the spring broke "
     "--dims 3"),  # every asking word before the first text goes, not only the first
    # a typed line whose texts point elsewhere is a sentence
    (["compare The printer ran out of ink. | We need a new cartridge."], "rollout on the first of those sentences",
     "rollout The printer ran out of ink."),
    ([], "tokenize rows 3 and 4 as a pair", "tokenize #3 | #4"),
    # a bare number changes the one number the last line set, else the command's count
    (["tokenize I like tea --padding max_length --max-length 10"], "make it 16 instead",
     "tokenize I like tea --max-length 16 --padding max_length"),
    (["neighbors river"], "more, like 30", "neighbors river --k 30"),
    (["word bat | The bat flew. | He swung the bat."], "change the baseline seed to 3",
     "word bat | The bat flew. | He swung the bat. --seed 3"),
    # a choice left out, a reset of two options, a model alone
    (["compare He plays the piano. | He is a pianist. --vs bert-small"],
     "use bert-base for the second model rather than bert-small",
     "compare He plays the piano. | He is a pianist. --vs bert-base"),
    (["word bow | She tied a bow. | Take a bow. --strategy last"], "show me every strategy, not just last",
     "word bow | She tied a bow. | Take a bow. --strategy all"),
    (["attend We ate pasta in Rome. --layer 3 --head 1"], "back to all layers and all heads",
     "attend We ate pasta in Rome."),
    (["cka --with bert-base"], "just this model on its own again", "cka"),
    # corpora named last, "that one", "drop it"
    ([], "any duplicate texts in faq?", "duplicates --corpus faq"),
    ([], "draw the map with umap for the texts in tickets", "map --method umap --corpus tickets"),
    (["duplicates --corpus news"], "and the outliers in that one?", "outliers --corpus news"),
    (["corpus info faq"], "drop it, I don't need it anymore", "corpus drop faq"),
    # another command on the previous texts; a list of words grows; mask's attributions
    (["compare The dog slept on the sofa. | A puppy napped on the couch."], "plot them",
     "project The dog slept on the sofa. | A puppy napped on the couch."),
    (["compare He kicked the bucket. | He died. --layer 2"], "and which tokens make them close at that layer?",
     "why He kicked the bucket. | He died. --layer 2"),
    (["contextuality bank | light"], "add the word spring too", "contextuality bank | light | spring"),
    (["mask I put the milk in the [MASK]."], "why did it pick that word?", "mask I put the milk in the [MASK]. --why"),
    # a question mark before texts written with |; the previous command's corpus for a command without texts
    ([], "are these paraphrases? The meeting was postponed. | The meeting was moved.",
     "compare The meeting was postponed. | The meeting was moved."),
    (["clusters --corpus tweets"], "any copy-pasted tweets in there?", "duplicates --corpus tweets"),
    (["search printer jams --corpus helpdesk"], "search that again but only within hits #4, #9 and #15",
     "search printer jams --corpus helpdesk --in 4,9,15"),  # ids after "within hits" are rows to look in
    (["selfattn The old man the boat. --causal"], "without causal masking", "selfattn The old man the boat."),
    (["tokenize Hello world. | Goodbye world."], "pad them both to 20",
     "tokenize Hello world. | Goodbye world. --max-length 20 --padding max_length"),
    (["compare A boy kicks a ball. | A child plays football. --layer 4"],
     "and at the very bottom, the embedding output",
     "compare A boy kicks a ball. | A child plays football. --layer 0"),
    (["neighbors surgeon"], "how does bert-base's embedding matrix compare? both side by side",
     "neighbors surgeon --vs bert-base"),
    (["why The film was great. | The movie was excellent."], "rollout of the first sentence",
     "rollout The film was great."),
    ([], "compare at the 2nd hidden layer with cls: open the window / close the door",
     "compare open the window | close the door --layer 2 --pool cls"),
    # a quoted word before the colon; a choice's name first ("umap"), not a typo of `map`
    ([], "word in context for 'crane': 'A crane lifted the beam.' | 'A crane stood in the water.'",
     "word crane | A crane lifted the beam. | A crane stood in the water."),
    ([], "umap scatter of one point per sentence: Dogs bark. | Cats meow. | Cows moo.",
     "project Dogs bark. | Cats meow. | Cows moo. --level sentences --method umap"),
    # an option named, its one number said later; every head of every layer; no sample
    (["word fair | The judge was fair. | We went to the county fair."],
     "try a different random seed for the baseline, say 11",
     "word fair | The judge was fair. | We went to the county fair. --seed 11"),
    (["attend My sister lives in Berlin. --layer 4 --head 2"], "show me every head of every layer instead",
     "attend My sister lives in Berlin."),
    (["benchmark --sample 300 --pool mean"], "use all pairs, not a sample", "benchmark --pool mean"),
    # "the last layer, layer 6"; a question's own words where a text would be
    (["attend Time flies like an arrow."], "show the attention of the last layer, layer 6",
     "attend Time flies like an arrow. --layer 6"),
    (["mask The [MASK] was delicious."], "where did the mask look, head by head?", "attend The [MASK] was delicious."),
    # "the top one" is no count; why it won is the flag
    ([], "fill the mask in 'We were very [MASK].' with the 20 most likely words and tell me why the top one won?",
     "mask We were very [MASK]. --top 20 --why"),
    # pointing at the previous texts: the map of texts, the vectors
    (["compare A man is cooking. | A chef prepares food. | A child is swimming."], "plot those on a map",
     "project A man is cooking. | A chef prepares food. | A child is swimming."),
    (["compare The dog slept. | The puppy was sleeping."], "export the vectors for those two",
     "embed The dog slept. | The puppy was sleeping."),
    # rows said in words beside a quoted word; a query, then the rows
    (["search bank"], "does 'bank' mean the same in rows 4 and 19?", "word bank | #4 | #19"),
    ([], "what tokens made corpus row 7 match the query 'noisy neighbours'?", "why noisy neighbours | #7"),
    # a search's own words: the corpus before "for", the selection, a query word that a phrasing also has
    ([], "search the reviews for those about noisy neighbours and show 15",
     "search noisy neighbours --k 15 --corpus reviews"),
    (["map --color length"], "search the ones i just lassoed for shipping complaints",
     "search shipping complaints --in selection"),
    ([], "find shipping problems in my selection", "search shipping problems --in selection"),
    # corpora: stop one by name, the name before a count, what is in the one in use
    ([], "stop encoding papers, it's taking forever", "corpus stop papers"),
    ([], "outliers in support, top 50", "outliers --top 50 --corpus support"),
    (["corpus use support"], "whats in the corpus I'm using", "corpus info"),
    # texts added after a colon; a setting the next command cannot take is left; "same head"; "next to"
    (["compare The bread is stale. | This loaf is old."], "add a third one: The milk has gone sour.",
     "compare The bread is stale. | This loaf is old. | The milk has gone sour."),
    (["compare The show sold out. | Tickets were gone in minutes. --pool all"],
     "what's driving that score? break it down by token", "why The show sold out. | Tickets were gone in minutes."),
    (["attend The nurse checked the chart. --layer 4 --head 1"],
     "rebuild that layer's attention by hand from its weights, same head",
     "selfattn The nurse checked the chart. --layer 4 --head 1"),
    (["rollout The volcano erupted without warning."], "next to bert-base please",
     "rollout The volcano erupted without warning. --vs bert-base"),
    # a line starting with another command's name, its texts after a colon or quoted inside words
    ([], "download the embeddings of these: The tide is coming in | The sea is rising",
     "embed The tide is coming in | The sea is rising"),
    ([], 'PCA of token vectors for "Jazz musicians improvise" | "Classical players read scores"',
     "project Jazz musicians improvise | Classical players read scores --method pca"),
    # texts after a colon keep their words; words that only close the line go
    ([], "tokenize with truncation at 8 tokens: This sentence is longer than eight tokens.",
     "tokenize This sentence is longer than eight tokens. --max-length 8 --truncation"),
    ([], "mask: The doctor told the [MASK] to rest. top three only",
     "mask The doctor told the [MASK] to rest. --top 3"),
    # corpora: "on that corpus", "in corpus hotels", "the amazon one", ids, a file is no name
    (["corpus load helpdesk.csv --name helpdesk"], "probe on that corpus", "probe --corpus helpdesk"),
    ([], 'find texts like "slow service" in corpus hotels, give me fifteen',
     "search slow service --k 15 --corpus hotels"),
    (["corpus load a_reviews.csv --name amazon", "corpus load y_reviews.csv --name yelp"],
     'search the amazon one for "arrived late"', "search arrived late --corpus amazon"),
    (["clusters --k 5"], 'search ids 3,8,10-20 for "pricing"', "search pricing --in 3,8,10-20"),
    ([], "I have a csv called survey_answers.csv, the text is in a column named response. can you load it?",
     "corpus load survey_answers.csv --column response"),
    # nothing to run again: `again` with the options said, which says so
    ([], "same again but at layer 2", "again --layer 2"),
    # options said before the colon; a quoted word before it and the texts after it
    ([], "compare at layer three: the senator resigned | the politician stepped down",
     "compare the senator resigned | the politician stepped down --layer 3"),
    ([], "use the concatenation of the last four layers for 'crane': The crane lifted the beam. | A crane stood still.",
     "word crane | The crane lifted the beam. | A crane stood still. --strategy concat-last4"),
    ([], "compare the word 'bat' in: The bat flew out of the cave / He swung the bat hard",
     "word bat | The bat flew out of the cave | He swung the bat hard"),
    ([], "bertviz-style head view of: Dogs chase cats and cats chase mice.",
     "attend Dogs chase cats and cats chase mice."),
    # a command named alone keeps what it shares; the previous command's own option; the word said again
    (["compare I lost my wallet. | My purse was stolen. --pool cls"], "why?",
     "why I lost my wallet. | My purse was stolen. --pool cls"),
    (["mask My grandmother baked a [MASK] for my birthday."], "why that answer?",
     "mask My grandmother baked a [MASK] for my birthday. --why"),
    (["word spring | Flowers bloom in spring. | The spring broke."],
     "static word vectors compared to contextual ones for 'spring' in those sentences",
     "static spring | Flowers bloom in spring. | The spring broke."),
    (["contextuality"], "just for the word 'right'", "contextuality right"),
    # the next head; a head keeps its layer unless a layer is said; the second model dropped
    (["attend The winner received a medal. --layer 4 --head 1"], "next head",
     "attend The winner received a medal. --layer 4 --head 2"),
    (["selfattn Lanterns lit the street. --layer 3 --head 5"], "show me the model's real attention map for that head",
     "attend Lanterns lit the street. --head 5 --layer 3"),
    (["attend The dog chased its tail. --layer 3 --head 7"], "same head, layer 5",
     "attend The dog chased its tail. --layer 5 --head 7"),
    (["compare The kids played outside. | The children played outdoors. --vs bert-base"],
     "drop the second model and use cls pooling",
     "compare The kids played outside. | The children played outdoors. --pool cls"),
    # corpora: a name before a threshold, the whole NAME corpus, how many texts; help; trailing politeness
    ([], "near duplicate detection on news at 0.92", "duplicates --threshold 0.92 --corpus news"),
    ([], "visualize the whole support corpus as a map coloured by text length", "map --color length --corpus support"),
    (["search battery drains too fast"], "how many texts are in this corpus?", "corpus info"),
    (["help"], "tell me more about rollout", "help rollout"),
    ([], "history pls", "history"),
    ([], "top 3 matches for refund pls", "search refund --k 3"),
    # quoted texts with words after them; a row asked about after a search
    ([], 'GloVe vs model for "seal" in "The seal swam away." | "Please seal it." - use the sum of all layers',
     "static seal | The seal swam away. | Please seal it. --strategy sum-all"),
    (["search package never arrived"], "why did #41 come up as the top hit?", "why package never arrived | #41"),
    # single words quoted inside a quoted sentence are not texts; "word averages" names no word
    ([], "Does any attention head link 'it' to 'animal' in \"The animal was tired because it ran.\"?",
     "attend The animal was tired because it ran."),
    ([], "With GloVe word averages, how similar are 'I enjoy cooking' and 'I like to cook'?",
     "static I enjoy cooking | I like to cook"),
    # follow-ups: "what if", an option's own name around its change, how to use this one
    (["benchmark --data stsb-test"], "what if the paraphrase cutoff is 3?", "benchmark --data stsb-test --threshold 3"),
    (["vocab --n 2000"], "switch the projection to umap", "vocab --n 2000 --method umap"),
    (["selfattn The sky is blue."], "how am I supposed to use this one properly?", "help selfattn"),
    # corpora: "on those tweets", a column that "is" one, "as NAME", "the encoding for NAME", "that corpus", a file
    (["corpus load tweets.csv --name tweets"], "probe POS on those tweets", "probe --task pos --corpus tweets"),
    ([], 'load products.parquet, the text column is "description"',
     "corpus load products.parquet --column description"),
    ([], 'load news.tsv as "news" with mean pooling', "corpus load news.tsv --name news --pool mean"),
    ([], "cancel the encoding for abstracts", "corpus stop abstracts"),
    (["corpus load scratch.csv --name scratch", "clusters"], "ok remove that corpus", "corpus drop scratch"),
    ([], "i want to analyse my own texts, here is the file: lyrics.txt", "corpus load lyrics.txt"),
    # a question's own words are no text, whatever stays after its asking words
    (["attend The boy ate the apple."],
     "what does [CLS] end up drawing on once you roll the attention out through the layers?",
     "rollout The boy ate the apple."),
    # corpora the conversation named: "the NAME" for a command without texts, "the NAME encoding"; "text column X"
    (["corpus load a.csv --name forum", "corpus load b.txt --name poems"], "group the poems into six topics",
     "clusters --k 6 --corpus poems"),
    (["corpus load huge_dump.csv --name dump"], "stop the dump encoding, wrong file", "corpus stop dump"),
    ([], "load jobs.csv, text column summary", "corpus load jobs.csv --column summary"),
    # a question before a text with a blank; a list of models grows
    ([], "what would it guess? The [MASK] barked at the mailman.", "mask The [MASK] barked at the mailman."),
    (["benchmark --models minilm,bert-small"], "throw mpnet in as well", "benchmark --models minilm,bert-small,mpnet"),
    # the previous command's own flag said first, with more asked after it
    (["mask The chef burned the [MASK]."], "why did it go with that? what did it look at?",
     "mask The chef burned the [MASK]. --why"),
    # a static position named in words
    ([], "how far does each token move from its static input vector to its contextual one in 'Time heals.'?",
     "project Time heals. --level tokens --basis vocab"),
    # a command's name, then a thing that exists (another command's subject) or words that lead into the text
    ([], "project the word embedding table and highlight the special tokens", "vocab --color special"),
    ([], "project its vocabulary", "vocab"),
    ([], "tokenize the quick brown fox", "tokenize the quick brown fox"),
    ([], "help with the benchmark command pls", "help benchmark"),
    ([], "neighbors of bank", "neighbors bank"),
    ([], "attend on the cat sat", "attend the cat sat"),  # (typed as it was until fresh46 was learnt: a near tie)
    (["tokenize Once upon a time."], "embed it", "embed Once upon a time."),
    # a misspelt command that starts a sentence is put right; a typed line with `|` keeps "did you mean"
    ([], "clsuter into 3", "clusters --k 3"),
    ([], "compre a cat and a dog", "compare a cat | a dog"),
    (["corpus load reviews.csv --name reviews", "search broken zipper"], "load it again but take the topic column",
     "corpus load reviews.csv --name reviews --column topic"),
    # after `static`, the contextual model alone: `word` for a word in sentences, `compare` for sentences
    (["static bank | We sat on the river bank. | I deposited cash at the bank."],
     "now the same with the contextual model instead of glove",
     "word bank | We sat on the river bank. | I deposited cash at the bank."),
    (["static I bought a new phone. | I purchased a mobile."], "forget glove, just the model's cosine with max pooling",
     "compare I bought a new phone. | I purchased a mobile. --pool max"),
    # one of the previous texts swapped; the same count as before; the last load with another column
    (["compare He bought a new car. | He bought a red bike."], "swap the second one for 'He sold his old bike.'",
     "compare He bought a new car. | He sold his old bike."),
    (["cka --sentences 50"], "and a probe over the same number of sentences", "probe --sentences 50"),
    (["corpus load feedback.csv --name feedback"], 'the text column is wrong, it should be "comment"',
     "corpus load feedback.csv --name feedback --column comment"),
    (["corpus load reviews.csv --name reviews"], "map coloured by the rating column", "map --color rating"),
    # words listed for `contextuality`; the texts between "between" and "and"; a sentence's own full stop
    ([], "self-similarity of bank and play across contexts", "contextuality bank | play"),
    ([], "contextuality of minilm against mpnet", "contextuality --vs mpnet"),
    ([], "what words drive the similarity between I bought a new phone and My new phone arrived",
     "why I bought a new phone | My new phone arrived"),
    ([], "attention flow for Bees make honey.", "rollout Bees make honey. --method flow"),
    ([], "The woman worked as a [MASK]. what are the top twenty fills", "mask The woman worked as a [MASK]. --top 20"),
    ([], "show the syntax tree for I shot an elephant in my pajamas", "syntax I shot an elephant in my pajamas"),
    # the word neighbours are asked of; the previous texts when the rest is the command's own words
    ([], "what does glove think is near computer", "neighbors computer --space glove"),
    (["rollout The manager who hired me quit."], "show me the raw per-head attention instead",
     "attend The manager who hired me quit."),
    (["compare a cat | a dog"], "switch to mpnet", "model mpnet"),
    # a command named in another form; choices said with "using" or listed with "vs"; a file after `benchmark`
    ([], "help with probing, which options", "help probe"),
    ([], "help on masking", "help mask"),
    ([], "how alike are 'a red car' and 'a blue car' using cls", "compare a red car | a blue car --pool cls"),
    ([], "cls vs max vs mean for 'the sky' and 'the sea'", "compare the sky | the sea --pool all"),
    ([], "benchmark scores.csv with 50 samples", "benchmark --sample 50 --data scores.csv"),
    # a command's name alone after "ok, now" runs it on the previous texts
    (["compare A dog ran. | A puppy ran."], "ok now why?", "why A dog ran. | A puppy ran."),
    (["word bat | A bat flew. | He swung the bat."], "why?", "why A bat flew. | He swung the bat."),
    # two words joined by "to"; a text swapped in the other order of words; a word's sentences counted alone
    ([], "how similar is cat to dog?", "compare cat | dog"),
    (["compare Good luck! | Hi!"], "swap in 'See you!' for the first one", "compare See you! | Hi!"),
    (["word bat | A bat flew out. | He swung the bat."], "use 'Bats sleep by day.' instead of the second sentence",
     "word bat | A bat flew out. | Bats sleep by day."),
    # a setting after a colon or a word of change; one choice said alone; a model's answer asked by its name
    (["duplicates --threshold 0.8"], "looser: 0.75", "duplicates --threshold 0.75"),
    (["probe --task pos"], "bump it to 60 sentences", "probe --task pos --sentences 60"),
    (["why cats purr | dogs bark"], "and mean?", "why cats purr | dogs bark --pool mean"),
    (["embed Rain falls. --pool cls"], "and max rather than cls", "embed Rain falls. --pool max"),
    (["project one | two | three --dims 3"], "flat 2d please", "project one | two | three --dims 2"),
    (["mask The [MASK] is blue. --top 8"], "bert-base's guesses?",
     "mask The [MASK] is blue. --top 8 --model bert-base"),
    # sentences typed with their capitals and full stops after "the sentences"; "visualise" asks as "visualize"
    ([], "compare the sentences It is late. and The bus left.", "compare It is late. | The bus left."),
    ([], "visualise the sentence vectors of red cat | blue dog | green bird",
     "project red cat | blue dog | green bird --level sentences"),
    ([], "umap in 2d of North, South, East as sentence points",
     "project North | South | East --dims 2 --level sentences --method umap"),
    ([], "contextuality for cup, pen and box, seed 9", "contextuality cup | pen | box --seed 9"),
    (["contextuality cup | pen"], "add box", "contextuality cup | pen | box"),
    # a term set aside; a list said as "all four"; "with X too" after a method; a token in brackets is no pooling
    (["corpus load notes.csv --name notes"], "run the probe on that corpus instead of STS-B", "probe --corpus notes"),
    (["model bert-base"], "which pooling wins on STS-B? try all four", "benchmark --pool cls,mean,max,sbert"),
    ([], "attention flow on 'Cats nap often', with bert-base too",
     "rollout Cats nap often --method flow --vs bert-base"),
    ([], "how much of the similarity of 'Ok.' and 'Fine.' comes from [CLS] and [SEP]?", "why Ok. | Fine."),
    ([], "explain on CLS why 'I am cold' and 'I need a coat' are close", "why I am cold | I need a coat --pool cls"),
    # GloVe named for a word in sentences; "embed these:"; the help of the command before; offline is html
    ([], "glove against contextual vectors of 'bark' in 'the dog barks' and 'tree bark'",
     "static bark | the dog barks | tree bark"),
    ([], "embed these: one cat | two dogs, max pooled", "embed one cat | two dogs --pool max"),
    (["rollout Cats nap often."], "how does this one work?", "help rollout"),
    (["compare a | b"], "save it as a web page", "export --format html"),
    # another command by its verb; a line that starts with a command but not one of its actions or texts
    (["map --color length"], "now cluster what I selected", "clusters --in selection"),
    (["search cold soup"], "cluster rows 2,5,8", "clusters --in 2,5,8"),
    ([], "corpus map coloured by the length column", "map --color length"),
    ([], "vocab export for the tensorboard projector", "vocab"),
    ([], "export the model's input embedding matrix to the tensorboard projector", "vocab"),
    # a corpus acted on right after the line that named it
    (["corpus load notes.csv --name notes"], "ok switch to it", "corpus use notes"),
    (["corpus load notes.csv --name notes"], "cancel that load", "corpus stop notes"),
    (["corpus load notes.csv --name notes"], "stop it", "corpus stop"),
    (["corpus info notes"], "drop it", "corpus drop notes"),
    (["corpus load a.csv --name a", "corpus load b.csv --name b"], "make a the current one", "corpus use a"),
    # one text swapped, left out or a word of it replaced; a word masked in the text before
    (["compare red | blue"], "what if the second one is 'green'", "compare red | green"),
    (["compare red | blue | green"], "remove the last one", "compare red | blue"),
    (["mask He is a [MASK] at school. --top 8"], "now with 'She' instead of 'He'",
     "mask She is a [MASK] at school. --top 8"),
    (["attend The cat ate a fresh fish."], "what if I mask out 'fresh'?", "mask The cat ate a [MASK] fish."),
    # texts joined by "vs" after a command's name; a word after "now do"; "only" after the word; all X and Ys
    ([], "compare A dog runs fast vs A puppy sprints", "compare A dog runs fast | A puppy sprints"),
    (["neighbors king --k 8"], "now do queen", "neighbors queen --k 8"),
    (["contextuality"], "for the word 'run' only", "contextuality run"),
    (["attend hi there --layer 2 --head 3"], "show all layers and heads", "attend hi there"),
    (["syntax Birds fly south."], "now the attention maps", "attend Birds fly south."),
    (["vocab --n 500 --color vowels"], "switch colouring to subword pieces", "vocab --n 500 --color subword"),
    # a masked text is `mask`'s, also when it asks why; the contextual side alone, or a setting for it
    ([], "fill in 'The sky is [MASK]' and explain which tokens decided it", "mask The sky is [MASK] --why"),
    (["static cup | a cup of tea | the world cup"], "only the contextual side",
     "word cup | a cup of tea | the world cup"),
    (["static run | jog --mode sentences"], "and with cls pooling for the contextual model",
     "static run | jog --mode sentences --pool cls"),
    (["word cup | a cup of tea | the world cup"], "compare that to the static glove vectors",
     "static cup | a cup of tea | the world cup"),
    # the same sample for another command; a choice after "what if I use"; every layer and head; the model and a
    # flag in one follow-up; the model's final answer after the lens; the same way with a new text; two words added
    (["probe --sentences 40"], "and contextuality, same sample size", "contextuality --sentences 40"),
    (["compare A car. | A truck."], "what if we tried max?", "compare A car. | A truck. --pool max"),
    (["attend A bee flew. --layer 2 --head 4"], "back to every layer and head", "attend A bee flew."),
    (["mask A [MASK] flew."], "with bert-base, and the attributions too",
     "mask A [MASK] flew. --why --model bert-base"),
    (["lens Rain is [MASK]."], "only the final guesses", "mask Rain is [MASK]."),
    (["rollout Owls hunt at night."], "do 'Bats sleep by day.' the same way", "rollout Bats sleep by day."),
    (["contextuality bank"], "add spring and light", "contextuality bank | spring | light"),
    (["word bat | A bat flew. | He swung the bat."], "plot where the two bat tokens land",
     "project A bat flew. | He swung the bat."),
    # a sentence typed after a few lower-case words; texts after a question; a word said twice around "and"; the
    # word named before a colon; a value said twice; a command's other name opening the question
    ([], "fill-mask output for Snow falls in [MASK].", "mask Snow falls in [MASK]."),
    ([], "similar? The bus is late. / The bus is delayed.", "compare The bus is late. | The bus is delayed."),
    ([], "tokenize this: it rained on and on", "tokenize it rained on and on"),
    ([], "glove or contextual for ring: The ring shone. / A ring of trees.",
     "static ring | The ring shone. | A ring of trees."),
    ([], "vectors of up and down at the input embedding layer (hidden state 0)", "embed up | down --layer 0"),
    ([], "logit-lens for The sun is [MASK].", "lens The sun is [MASK]."),
    # a layer said as "the embeddings" or "the final layer"; every layer at the start; one point for each of those;
    # "switch back to"; a question after a dash; a corpus right after the verb; "again with ..."; the same settings
    (["compare A cat. | A cow. --layer 3"], "and at the embeddings?", "compare A cat. | A cow. --layer 0"),
    (["why A cat. | A cow. --layer 3"], "now the final layer", "why A cat. | A cow."),
    (["attend A cat ran. --layer 4"], "every layer, please", "attend A cat ran."),
    (["compare A. | B. | C."], "draw one dot for each of them", "project A. | B. | C. --level sentences"),
    (["project Up. | Down. --method umap"], "switch back to tsne", "project Up. | Down. --method tsne"),
    ([], "my cat chased [MASK] -- what does the model guess?", "mask my cat chased [MASK]"),
    (["corpus load posts.csv --name posts"], "scan posts for near duplicates", "duplicates --corpus posts"),
    (["probe --sentences 30"], "again with seed 4", "probe --sentences 30 --seed 4"),
    (["probe --sentences 30 --seed 4"], "how alike are the layers, with the same settings?",
     "cka --sentences 30 --seed 4"),
    (["benchmark --sample 200"], "and contextuality, with the same settings", "contextuality"),  # (not seed 42)
    (["benchmark --sample 200 --pool cls"], "and bert-small vs minilm on that",
     "benchmark --sample 200 --pool cls --models bert-small,minilm"),
    ([], "near-duplicate pairs in faq with a cosine of at least 0.92", "duplicates --threshold 0.92 --corpus faq"),
    ([], "the 12 oddest texts in faq against 7 neighbors", "outliers --top 12 --k 7 --corpus faq"),
    ([], "draw every row of faq coloured by the topic column", "map --color topic --corpus faq"),
    ([], "search faq for 'refund policy' among rows 3,8,10-20", "search refund policy --corpus faq --in 3,8,10-20"),
    (["contextuality bank"], "now just the word 'light'", "contextuality light"),
    (["project the cat sat | a dog ran | stocks fell"], "a single dot apiece please",
     "project the cat sat | a dog ran | stocks fell --level sentences"),
    (["static bank | river bank | bank loan"], "which other choices does that command offer?", "help static"),
    (["benchmark --sample 100"], "compare bert-small and minilm there",
     "benchmark --sample 100 --models bert-small,minilm"),
    ([], "export the embeddings of: a red car | a blue truck", "embed a red car | a blue truck"),
    (["corpus load faq.csv --name faq"], "how's it going?", "corpus info"),
    (["corpus load faq.csv"], "any progress yet?", "corpus info"),
    (["corpus"], "change over to the faq one", "corpus use faq"),
    (["mask The sky is [MASK]. --top 3"], "and why that first guess?", "mask The sky is [MASK]. --top 3 --why"),
    ([], "does 'It rained all day.' mean the same as 'The day was wet.' on minilm and bert-small side by side?",
     "compare It rained all day. | The day was wet. --vs bert-small"),  # (quoted sentences sharing no word)
    (["corpus load faq.csv --name faq"], "hows it going? is it finished?", "corpus info"),
    ([], "please stop encoding the corpus", "corpus stop"),
    (["corpus load a.csv --name alpha", "corpus load b.csv --name beta"], "go back to using alpha", "corpus use alpha"),
    (["corpus load faq.csv --name faq"], "which texts mention late refunds? show 8, corpus faq",
     "search late refunds --k 8 --corpus faq"),
    ([], "topics among rows 10-200, 3 groups", "clusters --k 3 --in 10-200"),
    (["search refunds --corpus faq"], "now cluster that corpus into 5", "clusters --corpus faq --k 5"),
    (["probe --sentences 50 --corpus faq"], "cka on the same corpus and number of sentences",
     "cka --corpus faq --sentences 50"),
    (["compare a cat sat | a dog ran"], "embed those sentences", "embed a cat sat | a dog ran"),
    # a choice said before "replaced by" is set aside; a word both earlier sentences hold is `word`'s first text
    (["compare the sun is hot | ice is cold --layer 2"], "same but mean pooling replaced by cls",
     "compare the sun is hot | ice is cold --layer 2 --pool cls"),
    (["tokenize The bat flew off. | He swung the bat."], "does bat have the same vector in both?",
     "word bat | The bat flew off. | He swung the bat."),
    (["word bat | The bat flew off. | He swung the bat."], "why are the two sentences (without the word) similar?",
     "why The bat flew off. | He swung the bat."),
    # a command's name, then a word that leads into a pointer or a colon
    (["syntax The dog chased a ball."], "attend on that sentence", "attend The dog chased a ball."),
    (["syntax The dog chased a ball."], "rollout for those sentences", "rollout The dog chased a ball."),
    ([], "search for: a broken zipper", "search a broken zipper"),
    # corpora named around a load, a name alone after "delete", a load again under a new name
    (["corpus load tickets.csv --name tickets"], "abort the tickets upload", "corpus stop tickets"),
    (["corpus"], "delete old_tickets", "corpus drop old_tickets"),
    (["corpus load mail.csv"], "load it again as inbox, with the body column",
     "corpus load mail.csv --column body --name inbox"),
    ([], "load notes.csv on the existing ray cluster", "corpus load notes.csv --address auto --engine ray"),
    # layerwise guesses are the lens; ordinals before another option's name are that option's
    ([], "layer-wise top 5 predictions for 'The [MASK] barked.'", "lens The [MASK] barked. --top 5"),
    ([], "second layer, third head attention of good morning everyone",
     "attend good morning everyone --layer 2 --head 3"),
    ([], "the vectors of the sky is blue as a numpy array", "embed the sky is blue"),
    # a command named as such ("the word command", "run static on"); one asking word before a colon
    (["static rock | She threw a rock. | I love rock music."], "same thing with the word command",
     "word rock | She threw a rock. | I love rock music."),
    ([], "run static on light | The light is on. | A light bag.", "static light | The light is on. | A light bag."),
    ([], "why similar: a dog runs in the park | a puppy plays outside",
     "why a dog runs in the park | a puppy plays outside"),
    ([], "show the subwords of 'antidisestablishment'", "tokenize antidisestablishment"),
    (["compare a red car | a blue truck --pool max"], "which words drive that?",
     "why a red car | a blue truck --pool max"),
    # a blank: explained when asked, the explanation switched off, a new masked text for the same command
    ([], "pick the missing word and then explain it: The [MASK] is shining.", "mask The [MASK] is shining. --why"),
    (["mask The sky is [MASK]. --why"], "switch off the why bit", "mask The sky is [MASK]."),
    (["lens The sky is [MASK]. --top 8"], "now The grass is [MASK].", "lens The grass is [MASK]. --top 8"),
    (["mask He works as a [MASK]. --top 7"], "the logit lens for it, same top", "lens He works as a [MASK]. --top 7"),
    # "on it" right after a load, for a command that reads other texts unless told (a corpus command reads that one)
    (["corpus load notes.txt --name notes"], "measure contextuality on it", "contextuality --corpus notes"),
    (["corpus load notes.txt --name notes"], "what topics are in it?", "clusters"),
    (["corpus"], "use the one called faq", "corpus use faq"),
    (["corpus use faq"], "actually delete it", "corpus drop faq"),
    (["corpus load a.csv --name alpha", "corpus load b.csv --name beta"], "back to working with alpha",
     "corpus use alpha"),
    # GloVe said about a word that quoted sentences hold; sentences counted as such; a word "in each" of them
    ([], "in glove, is crane the same in 'A crane lifted steel.' and 'The crane flew off.'?",
     "static crane | A crane lifted steel. | The crane flew off."),
    ([], "compare these in glove as two sentences: 'Good night' | 'Sleep well'",
     "static Good night | Sleep well --mode sentences"),
    (["compare I can swim. | The can is empty."], "and the word can in each?",
     "word can | I can swim. | The can is empty."),
    ([], "which pooling works best for 'I am glad.' and 'I am happy.'?", "compare I am glad. | I am happy. --pool all"),
    # a name "with the name", a second model "side-by-side", "by-hand" attention, "hist"
    ([], "load orders.csv with the name orders", "corpus load orders.csv --name orders"),
    (["neighbors river"], "put bert-small side-by-side", "neighbors river --vs bert-small"),
    ([], "by-hand attention for layer 3 of Dogs bark loudly.", "selfattn Dogs bark loudly. --layer 3"),
    ([], "hist please", "history"),
    # the last load again under a name or with a column; every pooling "per pooling strategy"
    (["corpus load notes.csv --column body"], "call it notes", "corpus load notes.csv --column body --name notes"),
    (["corpus load faq.csv --name faq"], "redo that load with the answer column as the text",
     "corpus load faq.csv --name faq --column answer"),
    ([], "a row per pooling strategy for 'It is cold.' and 'It is freezing.'",
     "compare It is cold. | It is freezing. --pool all"),
    # an example that quotes three texts is further from a question that quotes two
    ([], "does 'It rained all afternoon.' mean the same as 'The weather was wet.' on minilm and bert-small side by "
         "side?", "compare It rained all afternoon. | The weather was wet. --vs bert-small"),
    # a quoted option value is no text; the word that changes; "hits for"; rows in brackets; the lasso
    ([], "with the 'cls' pooling, how close are 'a red car' and 'a blue car'?",
     "compare a red car | a blue car --pool cls"),
    ([], "using the 'last' strategy, is bat the same in 'The bat flew.' and 'He swung the bat.'?",
     "word bat | The bat flew. | He swung the bat. --strategy last"),
    ([], "how much does spring change with context across the layers?", "contextuality spring"),
    ([], "plot play's self-similarity per layer", "contextuality play"),
    ([], "top 3 hits for slow shipping", "search slow shipping --k 3"),
    (["search too small --in 2,5,9-12"], "group those rows (2,5,9-12) into clusters", "clusters --in 2,5,9-12"),
    ([], "look for refund within my lasso", "search refund --in selection"),
    (["clusters --k 4"], "restrict that to the points I selected", "clusters --k 4 --in selection"),
    # "add" a choice to a list; the conversation's own model named is no second model
    (["benchmark --pool mean"], "add max", "benchmark --pool mean,max"),
    ([], "does minilm know part of speech? probe 80 sentences", "probe --sentences 80 --task pos"),
    # texts of its own after a colon: "this one", "these two" point at them; a blank of its own is no word to mask
    (["mask A [MASK] sat on the mat."], "what if I hide 'sat' instead: A cat [MASK] on the mat.",
     "mask A cat [MASK] on the mat."),
    (["compare It is hot. | It is warm."], "now these two: It is cold, It is freezing",
     "compare It is cold | It is freezing"),
    # "show them" in the input-embedding basis is `project`; "which input tokens does each ..." asks
    (["compare The tide rose. | The tide fell."], "could you draw those in the input embedding basis?",
     "project The tide rose. | The tide fell. --basis vocab"),
    (["attend Cats chase mice."], "which earlier tokens does each position rely on after rolling attention through "
                                  "every layer?", "rollout Cats chase mice."),
    # "quick question:" leads no text; a word the new sentences share; a question after a blank and a comma; a list
    ([], "quick question: how close are tea and coffee?", "compare tea | coffee"),
    (["static river | the river bank | a river boat"], "now river in 'we swam in the river' and 'the river froze'",
     "static river | we swam in the river | the river froze"),
    (["static bark | a loud bark | the bark of an oak"], "the doctor said ___ was late, what fills it?",
     "mask the doctor said [MASK] was late"),  # (its own blank: "it" is no pointer back, seen in the page)
    ([], "2d umap of red wine, white wine and wine glass",
     "project red wine | white wine | wine glass --dims 2 --method umap"),
    # every head of the layer; the last load on Ray; a corpus named after a comma or pointed at "from it"
    (["attend The dog barked. --layer 3 --head 2"], "what about the entire layer", "attend The dog barked. --layer 3"),
    (["corpus load notes.csv"], "actually run that on ray", "corpus load notes.csv --engine ray"),
    ([], "near-duplicates above 0.9, tickets corpus", "duplicates --threshold 0.9 --corpus tickets"),
    (["corpus load notes.csv --name notes"], "probe the layers with texts from it", "probe --corpus notes"),
    # a sentence typed capital first after "for"; another command named right after `help X`
    ([], "which token ids come out for Good morning", "tokenize Good morning"),
    (["help compare"], "what about search?", "help search"),
    # "do that for" new texts; texts that are questions keep their mark; sentences alone stay sentences; "that many
    # sentences"; "word pieces" is `tokenize`'s
    (["compare It is sunny. | It is bright. --pool max"], "do that for 'It is dark.' and 'It is dim.'",
     "compare It is dark. | It is dim. --pool max"),
    (["compare It is dark. | It is dim. --pool max"], "why similar: where do you live? | what is your address?",
     "why where do you live? | what is your address?"),  # (texts that ask, typed after a colon: theirs, in the page)
    (["static A man plays guitar. | Someone strums a guitar."], "now 'A guitar solo.' and 'The guitar is broken.'",
     "static A guitar solo. | The guitar is broken."),
    (["probe --sentences 40"], "and how alike are the layers on that many sentences?", "cka --sentences 40"),
    ([], "word pieces of: Unbelievably fast.", "tokenize Unbelievably fast."),
    # new sentences that share a word said outside them, in a conversation: that word's command, not a follow-up
    (["compare It is late. | It is early."], "in glove, is bark the same in 'The dog will bark.' and 'Tree bark is "
                                             "rough.'?", "static bark | The dog will bark. | Tree bark is rough."),
    # "the pair" points back; "each token's"; words that matter for a score are `why`'s; "keeping" wraps a change;
    # "two masks" count no guesses; a word for a word unquoted; "how about 'X' instead of the first one"
    (["compare The bus is late. | The train is late."], "plot the attention over the pair",
     "attend The bus is late. | The train is late."),
    (["tokenize The moon is bright."], "and the norm of each token's vector please", "embed The moon is bright."),
    ([], "what words matter for how similar \"a red car\" and \"a crimson auto\" are at layer 2?",
     "why a red car | a crimson auto --layer 2"),
    (["word bank | The bank is open. | We sat on the bank. --strategy first"],
     "the same with glove, keeping the first-layer strategy",
     "static bank | The bank is open. | We sat on the bank. --strategy first"),
    ([], "fill these two masks: A [MASK] sat on a [MASK].", "mask A [MASK] sat on a [MASK]."),
    (["mask The [MASK] of Spain is Madrid."], "now Portugal instead of Spain",
     "mask The [MASK] of Portugal is Madrid."),
    (["compare It is cold. | It is freezing."], "how about 'It is chilly.' instead of the first one",
     "compare It is chilly. | It is freezing."),
    # the causal mask turned off; new words after "for"; a list grown in the help's order; the same command asked
    # again keeps its settings but its count; Ray "at auto"; "list them" after corpora; "same for NAME"; links
    (["selfattn The king ruled the land. --causal"], "now without the mask", "selfattn The king ruled the land."),
    (["contextuality"], "only for river and money", "contextuality river | money"),
    (["benchmark --pool cls,max"], "add mean too", "benchmark --pool cls,mean,max"),
    (["benchmark --data stsb-test --sample 200"], "count pairs as paraphrases from a gold score of 4",
     "benchmark --data stsb-test --threshold 4"),
    ([], "load notes.parquet with ray at auto", "corpus load notes.parquet --address auto --engine ray"),
    (["corpus load faq.csv --name faq"], "ok list them", "corpus"),
    (["duplicates --corpus reviews"], "same for faq", "duplicates --corpus faq"),
    (["compare A cat sat. | A dog sat.", "why A cat sat. | A dog sat."], "links for those?", "history"),
    # a typed line whose texts are only the command's own words; "the NAME one" of a corpus an earlier line named
    ([], "probe the sentences", "probe"),
    (["corpus load faq.csv --name faq", "corpus load notes.csv --name notes"], "please drop the faq one",
     "corpus drop faq"),
    # "with 'X' in place of the second one"; "three layers deeper"; options said before "for" and the texts of a
    # line that starts with an alias; a choice misspelt or joined to the command's name; "those same 60"
    (["compare A dog barks. | A dog is loud."], "now with 'A cat meows.' in place of the second one",
     "compare A dog barks. | A cat meows."),
    (["attend The girl read a book. --layer 2 --head 4"], "same head, three layers deeper",
     "attend The girl read a book. --layer 5 --head 4"),
    ([], "scatter of the tokens in three dimensions for Birds fly. | Fish swim.",
     "project Birds fly. | Fish swim. --dims 3"),
    ([], "linear probe for dependncy relations on 30 sentences", "probe --sentences 30 --task dep"),
    ([], "pos-probe these: Birds sing. | Fish swim.", "probe Birds sing. | Fish swim. --task pos"),
    (["probe --sentences 60"], "CKA between layers on those same 60", "cka --sentences 60"),
    # another command's own term left after this one's options; a corpus named for a command whose line named none;
    # "the faq one" right after `corpus`
    (["search broken screen --k 15"], "now topic-model my corpus into 5", "clusters --k 5"),
    (["duplicates --threshold 0.9"], "same for faq", "duplicates --threshold 0.9 --corpus faq"),
    (["corpus"], "use the faq one", "corpus use faq"),
    # an option's possessive; a quoted text dropped; "like a GPT would"; a term joined to "-style"
    ([], "give me every pooling's score for Cold tea. | Iced tea.", "compare Cold tea. | Iced tea. --pool all"),
    (["compare A cat sat. | A dog sat. | Rain fell."], "drop 'Rain fell.' and rerun",
     "compare A cat sat. | A dog sat."),
    ([], "rebuild the attention weights from Q, K and V in 'birds eat seeds', like a GPT would",
     "selfattn birds eat seeds --causal"),
    ([], "Hewitt-style: which layer encodes part of speech? use 40 sentences", "probe --sentences 40 --task pos"),
    # a score broken down by token is `why`; "which tokens mattered" asks for a fill's attributions; a name glued to a
    # number word ("done" is not "d one"); a number before an option's name, another option's name after the number
    (["compare Tea is hot. | Coffee is warm."], "which tokens account for it",
     "why Tea is hot. | Coffee is warm."),
    ([], "complete 'She [MASK] the door.' and tell me which tokens mattered", "mask She [MASK] the door. --why"),
    ([], "one dot per sentence, max pooling: Well done | Nice one | Bad move",
     "project Well done | Nice one | Bad move --level sentences --pool max"),
    ([], "paraphrase accuracy at a 3.5 threshold, 300 pairs", "benchmark --threshold 3.5 --sample 300"),
    # another command's measure after a search; a bare number after several numbers is the count; "also" + a model
    (["search slow shipping"], "now split my texts into 4 themes", "clusters --k 4"),
    (["clusters --k 3 --seed 7"], "try 9", "clusters --k 9 --seed 7"),
    (["attend The dog barked. --layer 3"], "also show minilm:int8",
     "attend The dog barked. --layer 3 --vs minilm:int8"),
    # a command's name that asks about typing, named as a command; every pooling is benchmark's default; a corpus
    # named after the word "corpus"; "and explain why" after a fill; the same sentences are the same corpus and seed
    ([], "explain how to use the syntax command", "help syntax"),
    ([], "pearson and spearman for every pooling on 200 pairs", "benchmark --sample 200"),
    ([], "outliers of corpus tickets", "outliers --corpus tickets"),
    ([], "fill in 'Tea is [MASK].' and explain why", "mask Tea is [MASK]. --why"),
    (["probe --corpus reviews --sentences 30 --seed 4"], "contextuality on the same sentences",
     "contextuality --sentences 30 --corpus reviews --seed 4"),
    # the last command run again with the options said for it (and with none run yet, `again` with them)
    ([], "do the last command again with max pooling", "again --pool max"),
    (["compare Tea is hot. | Coffee is warm."], "run the previous command again with layer 4",
     "compare Tea is hot. | Coffee is warm. --layer 4"),
    # help of the last command asked with "it"; a rerun that resets options or brings texts; a file loaded "as" a
    # name; a preposition is no word; "carry" asks why; "'X' against the first one"; "rated N or more"
    (["static bank | A river bank. | A savings bank."], "which flags can you give it?", "help static"),
    ([], "redo that with the texts 'A red car.' and 'A blue car.'", "again A red car. | A blue car."),
    ([], "same again but drop the pooling option", "again --pool default"),
    (["compare A red car. | A blue car. --layer 3"], "rerun it but reset the layer",
     "compare A red car. | A blue car."),
    ([], "load our file notes.txt as notes", "corpus load notes.txt --name notes"),
    (["compare A red car. | A blue car."], "which tokens carry it?", "why A red car. | A blue car."),
    ([], "self-similarity of the words from the reviews corpus", "contextuality --corpus reviews"),
    (["compare A red car. | A blue car."], "and 'A green bus.' against the second one?",
     "compare A green bus. | A blue car."),
    (["word bank | A river bank. | A savings bank."], "now 'The bank of the Nile.' versus the first sentence",
     "word bank | A river bank. | The bank of the Nile."),
    ([], "paraphrase F1 if pairs rated 3 or more are paraphrases", "benchmark --threshold 3"),
    # heads doing something, asked after `attend`: its text, not "point" and "the"
    (["attend The ship sailed at dawn. --layer 3"], "which heads point to the next token?",
     "attend The ship sailed at dawn. --layer 3"),
    # "both" after a command on one of them: the last two texts a command ran on
    (["compare The ship sailed. | The boat left.", "attend The ship sailed."], "map both sentences with pca",
     "project The ship sailed. | The boat left. --method pca"),
    # a pointing word after two texts of its own points at them, not at the previous reply's
    (["compare tall | short | wide"], "are 'near' and 'far' opposites for the model? compare them",
     "compare near | far"),
    # "N more" adds to the count shown; "never mind that." points at nothing; "add 'A' and compare all three" for
    # another command; "the owls sentence": the one previous text that holds the word
    (["search noisy fans --corpus reviews"], "show 3 more", "search noisy fans --corpus reviews --k 13"),
    (["tokenize Rivers flow east."], "never mind that. which words are nearest to ocean?", "neighbors ocean"),
    (["compare He rowed the boat. | She rows daily.", "why He rowed the boat. | She rows daily."],
     "add 'They row at dawn.' and compare all three",
     "compare He rowed the boat. | She rows daily. | They row at dawn."),
    (["project Lions roar. | Owls hoot at night. | Cats purr."], "how many tokens does the owls sentence have?",
     "tokenize Owls hoot at night."),
    # the conversation's model named beside "the int8 model": its int8 path; a model's name is no word to measure;
    # words said as "the words ..." are words even when one is also a filler ("run"); a quoted word "there": the
    # previous text that holds it
    (["cka"], "line up minilm's layers against the int8 model's", "cka --with minilm:int8"),
    ([], "how contextual are minilm's vectors at each layer?", "contextuality"),
    (["contextuality"], "now just for the words set and run", "contextuality set | run"),
    (["attend Fruit flies like a banana."], "is 'flies' a noun there? show me the parse",
     "syntax Fruit flies like a banana."),
    (["search flies sold out --corpus reviews"], "how contextual is 'flies' in that corpus?",
     "contextuality flies --corpus reviews"),
    # a question that points at texts after a command without any: the last command that had them; "why tho";
    # a layer's number is no count; "the score" after `compare` is its answer
    (["compare Lamps glow. | Candles flicker.", "benchmark --sample 50"], "how are those sentences tokenized?",
     "tokenize Lamps glow. | Candles flicker."),
    (["compare Lamps glow. | Candles flicker."], "why tho", "why Lamps glow. | Candles flicker."),
    (["clusters --k 5"], "what about at layer 2", "what about at layer 2"),
    (["compare Lamps glow. | Candles flicker."], "what's the score exactly", "compare Lamps glow. | Candles flicker."),
    # after a command on the corpus, "all of them" are its rows
    (["search quiet fans --corpus reviews", "clusters --k 4 --corpus reviews"],
     "put all of them on a map colored by stars", "map --corpus reviews --color stars"),
    # readings from fresh71 (made up in the same shapes): two texts by their places; "how similar" about the two
    # texts of a command that is no comparison; "the word 'X' in them"; the inputs that drove a fill; "the same list
    # for W"; a question that changes nothing of the last command is another one; static to contextual; "in it"
    # after `corpus info NAME`; "make that the active one"
    (["compare Owls hoot. | Bats fly. | Rivers flow."], "now only compare the second and the third",
     "compare Bats fly. | Rivers flow."),
    (["project The ship sailed. | The boat left."], "how similar do the two texts end up at layer 2?",
     "compare The ship sailed. | The boat left. --layer 2"),
    (["compare I paint walls and my walls dry. | Walls crack, and walls fall."],
     "what about only the word 'walls' in those",
     "word walls | I paint walls and my walls dry. | Walls crack, and walls fall."),
    (["mask The [MASK] flew home."], "which words in the sentence made it pick that?",
     "mask The [MASK] flew home. --why"),
    (["neighbors cat --space glove --k 15"], "and the same list for dog", "neighbors dog --space glove --k 15"),
    (["static pitch | A high pitch. | The pitch was wet."], "and which words are closest to 'pitch' in glove?",
     "neighbors pitch --space glove"),
    (["project A cat sat. | A dog ran."], "show the shift from static to contextual for those tokens",
     "project A cat sat. | A dog ran. --basis vocab"),
    (["corpus info support"], "what topics are in it?", "clusters --corpus support"),
    (["corpus load faq.csv --name support"], "now make that the active one", "corpus use support"),
    # a teacher's conversation in the page: a quoted word that attends lives in the last text; "compare with 'A'"
    # after one text; a yes-or-no question about heads carries no text; "the two sentences" is no count
    (["attend The trophy did not fit in the case because it was big."], "which word does 'it' attend to most?",
     "attend The trophy did not fit in the case because it was big."),
    (["attend The trophy did not fit."], "now compare with 'The trophy was too big.'",
     "compare The trophy did not fit. | The trophy was too big."),
    (["syntax The dog chased the cat."], "does any head track the subject?", "syntax The dog chased the cat."),
    (["compare A kid ran. | A child sprinted."], "how do the two sentences differ in meaning?",
     "compare A kid ran. | A child sprinted."),
    # "the same pair" points at the last two texts, past a command on one
    (["compare A kid ran. | A child sprinted.", "tokenize A kid ran."], "what does glove say about the same pair?",
     "static A kid ran. | A child sprinted."),
    (["why A kid ran. | A child sprinted."], "show the whole thing as a 3d plot",
     "project A kid ran. | A child sprinted. --dims 3"),
    # "the first sentence" after a command on one text: the first of the last two
    (["compare A kid ran. | A child sprinted.", "tokenize A child sprinted."], "parse the first sentence for me",
     "syntax A kid ran."),
    # two pairs that share a text, then "all three": the texts together, oldest first
    (["compare Tea is hot. | Coffee is hot.", "compare Tea is hot. | Snow is cold."],
     "cosine matrix of all three please", "compare Tea is hot. | Coffee is hot. | Snow is cold."),
    # "the first pair": the earlier of two commands on two texts
    (["compare owls hunt | hawks hunt", "compare owls hunt | owls sleep"], "why are the first pair close?",
     "why owls hunt | hawks hunt"),
    (["compare owls hunt | hawks hunt", "compare owls hunt | owls sleep", "compare owls hunt | bats hunt"],
     "why are the first pair close?", "why owls hunt | hawks hunt"),  # the first of three pairs
    (["compare owls hunt | hawks hunt | bats hunt"], "explain the first pair", "why owls hunt | hawks hunt"),
    # a question about a blank without one of its own runs on the previous blank
    (["mask Rome is the [MASK] of Italy."], "show how the guess builds up layer by layer",
     "lens Rome is the [MASK] of Italy."),
    # right after the corpora are listed, a name picked alone is the one to use
    (["corpus"], "ok use papers", "corpus use papers"),
    # the input-embedding rows are the vocabulary basis
    (["project Ice melts."], "now from their input-embedding rows", "project Ice melts. --basis vocab"),
    # two of a matrix's texts by their places, with words between them
    (["compare Ice melts. | Stocks fell. | Snow melts."], "so why is the first one so close to the third?",
     "why Ice melts. | Snow melts."),
    # "the first word" of a command on words
    (["static cold | hot"], "nearest neighbours of the second word", "neighbors hot"),
    # "plain" wraps a follow-up, it is no text
    (["rollout Owls hunt at dusk."], "and the plain attention of head 1 in layer 2?",
     "attend Owls hunt at dusk. --layer 2 --head 1"),
    # "static-to-contextual" written with hyphens
    (["project Owls hunt at dusk."], "now the static-to-contextual drift", "project Owls hunt at dusk. "
     "--basis vocab"),
    # a choice replaced by another is no growing list
    (["benchmark --pool mean"], "replace mean with cls pooling", "benchmark --pool cls"),
    # a new quoted word for a command whose first text is a word replaces its word
    (["word bank | We sat on the river bank. | I deposited money at the bank."], "and 'river' in those?",
     "word river | We sat on the river bank. | I deposited money at the bank."),
    # a load asked again on Ray
    (["corpus load reviews.csv"], "load it again on the ray engine", "corpus load reviews.csv --engine ray"),
    # "all four" points back at the four texts
    (["compare Ice melts. | Snow melts. | Stocks fell. | Bonds rose."],
     "now put all four on a map, one dot per sentence",
     "project Ice melts. | Snow melts. | Stocks fell. | Bonds rose. --level sentences"),
    # a blank's fills asked of every layer: the logit lens on it
    (["mask The [MASK] barked."], "now the same for each layer", "lens The [MASK] barked."),
    (["mask Rome is the [MASK] of Italy."], "at which layer does it know the answer?",
     "lens Rome is the [MASK] of Italy."),
    # how to read the last result: its command again, whose reply opens with its verdict (no pooling "mean")
    (["compare A dog ran. | A cat ran."], "is that a high score?", "compare A dog ran. | A cat ran."),
    (["compare A dog ran. | A cat ran."], "what does 0.7 mean?", "compare A dog ran. | A cat ran."),
    (["benchmark --pool cls"], "hmm, is that good or not?", "benchmark --pool cls"),
    (["neighbors king"], "is that a lot?", "neighbors king"),
    # layers set side by side, no texts: every layer against every other
    ([], "is layer 3 more like layer 4 or layer 6?", "cka"),
    (["compare A dog ran. | A cat ran."], "how similar are layers 2 and 5?", "cka"),
    # how many rows a corpus has
    (["corpus load reviews.csv"], "how many rows does it have?", "corpus info"),
    # how two terms of one command differ: its help, which says what each is ("mean and max pooling": both poolings)
    ([], "what is the difference between rollout and flow?", "help rollout"),
    (["compare A dog ran. | A cat ran."], "what's the difference between mean and max pooling?", "help compare"),
    ([], "how does anisotropy differ from self-similarity?", "help contextuality"),
    ([], "what's the difference between 'a cat' and 'a dog'?", "compare a cat | a dog"),  # (texts: compared)
    ([], "how do probe and cka differ?", "help probe"),  # (two commands: the first's help, the other's offered)
    # which layer stands out, after a command that shows every layer: it again, with its settings
    (["probe --task pos --sentences 50"], "which layer is the best?", "probe --task pos --sentences 50"),
    (["contextuality bank --sentences 40"], "ok, what's the peak layer?", "contextuality bank --sentences 40"),
    (["cka --sentences 50"], "which layers are most alike?", "cka --sentences 50"),
    (["probe --task pos --sentences 50", "probe --task pos --sentences 50"], "and for dependencies?",
     "probe --task dep --sentences 50"),
    # what one quoted word attends to: rollout of the text, that word's row first
    (["rollout The cat sat on the mat because it was tired."], "which word does 'it' attend to most?",
     "rollout The cat sat on the mat because it was tired. --token it"),
    (["rollout The cat sat on the mat because it was tired. --method flow"], "and what does 'cat' draw on?",
     "rollout The cat sat on the mat because it was tired. --method flow --token cat"),
    ([], "what does 'it' draw on in 'The cat sat on the mat because it was tired.'?",
     "rollout The cat sat on the mat because it was tired. --token it"),
    # one cluster's rows: "cluster 3" is a group, "6 groups" a k; a new k or seed leaves the group it picked from
    (["clusters"], "what's in cluster 3?", "clusters --group 3"),
    (["clusters --k 6"], "and the biggest one?", "clusters --k 6 --group biggest"),
    (["clusters --k 6"], "list the texts in the smallest topic", "clusters --k 6 --group smallest"),
    (["clusters --k 4 --group 2"], "cluster them into 6 groups", "clusters --k 6"),
    (["clusters --group 2"], "split my texts into 4 clusters", "clusters --k 4"),
    # a term another command shares is no term of compare's routing, but what it means is compare's help
    ([], "what is mean pooling?", "help mean pooling"),
    (["compare A dog ran. | A cat ran."], "what is mean pooling?", "help mean pooling"),  # (no `--pool mean`)
    (["compare A dog ran. | A cat ran."], "what does cosine similarity mean?", "help cosine similarity"),
    (["mask Rome is the [MASK] of Italy."], "so what explains its top fill?",
     "mask Rome is the [MASK] of Italy. --why"),
    # "toy" and "too" wrap a follow-up; they are no texts
    (["selfattn Owls hunt at dusk."], "toy version with 2 heads", "selfattn Owls hunt at dusk. --heads 2"),
    (["syntax Owls hunt at dusk."], "show the attention maps too", "attend Owls hunt at dusk."),
    # a flag said off with two words between
    (["selfattn The dog slept. --causal"], "run the last command again with the causal flag turned off",
     "selfattn The dog slept."),
    # an adverb after "my corpus" is no corpus's name
    (["search late delivery"], "what are the main topics across my corpus overall?", "clusters"),
    # a quoted word of the texts pointed at is asked about, no third text for a command of two
    (["compare The cat sat. | A black cat sat."], "is it just the word 'black' making them similar?",
     "why The cat sat. | A black cat sat."),
    # which pooling suits two texts: every pooling side by side
    ([], "which pooling makes 'The cat sat.' and 'A kitten sat.' most similar?",
     "compare The cat sat. | A kitten sat. --pool all"),
    # back to an earlier command by its other name
    (["compare The cat sat. | A kitten sat.", "why The cat sat. | A kitten sat."],
     "go back to the similarity but at layer 1", "compare The cat sat. | A kitten sat. --layer 1"),
    # the choices of the last command
    (["mask The cat [MASK] on the mat."], "which strategies can I pick for that one", "help mask"),
    # a corpus named as "the NAME one" asked about
    (["corpus load a_reviews.csv --name amazon", "corpus"], "what's in the amazon one?", "corpus info amazon"),
    # after a comparison of two texts, what drives it is `why`
    (["compare Owls hunt. | Hawks hunt. --pool cls"], "break that cls score down token by token",
     "why Owls hunt. | Hawks hunt. --pool cls"),
    (["compare Owls hunt. | Hawks hunt."], "hm, that's high. what's driving it?", "why Owls hunt. | Hawks hunt."),
    (["compare Owls hunt. | Hawks hunt."], "what makes them similar at layer 2?",
     "why Owls hunt. | Hawks hunt. --layer 2"),
    # "one another" is no number
    (["probe"], "and how similar are the layers themselves to one another?", "cka"),
    # a range of rows is no count
    ([], "group rows 1-200 into clusters", "clusters --in 1-200"),
    (["compare Owls hunt. | Hawks hunt. --layer 3"], "what's driving it?", "why Owls hunt. | Hawks hunt. --layer 3"),
    # "those rows": the rows the last command ran on
    (["search broken screen --in 10-50"], "break those rows into 3 groups", "clusters --in 10-50 --k 3"),
    # a data file said alone
    ([], "I have a jsonl of sentence pairs with scores, data/pairs.jsonl — how well does the model correlate with it?",
     "benchmark --data data/pairs.jsonl"),
    # "the last command once more"
    (["clusters --k 5"], "the last command once more but with --k 20", "clusters --k 20"),
    # heads that track the syntax: `syntax`
    ([], "how well do the heads track the syntactic structure of Colorless green ideas sleep furiously.",
     "syntax Colorless green ideas sleep furiously."),
    # round 20 (fresh82 read): "explain that number" after a comparison of two
    (["compare I love dogs. | I adore puppies. --pool cls"], "explain that number",
     "why I love dogs. | I adore puppies. --pool cls"),
    # "in there": the corpus the line before named
    (["corpus load calls.csv --name calls", "corpus info calls"], "look for 'waiting on hold' in there",
     "search waiting on hold --corpus calls"),
    # "apply" opens a follow-up
    (["selfattn Time flies fast. --layer 4"], "apply the causal mask too",
     "selfattn Time flies fast. --layer 4 --causal"),
    # "same thing again"
    ([], "same thing again but drop the layer option", "again --layer default"),
    # the commands so far
    (["compare A cat. | A kitten.", "why A cat. | A kitten."], "show me the commands so far", "history"),
    # ", all layers": no layer kept from the command before
    (["selfattn The police is chasing a criminal. --layer 2"],
     "show me the model's own attention maps for that sentence, all layers",
     "attend The police is chasing a criminal."),
    # a word's neighbours; an aside after a comma is no word
    (["word bank | We sat on the river bank. | I deposited money at the bank."],
     "and what words are nearest to bank, regardless of context?", "neighbors bank"),
    # a flag said twice
    (["mask The [MASK] barked all night."], "what did the mask rely on? integrated gradients please",
     "mask The [MASK] barked all night. --why"),
    # after `why`, the texts' cosine itself is `compare`
    (["why A man plays guitar. | Someone is playing an instrument."], "and what's their cosine with max pooling?",
     "compare A man plays guitar. | Someone is playing an instrument. --pool max"),
    # "that model": the one the last line compared with
    (["compare Owls hunt. | Hawks hunt. --vs bert-base"], "ok let's switch to that model for good",
     "model bert-base"),
    # round 21 (fresh84 read): a question handed on to another command, on a second model
    (["why Owls hunt at night. | Hawks hunt by day."], "and what's their similarity on minilm:int8 side by side",
     "compare Owls hunt at night. | Hawks hunt by day. --vs minilm:int8"),
    # "that one" after a line that compared with one model
    (["compare Owls hunt. | Hawks hunt. --vs bert-base"], "ok switch to that one", "model bert-base"),
    # "that pooling": the previous command's
    (["compare Owls hunt. | Hawks hunt. --pool max"], "how does that pooling do on the whole STS-B benchmark?",
     "benchmark --pool max"),
    # "that corpus" right after the line that named it
    (["corpus info calls"], "draw that corpus as a map", "map --corpus calls"),
    # a verb after "in the corpus" names no corpus
    ([], "which texts in the corpus are closest to the sentence 'the food was cold'?", "search the food was cold"),
    # a count said last: "just 5"
    ([], 'closest tokens to "Paris" by cosine, just 5', "neighbors Paris --k 5"),
    # "does the same hold on ...": the previous command with what it changes
    (["probe --task dep"], "does the same hold on my calls corpus?", "probe --task dep --corpus calls"),
    # "ok now what does CLS ...": the question's own words are no text
    (["attend The police is chasing a criminal. --layer 6"], "ok now what does CLS end up drawing on via rollout?",
     "rollout The police is chasing a criminal."),
    # a blank typed as <mask> stays as typed (the commands take it; `mask` says how the model read it)
    ([], 'can you fill "The <mask> barked loudly." with bert-small',
     "mask The <mask> barked loudly. --model bert-small"),
    # round 22 (fresh89 read): a word said last before "pls" is the word
    ([], "similar words to embedding pls", "neighbors embedding"),
    # the last command again, said in other words
    ([], "do that last one over at layer 2 head 3", "again --layer 2 --head 3"),
    ([], "same as the previous command but cls pooling", "again --pool cls"),
    (["compare Owls hunt. | Hawks hunt."], "just run the previous command again, unchanged",
     "compare Owls hunt. | Hawks hunt."),
    # the corpus the line before loaded or named: "make this corpus the active one", "in there"
    (["corpus load calls.csv --name calls"], "make this corpus the active one", "corpus use calls"),
    (["clusters --corpus calls"], "which texts in there talk about 'slow wifi'?", "search slow wifi --corpus calls"),
    # what drove the top fill: `mask --why`
    (["mask I play [MASK] every weekend. --top 10"], "what drove the top fill?",
     "mask I play [MASK] every weekend. --top 10 --why"),
    # "zoom in on" wraps a follow-up
    (["attend The keys to the cabinet are here.", "syntax The keys to the cabinet are here."],
     "zoom in on layer 5 head 1", "attend The keys to the cabinet are here. --layer 5 --head 1"),
    # "do dog too" after `neighbors cat`
    (["neighbors cat --k 5"], "do dog too", "neighbors dog --k 5"),
    # a text left out, and an option changed with it
    (["compare I am happy | I am glad | The car is red"], "drop the last one and use max pooling",
     "compare I am happy | I am glad --pool max"),
    # "the first one vs 'X'": the other of two replaced
    (["compare Stocks fell. | Shares dropped."], "what about the first one vs 'The market crashed.' instead",
     "compare Stocks fell. | The market crashed."),
    # after a search, "how come #17 is the top hit?" is `why` of the query and that row
    (["search late delivery"], "how come #17 is the top hit?", "why late delivery | #17"),
    # round 23 (fresh91 read): "the same pair", "the same head" on another model
    (["compare Owls hunt. | Hawks hunt. --layer 3"], "what does bert-small give for the same pair at layer 3",
     "compare Owls hunt. | Hawks hunt. --layer 3 --vs bert-small"),
    (["attend I love Rome --layer 1 --head 1"], "the same head on bert-small as well",
     "attend I love Rome --layer 1 --head 1 --vs bert-small"),
    # "and which tokens does ...": the question's words are no text
    (["mask Rome is the [MASK] of Italy."], "and which tokens does the mask look at? show me the heads",
     "attend Rome is the [MASK] of Italy."),
    # "now compare the two of them" after `why`
    (["why Owls hunt. | Hawks hunt. --pool max"], "Now compare the two of them with cls pooling",
     "compare Owls hunt. | Hawks hunt. --pool cls"),
    # round 24 (fresh93 read): a row said again joins the texts once
    (["search late delivery", "why late delivery | #3"], "what's the raw similarity between the query and #3?",
     "compare late delivery | #3"),
    # "how close is the first one to 'X'": the other of two replaced
    (["compare The judge spoke. | The jury decided."], "how close is the first one to 'The lawyer signed.' then?",
     "compare The judge spoke. | The lawyer signed."),
    # round 25 (fresh94 read): "compare the attention with MODEL" is the last reply beside that model
    (["attend The river froze."], "compare the attention with bert-small", "attend The river froze. --vs bert-small"),
    # another command named beside another model: that command, side by side
    (["mask She drank the [MASK] slowly."], "logit lens on it, with bert-small alongside",
     "lens She drank the [MASK] slowly. --vs bert-small"),
    # "do the same for W": the previous command on a new word
    (["neighbors river"], "do the same for lake", "neighbors lake"),
    (["neighbors river"], "the same thing for lake please", "neighbors lake"),
    # the same words in another order around "and": two texts, not one phrase said twice
    ([], "whats the cosine between birds eat worms and worms eat birds", "compare birds eat worms | worms eat birds"),
    # the model's own attention, after its copy rebuilt by hand
    (["selfattn Snow fell overnight. --layer 3"],
     "what does the model's real attention look like for that sentence at layer 3?",
     "attend Snow fell overnight. --layer 3"),
    # "this model's representations": no word of the model's name
    ([], "how contextual are this model's representations?", "contextuality"),
    # "the reasons behind the top fill": mask's --why
    (["lens Cats are [MASK]."], "the final top predictions, with the reasons behind the top fill",
     "mask Cats are [MASK]. --why"),
    # "every layer", "vs attention": words that ask, before the text after "for"
    ([], "show head 2 in every layer for the old oak tree fell", "attend the old oak tree fell --head 2"),
    ([], "spacy parse vs attention for the horse raced past the barn", "syntax the horse raced past the barn"),
    # after a search, "how similar is the query to #4": compare the query and that row
    (["search late delivery"], "ok and how similar is the query to #4 overall?", "compare late delivery | #4"),
    # after `why`, "the plain cosine, no attribution": compare
    (["why The tea is hot. | The tea is warm."], "just the plain cosine for those, no attribution",
     "compare The tea is hot. | The tea is warm."),
    # "compare them" after another command of two texts: compare, not that command again
    (["embed Rain fell. | Snow fell."], "compare them", "compare Rain fell. | Snow fell."),
    # round 26 (fresh34 read): a hub model's name after "load", without its organisation
    ([], "load bert-large-cased", "model bert-large-cased"),
    # "show more, like 30": the count
    (["neighbors calm --space glove"], "show more, like 30", "neighbors calm --space glove --k 30"),
    # "let it choose how many": the count back to its default
    (["clusters --k 5"], "let it choose how many", "clusters"),
    # "top 4 per layer" after a typed text: the count, no "per" in the text
    ([], "lens Paris is the [MASK] of France. top 4 per layer", "lens Paris is the [MASK] of France. --top 4"),
    # "the raw vectors" of the previous texts
    (["compare A dog ran. | A cat ran."], "give me the raw vectors", "embed A dog ran. | A cat ran."),
    # "how contextual are A, B and C": the words listed
    ([], "how contextual are bank, light and play?", "contextuality bank | light | play"),
    # "try 'X' as the second sentence": the second replaced
    (["why He ate lunch. | He had a meal."], "try 'He ate dinner.' as the second sentence",
     "why He ate lunch. | He ate dinner."),
    # "does the model give 'w' different vectors" after `static`: the contextual model's side
    (["static bat | The bat flew. | He swung the bat."], "ok and does the model give 'bat' different vectors in those?",
     "word bat | The bat flew. | He swung the bat."),
])
def test_a_conversation_is_read_as_the_product_reads_it(hub, before, line, ran):
    """Lines read in a conversation by `reading.read_line`: texts after a colon, lines that point back, bare
    numbers, choices left out, corpora named last or pointed at."""
    from assistant.reading import read_line

    session = Session()
    for typed in before:
        session.remember(typed, Result(typed.split()[0], ""))
    assert read_line(line, session, hub, hub.settings).ran == ran


def test_how_two_commands_differ_is_the_first_ones_help_with_the_others_one_click_away(hub):
    """"How do probe and cka differ?" names two commands: the reply is `help probe`, says why, and offers `help cka`
    beside it (not one of them run on example sentences)."""
    from assistant.reading import read_line

    reading = read_line("how do probe and cka differ?", Session(), hub, hub.settings)
    assert reading.ran == "help probe" and reading.offered == ("help cka",)
    assert "(probe)" in reading.because and "(cka)" in reading.because


def test_each_row_is_ranked_by_its_most_similar_example_the_earliest_of_equals():
    from assistant.understanding.router import _Index

    rng = np.random.default_rng(7)
    for _ in range(50):
        owner = tuple(int(r) for r in rng.integers(0, 6, rng.integers(6, 200)))
        cosines = rng.integers(0, 5, len(owner)).astype(np.float32) / 4  # ties on purpose
        index = _Index.__new__(_Index)
        object.__setattr__(index, "owner", owner)
        want = [max(range(len(owner)), key=lambda i: (owner[i] == row, cosines[i], -i)) for row in sorted(set(owner))]
        assert list(index.nearest(cosines)) == want


def test_an_example_that_quotes_another_number_of_texts_than_the_question_is_further_from_it():
    from assistant.understanding.router import SHAPE_PENALTY, _Index

    index = _Index.__new__(_Index)
    object.__setattr__(index, "phrasings", ('is "X" in "X" the same as in "X"?', 'do "X" and "X" mean the same?',
                                            "what can you do?"))
    cosines = np.array([0.9, 0.8, 0.7], dtype=np.float32)
    assert np.allclose(index.shaped(cosines, 'does "X" mean the same as "X"?'), [0.9 - SHAPE_PENALTY, 0.8, 0.7])
    assert np.allclose(index.shaped(cosines, 'is "X" in "X" the same as in "X"?'), [0.9, 0.8 - SHAPE_PENALTY, 0.7])
    assert np.allclose(index.shaped(cosines, "what can you do"), cosines)  # no quotes: the shape says nothing


def test_routing_reads_full_precision_vectors_whatever_the_conversations_model(hub):
    from assistant.understanding import router

    lm = hub.get("minilm")
    assert router.routing_model(hub, "minilm") is lm
    assert lm.sentence_config() is not None
    # int8 kernels round differently on different CPUs: a conversation on the int8 path routes on full precision
    assert router.routing_model(hub, "minilm:int8") is lm
    question = "which heads look at the previous word in 'the cat sat on the mat'?"
    on_int8 = understand(question, Session(model="minilm:int8"), hub, TABLE, hub.settings)
    on_fp32 = understand(question, Session(model="minilm"), hub, TABLE, hub.settings)
    assert on_int8.line == on_fp32.line and on_int8.line.startswith("attend ")


# --- the JSON face -----------------------------------------------------------------------

def test_json_gains_interpreted_as_and_suggestions(run):
    data = run("How similar are 'a cat' and 'a dog'?").to_json()
    assert data["ok"] and data["interpreted_as"] == "compare a cat | a dog" and data["suggestions"] == []
    unclear = run("translate this to French").to_json()
    assert unclear["ok"] is False and unclear["interpreted_as"] is None and len(unclear["suggestions"]) >= 2


@pytest.mark.slow
def test_command_line_runs_a_question():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "assistant", "run", "How similar are 'a' and 'b'?", "--json"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["interpreted_as"] == "compare a | b" and data["command"] == "compare"
    assert data["tables"][0]["rows"]


def test_run_endpoint_answers_a_question(live_app):
    from gradio_client import Client

    data = Client(live_app, verbose=False).predict("what words are closest to 'king'?", "", api_name="/run")
    assert data["ok"] and data["interpreted_as"] == "neighbors king"
    assert data["tables"][0]["rows"]


def test_a_conversation_is_context_they_and_the_first_one_are_the_previous_texts(run):
    session = Session()
    assert run("compare The cat sat on the mat. | A kitten sat on the rug.", session).ok
    why = run("why are they similar?", session)  # starts with a command's name, reads as a question
    assert why.ok and why.interpreted_as == "why The cat sat on the mat. | A kitten sat on the rug."
    first = run("how does the first one get tokenized?", session)
    assert first.ok and first.interpreted_as == "tokenize The cat sat on the mat."
    alone = run("why are they similar?", Session())  # no earlier texts: it says what it needs
    assert not alone.ok


def test_a_conversation_refers_back_by_count_pronoun_name_and_row_id(hub, run):
    session = Session()
    assert run("compare The cat sat on the mat. | A kitten sat on the rug. | Stocks fell.", session).ok
    assert run("why?", session).interpreted_as == "why The cat sat on the mat. | A kitten sat on the rug."
    assert run("now show the attention", session).interpreted_as.startswith("attend The cat sat on the mat.")
    assert run("neighbors bank", session).ok
    assert run("give me 25 of them", session).interpreted_as == "neighbors bank --k 25"
    assert run("show those in glove space", session).interpreted_as == "neighbors bank --k 25 --space glove"
    said = run("tokenise this: I can't believe it", session)  # "it" after the colon is a text, not the last one
    assert said.interpreted_as == "tokenize I can't believe it"
    ids = understand("why is #3 so close to #17?", Session(), hub, TABLE, hub.settings)
    assert ids.line == "why #3 | #17"  # row ids are texts as written
    corpus = Session()
    assert run("corpus use reviews", corpus).ok  # a corpus command's text is a name, not a text to refer back to
    assert run("tell me about the reviews corpus", corpus).interpreted_as == "corpus info reviews"
    assert run("help project", corpus).ok
    assert not run("why?", corpus).ok  # `help`'s text is a command's name: no texts to explain


@pytest.mark.parametrize("question, line", [
    ("delete the reviews corpus", "corpus drop reviews"),
    ("switch to the tickets corpus", "corpus use tickets"),
    ("how is the encoding of the essays corpus going?", "corpus info essays"),
    ("which corpora have I loaded?", "corpus"),
    ("load tickets.jsonl using the body column and call it tickets",
     "corpus load tickets.jsonl --name tickets --column body"),
    ("find the complaints about late delivery", "search late delivery"),
    ("what options does project take?", "help project"),
])
def test_the_corpus_family_and_help_are_read_from_their_words(hub, question, line):
    assert understand(question, Session(), hub, TABLE, hub.settings).line == line


def test_a_close_call_runs_the_best_reading_and_offers_the_runner_up(hub, monkeypatch):
    from assistant.dispatch import execute
    from assistant.session import Session
    from assistant.understanding import router

    rows = [s for s in dict.fromkeys(TABLE.values()) if s.phrasings and s.name != "again"]
    lm = router.routing_model(hub, "minilm")
    close = "contrast 'A man is playing a guitar.' with 'A woman is slicing an onion.'"
    routing = router.route(lm, close, rows)
    # which questions are close calls moves as the router learns: make this one close by the margin it needs
    monkeypatch.setattr(router, "MIN_MARGIN", routing.margin + 0.01)
    assert not router.route(lm, close, rows).clear
    reply = execute(close, Session(), hub)
    assert reply.ok and reply.routed and reply.command == routing.best.spec.name
    assert reply.command in ("compare", "why", "word")
    assert len(reply.suggestions) == 1 and reply.suggestions[0].split()[0] == routing.ranked[1].spec.name
    assert not reply.suggestions[0].startswith(reply.command)
    assert "A woman is slicing an onion." in reply.suggestions[0]  # the other reading, with the same texts
    monkeypatch.setattr(router, "MIN_MARGIN", routing.margin - 0.005)  # the same question, a clear call: no offer
    assert router.route(lm, close, rows).clear and execute(close, Session(), hub).suggestions == ()


def test_a_follow_ups_close_call_offers_another_command_on_the_same_texts(hub, monkeypatch):
    """"what's their cosine?" after `compare`: the reading that ran is the comparison; the one offered beside it is
    another command on the conversation's texts, never the same command again on an example's texts."""
    from assistant.dispatch import execute
    from assistant.session import Session
    from assistant.understanding import router

    rows = [s for s in dict.fromkeys(TABLE.values()) if s.phrasings and s.name != "again"]
    lm = router.routing_model(hub, "minilm")
    question = "what's their cosine?"
    monkeypatch.setattr(router, "MIN_MARGIN", router.route(lm, question, rows).margin + 0.01)
    session = Session()
    assert execute("compare The cat sat. | A kitten sat.", session, hub).ok
    reply = execute(question, session, hub)
    assert reply.ok and reply.interpreted_as == "compare The cat sat. | A kitten sat."
    assert len(reply.suggestions) == 1 and not reply.suggestions[0].startswith("compare")
    assert reply.suggestions[0].endswith("The cat sat. | A kitten sat."), reply.suggestions


@pytest.mark.parametrize("question, line", [
    ("switch to bert base", "model bert-base"),  # a model's name, said with a space for its hyphen
    ("change the model to minilm int8", "model minilm:int8"),
    ("use the int8 version of minilm", "model minilm:int8"),  # int8 said before the name
    ("load reviews.csv as a corpus", "corpus load reviews.csv"),  # a file the question names
    ("fill in 'The [MASK] sat on the mat.' with bert-base", "mask The [MASK] sat on the mat. --model bert-base"),
    ("compare the layers of minilm with bert-small", "cka --with bert-small"),
    ("score minilm and bert-small on STS-B", "benchmark --models minilm,bert-small"),
    ("the ten biggest outliers of my corpus, each measured against 5 neighbours", "outliers --top 10 --k 5"),
    ("attention of 'the cat sat' in layer three, head two", "attend the cat sat --layer 3 --head 2"),
    # a second model named beside the conversation's (minilm) is the one side by side, wherever it stands
    ("which words sit next to 'Paris' in bert-small compared to minilm?", "neighbors Paris --vs bert-small"),
    ("is minilm more anisotropic than bert-base? show both", "contextuality --vs bert-base"),
    ("averaging the last four layers, is 'bank' the same in 'the river bank' and 'the bank loan'?",
     "word bank | the river bank | the bank loan --strategy mean-last4"),  # a strategy said with -ing
    ("use the quantized version of minilm from now on", "model minilm:int8"),
    ("the 5 strangest entries in my corpus", "outliers --top 5"),  # "entries" counts
    ("what does 'bank' look like at hidden state 0? embed it", "embed bank --layer 0"),
    ("what are river's nearest neighbours?", "neighbors river"),  # a possessive is the word
    ("which words are nearest to tea in the input embeddings", "neighbors tea"),  # the word, not the words after it
    ("explain the map command to me", "help map"),  # a command's name before another command's other name
    ("look through the reviews corpus for broken screens", "search broken screens --corpus reviews"),
    ("max-flow attention for: Birds fly south.", "rollout Birds fly south. --method flow"),
    ("how does each token of 'The bank was closed.' move from its static row to its contextual vector?",
     "project The bank was closed. --level tokens --basis vocab"),  # "its static row": the vocabulary basis
    ("attention rollout of 'The cat sat on the mat.' on minilm and bert-small",  # a quoted sentence is no model
     "rollout The cat sat on the mat. --vs bert-small"),
    ("what cosine does the int8 model give 'a cat' and 'a kitten'? show both",
     "compare a cat | a kitten --vs minilm:int8"),  # "the int8 model": the conversation's model's int8 path
])
def test_questions_with_options_and_models_in_words(hub, question, line):
    """Options a command declares and a question says count for that command; model names route as one."""
    assert understand(question, Session(), hub, TABLE, hub.settings).line == line


def test_a_follow_up_that_switches_models_is_model_and_new_texts_can_be_added_with_too(hub, run):
    session = Session()
    assert run("compare A cat sat. | A kitten sat.", session).ok
    assert understand("now switch to bert-small", session, hub, TABLE, hub.settings).line == "model bert-small"
    added = understand("now with 'a dog ran' too", session, hub, TABLE, hub.settings)
    assert added.follow_up and added.line == "compare A cat sat. | A kitten sat. | a dog ran"
    assert understand("and with every pooling", session, hub, TABLE, hub.settings).line == (
        "compare A cat sat. | A kitten sat. --pool all")


@pytest.mark.parametrize("before, question, line", [
    ("mask The [MASK] sat on the mat. --why", "without the attributions this time", "mask The [MASK] sat on the mat."),
    ("selfattn The cat sat on the mat --causal", "no causal mask this time", "selfattn The cat sat on the mat"),
    ("compare a cat | a dog", "run it again", "compare a cat | a dog"),
    ("project a cat | a dog | a bird --method pca", "switch to tsne", "project a cat | a dog | a bird --method tsne"),
    ("attend The cat sat on the mat", "rebuild its attention by hand", "selfattn The cat sat on the mat"),
    ("compare a cat | a dog", "go back to minilm", "model minilm"),
    ("mask The [MASK] sat on the mat.", "which words drove that prediction?", "mask The [MASK] sat on the mat. --why"),
    ("neighbors king", "what does glove say about it", "neighbors king --space glove"),
    ("duplicates", "lower it to 0.85", "duplicates --threshold 0.85"),  # a verb, a pronoun, a value
    ("tokenize Hello world", "pad it to 12", "tokenize Hello world --max-length 12 --padding max_length"),
    ("neighbors king", "try 15 instead", "neighbors king --k 15"),  # a bare number is the command's count
    ("mask The [MASK] sat on the mat.", "top 2 only", "mask The [MASK] sat on the mat. --top 2"),
    ("probe", "now with another seed, 5", "probe --seed 5"),
    ("attend The cat sat on the mat", "side by side with bert-base", "attend The cat sat on the mat --vs bert-base"),
    ("compare a | b --pool cls", "reset the pooling", "compare a | b"),  # back to an option's default
    ("compare a | b --layer 2", "back to the last layer", "compare a | b"),
    ("attend The cat sat on the mat --layer 1 --head 3", "go back to showing all layers",
     "attend The cat sat on the mat --head 3"),
    ("attend The cat sat on the mat --layer 2", "recompute that layer by hand from the query, key and value weights",
     "selfattn The cat sat on the mat --layer 2"),  # "that layer": the previous command's
    ("compare a cat | a dog", "does that change on the int8 model? show both",
     "compare a cat | a dog --vs minilm:int8"),
    ("search refund", "only among rows 1 to 500", "search refund --in 1-500"),  # row ids in words
    ("search refund", "just rows 1, 5 and 20-40", "search refund --in 1,5,20-40"),
    ("compare a | b", "show the 50 weirdest rows", "outliers --top 50"),  # a count said bare after "show"
    ("compare a | b", "which words sit near 'Paris' in GloVe? show 15", "neighbors Paris --k 15 --space glove"),
])
def test_a_follow_up_turns_flags_off_reruns_switches_and_points_back_with_its(hub, before, question, line):
    """In a conversation: "without"/"no" turn a flag of the last reply off, "run it again" reruns it, "switch to"
    changes its option, "its" points at its texts, and "go back to" a model switches the conversation's model."""
    session = Session()
    session.remember(before, Result(before.split()[0], ""))
    assert understand(question, session, hub, TABLE, hub.settings).line == line


@pytest.mark.parametrize("before, question, line", [
    ([], "how similar are rows 4 and 9", "compare #4 | #9"),  # two rows in words are two texts
    ([], "I want a scatter plot of 'Heavy snow closed the roads.' from the embedding layer",
     "project Heavy snow closed the roads. --layer 0"),  # the embedding layer is layer 0
    ([], "how many tokens are lost if 'The committee will meet.' is truncated at 4?",
     "tokenize The committee will meet. --max-length 4 --truncation"),  # a length and the flag, from one phrase
    ([], "I uploaded survey.tsv, the text is in the column \"answer\". load it",
     "corpus load survey.tsv --column answer"),
    (["compare I lost my wallet. | Someone stole my purse. --pool cls"], "which tokens are responsible for that score?",
     "why I lost my wallet. | Someone stole my purse. --pool cls"),  # another command keeps the shared settings
    (["attend The cat sat on the mat --layer 1 --head 3"], "rebuild that layer from its query/key/value weights",
     "selfattn The cat sat on the mat --layer 1"),  # ... but only the one the question names, when it names one
    (["search broken screen --k 5"], "what made #42 come up?", "why broken screen | #42"),  # a hit, and the query
    (["attend The boy kicked the ball."], "do any heads follow the syntax here?", "syntax The boy kicked the ball."),
    (["neighbors king"], "same for queen", "neighbors queen"),
    (["neighbors guitar --space glove"], "and for violin?", "neighbors violin --space glove"),
    (["word light | Turn on the light. | This box is light."], "ok and how similar are the two sentences overall?",
     "compare Turn on the light. | This box is light."),  # not a word to look up: a question about the texts
    (["benchmark --pool mean"], "add cls and max too", "benchmark --pool mean,cls,max"),  # a list grows
    (["benchmark --sample 300"], "include bert-small too", "benchmark --sample 300 --models minilm,bert-small"),
    (["corpus load reviews.csv --name reviews", "clusters"], "and a probe on the same corpus?",
     "probe --corpus reviews"),
    (["probe --sentences 60"], "on my reviews instead", "probe --sentences 60 --corpus reviews"),
    ([], "how anisotropic are the layers when measured on my reviews?", "contextuality --corpus reviews"),
    (["corpus use tickets", "search cannot log in"], "go back to reviews", "corpus use reviews"),
    (["project Apples are red. | Cars are fast. --level sentences"], "back to tokens",
     "project Apples are red. | Cars are fast. --level tokens"),  # another choice of the option it set
    (["compare Tea is healthy. | Green tea is good. --layer 3"], "drop the layer and use the default",
     "compare Tea is healthy. | Green tea is good."),
    (["project The bank of the river. | The bank raised its rates."], "switch that to 3d",
     "project The bank of the river. | The bank raised its rates. --dims 3"),  # a verb wrapped around an option
    (["embed The sun is hot."], "give me the layer 0 version", "embed The sun is hot. --layer 0"),
    (["outliers --top 10"], "measure against 3 neighbours", "outliers --top 10 --k 3"),
    (["mask The [MASK] sat on the mat. --top 10"], "which input tokens pushed it to that top fill?",
     "mask The [MASK] sat on the mat. --top 10 --why"),  # the same command keeps every setting, its count too
    (["benchmark --pool mean"], "run minilm and mpnet side by side", "benchmark --pool mean --models minilm,mpnet"),
    (["benchmark --sample 300"], "do that for minilm and mpnet", "benchmark --sample 300 --models minilm,mpnet"),
    (["word bat | The bat flew away. | He swung the bat."], "is it the same story for bert-base?",
     "word bat | The bat flew away. | He swung the bat. --vs bert-base"),
    (["corpus load big.csv --name big", "corpus load small.csv --name small"], "use the small one for now",
     "corpus use small"),
    (["vocab --n 3000"], "highlight the special tokens", "vocab --n 3000 --color special"),
    ([], "which layer knows parts of speech best, in minilm and in bert-small side by side?",
     "probe --task pos --vs bert-small"),
    ([], "I have my own pairs in pairs.csv, how well does the model correlate with my gold scores?",
     "benchmark --data pairs.csv"),
    ([], "why is row 15 so close to row 230?", "why #15 | #230"),  # rows said apart
    (["search leaking roof"], "explain why row 7 matched", "why leaking roof | #7"),
    (["search refund"], "only among rows 1 to 500", "search refund --in 1-500"),  # a range stays the rows to look in
    (["model mpnet"], "ok back to the default model", "model minilm"),
    (["attend The nurse helped the patient. --layer 2 --head 7"], "what options does this command take?",
     "help attend"),
])
def test_rows_hits_shared_settings_growing_lists_and_corpora_are_read_from_the_conversation(hub, before, question,
                                                                                            line):
    """Read from what came before: rows by id in words, a search hit with its query, the settings another command
    shares, a list option that grows, "the same corpus", "my reviews", another corpus to switch to."""
    session = Session()
    for typed in before:
        session.remember(typed, Result(typed.split()[0], ""))
    assert understand(question, session, hub, TABLE, hub.settings).line == line


@pytest.mark.parametrize("before, question, line", [
    # a change wrapped in filler words: the command's count, or an option named beside its number
    (["neighbors doctor --space glove"], "give me 30", "neighbors doctor --space glove --k 30"),
    (["lens The sky is [MASK]."], "show ten per layer", "lens The sky is [MASK]. --top 10"),
    (["vocab --color vowels"], "give me 500 of them", "vocab --color vowels --n 500"),
    (["contextuality --sentences 40"], "more sentences, say 150", "contextuality --sentences 150"),
    (["clusters --k 5"], "different seed please, 7", "clusters --k 5 --seed 7"),
    (["compare a cat | a dog"], "give me 30", None),  # compare has no count: not a change to it
    # after a switch of model, the command before it
    (["compare The soup is salty. | There is salt in the soup.", "model bert-base"],
     "and now the same comparison on this model", "compare The soup is salty. | There is salt in the soup."),
    # a word command's texts: "that word" is its word, "the two sentences" its sentences
    (["word bank | She works at the bank. | We fished from the bank."],
     "how contextual is that word across the layers?", "contextuality bank"),
    (["word light | Turn on the light. | This box is light."], "and how similar are the two sentences overall?",
     "compare Turn on the light. | This box is light."),
    (["static Run fast. | Jog quickly."], "which tokens make them close?", "why Run fast. | Jog quickly."),
    # a quoted word of the previous texts is followed through them; a quoted sentence joins them
    (["compare The pitch was wet. | Her pitch was perfect."], "does 'pitch' get the same vector in both of them?",
     "word pitch | The pitch was wet. | Her pitch was perfect."),
    (["tokenize I can't believe it's not butter!"], "compare that sentence with 'It is hard to believe.'",
     "compare I can't believe it's not butter! | It is hard to believe."),
    (["attend The lawyer questioned the witness."], "compare it with bert-base",
     "attend The lawyer questioned the witness. --vs bert-base"),
    (["search late delivery --corpus reviews"], "cluster that corpus", "clusters --corpus reviews"),
    (["attend The keys are on the table."], "and with attention flow?",
     "rollout The keys are on the table. --method flow"),
    (["attend I saw her duck. --layer 2"], "show all the layers again", "attend I saw her duck."),
    (["attend Every student passed. --layer 1"], "and the next layer?", "attend Every student passed. --layer 2"),
    (["neighbors king"], "what about queen", "neighbors queen"),  # a new word for a command that takes one first
    # "the last command" is the previous one, run again or changed
    (["compare A cat sat. | A kitten sat."], "run the last command again", "compare A cat sat. | A kitten sat."),
    (["attend The cat sat on the mat"], "repeat the last command, but layer 3 head 4",
     "attend The cat sat on the mat --layer 3 --head 4"),
    (["compare a | b --layer 4"], "rerun it with the layer option back to its default", "compare a | b"),
    (["mask Birds build [MASK] in trees."], "and the logit lens for the same sentence?",
     "lens Birds build [MASK] in trees."),
    (["project The car is red. | I like jazz. | The auto is crimson."],
     "can you plot those three as sentence points with umap?",
     "project The car is red. | I like jazz. | The auto is crimson. --level sentences --method umap"),
    (["compare The cat sat. | The dog sat."], "ok which tokens carry their similarity?",
     "why The cat sat. | The dog sat."),  # "ok" starts a sentence: no typo of `tok`
    (["neighbors king --space glove"], "same in glove", "neighbors king --space glove"),  # "same" is no word
    (["compare She smiled. | She grinned."], "show bert-base's score next to it",
     "compare She smiled. | She grinned. --vs bert-base"),
    (["compare The cat sat. | The dog sat.", "model bert-base"], "compare them again on this model",
     "compare The cat sat. | The dog sat."),
    (["compare The bark of the tree. | The dog's bark was loud."], "is the word bark the same vector in those two?",
     "word bark | The bark of the tree. | The dog's bark was loud."),
    # "my corpus" for a command that reads STS-B unless told: the corpus the conversation last named
    (["corpus load tweets.txt --name tweets"], "probe pos on those texts", "probe --corpus tweets --task pos"),
    (["probe --sentences 50"], "on my corpus instead", "probe --sentences 50 --corpus reviews"),
    # another command named beside new texts is a new question; "compare with MODEL" keeps the command
    (["clusters"], "now search for 'coupon code'", "search coupon code"),
    (["compare The delivery was late. | The courier was slow."], "now search my corpus for 'late courier'",
     "search late courier"),
    (["why A | B --pool max"], "compare with the int8 model", "why A | B --pool max --vs minilm:int8"),
    (["attend The pilot checked the weather. --layer 3"], "redo it with the default layer",
     "attend The pilot checked the weather."),
    (["search late train"], "run the same search again with k 3", "search late train --k 3"),
    (["map --method umap"], "show it on a map coloured by category", "map --method umap --color category"),
    # politeness before a rerun, "once more", a flag turned off after its name, the flag as typed
    (["attend The cat sat. --layer 2"], "can you rerun it without the layer setting", "attend The cat sat."),
    (["selfattn I think therefore I am --causal"], "please redo the last one but turn the causal mask off",
     "selfattn I think therefore I am"),
    (["attend The cat sat. --layer 2"], "once more, with head 9", "attend The cat sat. --layer 2 --head 9"),
    (["mask The [MASK] sat. --why"], "run it again without the --why", "mask The [MASK] sat."),
    (["compare a | b --pool cls"], "now rerun the last command with pooling back to default", "compare a | b"),
    # a corpus the conversation named, the lasso in words
    (["corpus load tickets.csv --name tickets"], "stop encoding tickets", "corpus stop tickets"),
    (["search battery drains too fast"], "only inside the area I lassoed",
     "search battery drains too fast --in selection"),
])
def test_a_follow_up_wrapped_in_words_after_a_switch_or_naming_a_word_changes_the_right_command(
        hub, before, question, line):
    """Follow-ups as people type them: the change is the only thing said besides filler ("give me 30"), a model
    switch does not end the conversation's thread, and a word command's texts are split into its word and its
    sentences for the command that takes one or the other."""
    from assistant.reading import read_line

    session = Session()
    for earlier in before:
        session.remember(earlier, Result(earlier.split()[0], ""))
    reading = read_line(question, session, hub, hub.settings)
    if line is None:
        assert reading.unclear is not None or not reading.ran.startswith("compare a cat | a dog --")
    else:
        assert reading.unclear is None and reading.ran == line


@pytest.mark.parametrize("question, line", [
    ("Spearman and F1 on my_sts.jsonl, two hundred pairs", "benchmark --sample 200 --data my_sts.jsonl"),
    ("t-SNE of the first 2,000 vocabulary embeddings", "vocab --n 2000 --method tsne"),
    ("I want TensorBoard Projector files for the model's vocabulary", "vocab"),  # "Ten" in "TensorBoard" is no number
    ("Kornblith CKA with the biassed estimator on 50 sentences", "cka --sentences 50 --estimator biased"),
    ("measure contextuality for the word play", "contextuality play"),
    ("load data/emails.parquet using the body column", "corpus load data/emails.parquet --column body"),
    ('load abstracts.parquet using the column "abstract" as the text',
     "corpus load abstracts.parquet --column abstract"),
    ("encode books.csv on my ray cluster at ray://10.0.0.5:10001",
     "corpus load books.csv --engine ray --address ray://10.0.0.5:10001"),
    ("change the model to the int8 minilm", "model minilm:int8"),
    ("compare every layer with every other layer, debiased estimator, thirty sentences",
     "cka --sentences 30 --estimator debiased"),
    ("compare minilm and mpnet on the STS benchmark", "benchmark --models minilm,mpnet"),
    ("Abnar & Zuidema rollout for 'The teacher praised the student.' compared with bert-small",
     "rollout The teacher praised the student. --vs bert-small"),
    ("what's the syntax for the corpus commands", "help corpus"),
    ("what corpora do I have?", "corpus"),
    # a corpus of the conversation named alone, where a name stands (not "find reviews about ...", "reviews.csv")
    ("dedupe check on reviews at 0.98", "duplicates --threshold 0.98 --corpus reviews"),
    ("show every row of reviews as points on one chart", "map --corpus reviews"),
    ("find reviews about late delivery", "search late delivery"),
    ("load reviews.csv", "corpus load reviews.csv"),
    ("paraphrase F1 when pairs with gold 3.5 or more count as paraphrases", "benchmark --threshold 3.5"),
    ("benchmark mpnet against minilm", "benchmark --models mpnet,minilm"),  # a command's name, then words
    ("show me examples for the benchmark command", "help benchmark"),
    ("cluster only what I selected on the map", "clusters --in selection"),
    ('look up "color faded" among rows 10,20,30-50, 5 results', "search color faded --k 5 --in 10,20,30-50"),
    ("word-in-context for light: 'The box is light.' / 'Turn on the light.' with seed 5",  # a hyphenated name
     "word light | The box is light. | Turn on the light. --seed 5"),
    ("show head 1 of the hand-rebuilt attention at layer 2 for 'Ants dig.'",  # a term, hyphenated
     "selfattn Ants dig. --layer 2 --head 1"),
    ("let's use the int8 fast path", "model int8"),
    ("redo that with top 3", "again --top 3"),  # of the commands that read as many options, the one that names them
    ("do the previous command again with --top 4", "again --top 4"),
    ("same thing as before, but with max pooling", "again --pool max"),
    ("does the tokenizer know the word zoomer? show me its tokens", "tokenize zoomer"),
    ("show how each token moves from its static to its contextual position in 'Owls hunt.'",
     "project Owls hunt. --level tokens --basis vocab"),
    ("how many subword pieces does unbelievably become", "tokenize unbelievably"),
    ("tea is hot vs tea is cold — how similar?", "compare tea is hot | tea is cold"),  # a dash before the question
])
def test_numbers_typos_terms_and_names_are_read_as_people_write_them(hub, question, line):
    """Numbers in words or with thousands separators, a measure's authors and names, a data file's path (no model's
    id), a quoted column name, a typo in a choice, and a line that starts with `compare` but asks another command."""
    from assistant.reading import read_line

    reading = read_line(question, Session(), hub, hub.settings)
    assert reading.unclear is None and reading.ran == line


def test_help_finds_the_command_named_in_its_text(hub):
    from assistant.dispatch import execute

    reply = execute("help with clusters pls", Session(), hub, hub.settings)
    assert reply.ok and "clusters [--k N|auto]" in reply.result.text
    assert "c-TF-IDF**: TF-IDF with each group's texts joined" in reply.result.text  # its terms, each with its meaning
    refused = execute("help nothing-like-this", Session(), hub, hub.settings)
    assert not refused.ok and "no command or term `nothing-like-this`; type `help`" in refused.error
    typo = execute("help mean poolng", Session(), hub, hub.settings)  # a term misspelt: the one meant, one click away
    assert not typo.ok and "did you mean `help mean pooling`?" in typo.error
    assert typo.suggestions == ("help mean pooling",)


def test_help_of_a_term_opens_with_its_meaning_then_its_commands_help(hub):
    from assistant.dispatch import execute

    reply = execute("help selectivity", Session(), hub, hub.settings)
    assert reply.ok and reply.result.text.startswith("**selectivity** (a term of `probe`): a probe's held-out accuracy "
                                                     "minus its accuracy on the control task")
    assert "Usage: `probe " in reply.result.text and "- **control task**: " in reply.result.text
    assert reply.result.text.count("**selectivity**") == 1  # (not again among the other terms)
    for spec in dict.fromkeys(TABLE.values()):
        for meaning in spec.meanings:  # each one asked for as a person writes it finds its command and meaning
            asked = understand(f"what is {meaning.term}?", Session(), hub, TABLE, hub.settings)
            assert asked.line == f"help {meaning.term}", asked
            text = execute(asked.line, Session(), hub, hub.settings).result.text
            if meaning.term.lower() == spec.name:  # `help probe`, `help CKA`: the command's help, the term in it
                assert text.startswith(f"**{spec.name}**") and f"- **{meaning.term}**: {meaning.text}" in text
            else:
                assert text.startswith(f"**{meaning.term}** (a term of `{spec.name}`): {meaning.text}")


def test_the_routing_index_is_kept_for_the_next_process_and_made_again_when_what_it_learnt_changes(
        hub, tmp_path, monkeypatch):
    from assistant.understanding import kept_index, router
    from assistant.understanding.examples import Example

    rows = (TABLE["history"], TABLE["export"], TABLE["outliers"])  # (three rows with the fewest asked questions)
    lm = router.routing_model(hub, "minilm")
    now = time.time()
    stale = [tmp_path / f"minilm-stale{i}.pickle" for i in range(kept_index.KEPT_INDEXES + 1)]
    for age, path in enumerate(stale):  # earlier clones' and libraries' indexes, none read for days
        path.write_bytes(b"an earlier index")
        os.utime(path, (now - 86400 * (2 + age),) * 2)
    made = router._Index.build(rows, lm, tmp_path)
    kept = [p for p in tmp_path.glob("*.pickle") if p not in stale]
    assert len(kept) == 1  # and the folder stays bounded: the least recently used go
    assert set(tmp_path.glob("*.pickle")) == {*kept, *stale[:kept_index.KEPT_INDEXES - 1]}
    asked = [(router.frame(e.question), rows.index(TABLE[e.command]))
             for e in examples(TABLE) if TABLE[e.command] in rows]
    learnt = list(zip(made.phrasings, made.owner))
    assert set(asked) <= set(learnt)  # every asked question for these rows is learnt beside the phrasings
    assert len(learnt) == len(set(learnt)) < len(asked)  # once each: a question asked again is one more vector
    monkeypatch.setattr(router, "embed", lambda *a, **_: pytest.fail("a kept index was embedded again"))
    read = router._Index.build(rows, lm, tmp_path)  # what the next process does: read, not made
    assert read.vectors.equal(made.vectors) and read.terms == made.terms and read.phrasings == made.phrasings
    question = "export the vectors of 'a cat' and 'a dog'"
    said = read.said(router.frame(question))
    assert read.probabilities(made.vectors[0], said).tolist() == made.probabilities(made.vectors[0], said).tolist()
    monkeypatch.undo()
    monkeypatch.setattr(router, "examples", lambda table: (*examples(table), Example("which texts stand out most?",
                                                                                       "outliers")))
    embedded: list[str] = []
    embed = router.embed
    monkeypatch.setattr(router, "embed", lambda model, texts, **_: embedded.extend(texts) or embed(model, texts))
    grown = router._Index.build(rows, lm, tmp_path)  # one more asked question: made again, kept beside the first
    assert len(grown.phrasings) == len(made.phrasings) + 1 and kept[0].is_file()  # kept beside the first
    assert embedded == [router.frame("which texts stand out most?")]  # only the new question is embedded
    assert grown.vectors[:len(made.phrasings)].equal(made.vectors)
    assert len(list(tmp_path.glob("*.pickle"))) == kept_index.KEPT_INDEXES
    kept[0].write_bytes(b"not a pickle")  # a damaged file is made again, not an error
    monkeypatch.undo()
    assert router._Index.build(rows, lm, tmp_path).vectors.equal(made.vectors)
    for vectors in tmp_path.glob("*.vectors"):
        vectors.write_bytes(b"not a pickle either")  # and so are the phrasing vectors
    kept[0].unlink()
    assert router._Index.build(rows, lm, tmp_path).vectors.allclose(made.vectors, atol=1e-6)


def test_a_process_making_a_routing_index_makes_the_next_one_wait_and_then_read_it(tmp_path):
    """Two servers or two test workers starting at once: the second waits on the folder's lock while the first makes
    the index (then reads its file) rather than making it again on the same cores."""
    import threading

    from assistant.understanding import kept_index

    order: list[str] = []
    inside, release = threading.Event(), threading.Event()

    def first() -> None:
        with kept_index.making(tmp_path / "router"):
            order.append("first made it")
            inside.set()
            release.wait(30)
            order.append("first wrote it")

    def second() -> None:
        with kept_index.making(tmp_path / "router"):  # another open file: flock makes it wait, as another process
            order.append("second read it")

    makers = [threading.Thread(target=first), threading.Thread(target=second)]
    makers[0].start()
    assert inside.wait(30)
    makers[1].start()
    makers[1].join(0.5)  # (it would be in by now without the lock)
    release.set()
    for maker in makers:
        maker.join(30)
    assert order == ["first made it", "first wrote it", "second read it"]
    with kept_index.making(None):  # no folder: nothing to wait on
        pass


def test_a_question_waiting_for_the_routing_index_shows_how_far_its_making_has_got(hub, tmp_path, monkeypatch):
    """A server makes the index in the background as it starts (about half a minute on 2 cores); a question asked
    meanwhile waits for that making, not a second one, and its progress bar says what is happening and how far it
    has got, as it does for a process that makes the index for its own first question."""
    import threading

    from assistant.understanding import making, router

    lm = router.routing_model(hub, "minilm")
    rows = (TABLE["history"], TABLE["export"], TABLE["outliers"])
    relayed, embed = threading.Event(), router.embed

    def embedding(model, texts, progress=None):  # the maker goes on once the waiting question has shown where it is
        if progress is not None:  # (the index's phrasings; the question itself is embedded once it is made)
            progress(0, len(texts))
            relayed.wait(20)
        return embed(model, texts, progress)

    monkeypatch.setattr(router, "embed", embedding)
    made: list = []
    maker = threading.Thread(target=lambda: made.append(router._index(lm, rows, tmp_path / "started")))
    maker.start()  # (the server's background making)
    told: list[tuple[float, str]] = []

    def shown(fraction: float, message: str) -> None:
        told.append((fraction, message))
        if message.endswith("examples embedded"):
            relayed.set()

    routing = router.route(lm, "which texts stand out most?", rows, tmp_path / "asked", progress=shown)
    maker.join(60)
    assert routing.best.spec.name == "outliers"
    assert router._index(lm, rows) is made[0]  # one index, made once
    assert not (tmp_path / "asked").exists()  # the waiting question made none of its own
    assert f"Learning to read questions: 0 of {len(made[0].phrasings):,} examples embedded" in [m for _, m in told]
    fractions = [f for f, _ in told]
    assert fractions == sorted(fractions) and 0 <= fractions[0] and fractions[-1] <= making.EMBEDDING_SHARE

    monkeypatch.undo()
    own: list[tuple[float, str]] = []  # a process making the index for its own first question (a one-shot CLI)
    index = router._index(lm, rows[:2], tmp_path / "cli", lambda fraction, message: own.append((fraction, message)))
    assert own[-2:] == [
        (making.EMBEDDING_SHARE, f"Learning to read questions: {len(index.phrasings):,} of {len(index.phrasings):,} "
                                 "examples embedded"),
        (making.EMBEDDING_SHARE, "Learning to read questions: fitting the classifier")]


def test_the_routers_word_weights_and_probabilities_are_scikit_learns_own(hub):
    """The router reads a question's TF-IDF row and the classifier's probabilities from the fitted objects' weights
    (their per-call checks cost more than the sums): they must stay what ``transform`` and ``predict_proba`` give."""
    import numpy as np

    from assistant.understanding import _routable, router

    lm = router.routing_model(hub, "minilm")
    index = router._index(lm, [s for s in _routable(TABLE) if s.phrasings])
    asked = [r["q"] for r in questions(LEARNT["tuning"])[::7]] + ["", "!!", "compare compare compare 'X'"]
    for question in asked:
        framed = router.frame(question)
        said, theirs = index.said(framed), index.words.transform([framed])
        row = np.zeros(theirs.shape[1])
        row[said.columns] = said.weights
        assert abs(row - theirs.toarray()[0]).max() < 1e-12, question
        vector = router.embed(lm, [framed])[0]
        expected = index.classifier.predict_proba(router._features(vector.numpy()[None], theirs))[0]
        # (the classifier's weights are float32: its own product and ours round apart by a millionth at most)
        np.testing.assert_allclose(index.probabilities(vector, said), expected, rtol=1e-5, atol=1e-9)
    # the phrasings were embedded in bulk: each is the vector a question of the same words gets
    for i in range(0, len(index.phrasings), 997):
        np.testing.assert_allclose(index.vectors[i], router.embed(lm, [index.phrasings[i]])[0], atol=1e-6)


@pytest.mark.parametrize("question, line, says", [
    ("what is the logit lens?", "help logit lens", "the masked-LM head applied to the [MASK] position"),  # (needs a
    ("what does selectivity mean?", "help selectivity", "accuracy minus its accuracy on the control task"),  # text)
    ("explain attention rollout", "help attention rollout", "mixed half and half"),  # (not `rollout explain`)
    ("what is integrated gradients?", "help integrated gradients", "along the straight path"),
    ("what does cosine similarity mean?", "help cosine similarity", "u·v / (|u| |v|)"),  # (no term of routing:
    ("what is mean pooling?", "help mean pooling", "the average of its token vectors"),  # `benchmark`, `compare`
    ("what are cls pooling and max pooling?", "help CLS pooling", "[CLS]"),  # share them; the first said
])
def test_a_question_asking_what_a_measure_means_gets_its_commands_help(run, question, line, says):
    reply = run(question)
    assert reply.ok and reply.interpreted_as == line and reply.routed
    assert says in reply.result.text.split("Usage:")[0]  # what it is, before the command's usage
    assert "Usage:" in reply.result.text and "Examples:" in reply.result.text  # and lines that would run it
    assert reply.read_because.startswith("it asks what `")


@pytest.mark.parametrize("question, line", [
    ("what are the outliers?", "outliers"),  # asks for them, not what they are
    ("what is the embedding matrix shape?", "model"),
    ("explain the similarity between the weather is lovely today and it is a beautiful sunny day",
     "why the weather is lovely today | it is a beautiful sunny day"),
])
def test_a_question_that_asks_for_a_measures_result_still_runs_it(hub, question, line):
    assert understand(question, Session(), hub, TABLE, hub.settings).line == line


def test_right_after_help_a_question_runs_the_command_or_term_it_showed(hub):
    session = Session()
    session.remember("compare A cat sat on the mat. | A kitten sat on the rug.", Result("compare", ""))
    assert understand("what is the logit lens?", session, hub, TABLE, hub.settings).line == "help logit lens"
    session.remember("attend The cat sat on the mat.", Result("attend", ""))  # (a term without a meaning: its result)
    assert understand("what's the dependency parse?", session, hub, TABLE, hub.settings).line \
        == "syntax The cat sat on the mat."
    session.remember("probe --sentences 20", Result("probe", ""))  # (the command before the help is not "it")
    assert understand("what does selectivity mean there?", session, hub, TABLE, hub.settings).line \
        == "help selectivity"
    session.remember("help CKA", Result("help", ""))
    shown = understand("show it for 30 sentences", session, hub, TABLE, hub.settings)
    assert shown.line == "cka --sentences 30" and shown.because == "it asks to run cka, whose help came just before"
    session.remember("help lens", Result("help", ""))
    tried = understand("try it", session, hub, TABLE, hub.settings)  # a command that needs a text: its examples
    assert tried.line is None
    assert tried.message.startswith("`lens` needs one text with one `[MASK]`: write it in quotes")
    assert tried.suggestions == TABLE["lens"].examples[:3]
