"""`tokenize` and `model` on the real packaged model."""

from __future__ import annotations

from tools.inspection import info, tokens


def test_word_pieces_specials_and_round_trip(lm):
    result = tokens.tokenize(lm, ["BERT provides contextual embeddings."])
    frame = result.table("tokens")
    assert list(frame["token"]) == ["[CLS]", "bert", "provides", "context", "##ual", "em", "##bed",
                                    "##ding", "##s", ".", "[SEP]"]
    assert list(frame["word piece"]) == [False, False, False, False, True, False, True, True, True, False, False]
    assert frame["special"].tolist()[0] and frame["special"].tolist()[-1]
    assert list(frame["position"]) == list(range(11))
    assert frame["id"][0] == lm.tokenizer.cls_token_id
    round_trip = result.table("round trip")
    assert round_trip["text"][1] == "bert provides contextual embeddings."
    assert "does not give back the input exactly" in result.text  # the model lower-cases


def test_pairs_use_the_tokenizers_pair_encoding(lm):
    result = tokens.tokenize(lm, ["Where is the bank?", "By the river."])
    frame = result.table("tokens")
    assert frame["token"].tolist().count("[SEP]") == 2
    sep = frame.index[frame["token"] == "[SEP]"][0]
    assert set(frame["token type"][: sep + 1]) == {0}
    assert set(frame["token type"][sep + 1:]) == {1}
    assert frame["segment"][1] == "A" and frame["segment"][sep + 1] == "B"


def test_truncation_reports_the_dropped_tokens(lm):
    result = tokens.tokenize(lm, ["one two three four five six seven eight nine ten"], max_length=6,
                             truncation=True)
    assert len(result.table("tokens")) == 6
    assert result.warnings == ["Truncation at 6 tokens dropped 6 of 12 tokens."]


def test_long_input_without_truncation_is_warned_about(lm):
    result = tokens.tokenize(lm, ["word " * 600])
    assert "reads at most 512" in result.warnings[0]


def test_padding_to_max_length_adds_masked_positions(lm):
    frame = tokens.tokenize(lm, ["short"], max_length=8, padding="max_length").table("tokens")
    assert len(frame) == 8
    assert frame["attention mask"].tolist() == [1, 1, 1, 0, 0, 0, 0, 0]
    assert frame["token"].tolist()[-1] == "[PAD]"


def test_token_chart_has_one_mark_per_token(lm):
    result = tokens.tokenize(lm, ["A cat."])
    spec = result.charts[0].chart.to_dict()
    (values,) = [d for d in spec["datasets"].values()]
    assert [v["token"] for v in values] == ["[CLS]", "a", "cat", ".", "[SEP]"]


def test_model_facts(lm):
    result = info.describe(lm)
    facts = dict(zip(result.table("model")["property"], result.table("model")["value"]))
    assert facts["layers"] == "6" and facts["attention heads"] == "12" and facts["hidden size"] == "384"
    assert facts["vocabulary size"] == "30522" and facts["input-embedding matrix"] == "30522 x 384"
    assert facts["parameters"] == str(sum(p.numel() for p in lm.encoder.parameters()))
    assert facts["max positions"] == "512" and facts["device"] == "cpu"
    assert facts["loaded from"].startswith("embedded: ")
    groups = result.table("parameters")
    assert groups["parameters"].sum() == int(facts["parameters"])


def test_model_switch_keeps_the_conversation_model_on_failure(run):
    from assistant.session import Session

    session = Session()
    assert run("model minilm", session).ok and session.model == "minilm"
    for bad in ("http://evil.example/model", "../../etc", "/etc", "no_such_org/no-such-model-xyz"):
        reply = run(f"model {bad}", session)
        assert not reply.ok and session.model == "minilm", bad
    assert "URL" in run("model https://huggingface.co/bert-base-uncased", session).error
    assert "may not contain `..`" in run("model ../secret", session).error
    assert "outside the allowed model folders" in run("model /etc", session).error
    assert "works offline" in run("model no_such_org/no-such-model-xyz", session).error
    assert run("compare a | b", session).ok


def test_model_int8_switches_the_conversation_to_its_own_models_fast_path(run):
    from assistant.session import Session

    session = Session(model="minilm")
    reply = run("switch to the int8 model", session)
    assert reply.ok and reply.interpreted_as == "model int8" and session.model == "minilm:int8"
    assert reply.result.text.startswith("Switched this conversation to **minilm:int8**")
    assert run("model int8", session).ok and session.model == "minilm:int8"  # already there: stays
