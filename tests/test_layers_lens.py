"""`lens`: the logit lens reads the model's own complete masked-LM head at every layer, and refuses a
model without one (the embedded MiniLM) rather than read a random head."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.downloads import csv_names
from tools.core.errors import UserError
from tools.inspection.masking import mask
from tools.layers.lens import lens, logit_lens

TEXT = "the man sat on the [MASK] ."


def test_minilm_is_refused_with_the_reason_and_no_predictions(lm):
    with pytest.raises(UserError) as caught:
        logit_lens(lm, ["The cat sat on the [MASK]."])
    message = str(caught.value)
    assert "masked-LM head" in message and "random" in message and "minilm" in message


def test_a_missing_head_is_known_from_the_checkpoints_weight_names_before_any_head_is_loaded(tiny_mlm_hub):
    from tools.core.config import Settings
    from tools.models.hub import ModelHub
    from tools.models.mlm_head import head_known_missing, loaded_head, masked_lm_head

    minilm = ModelHub(Settings()).get("minilm")  # a hub of its own: no head loaded by another test
    assert loaded_head(minilm) is None and head_known_missing(minilm)  # so `lens` is not suggested on it
    assert not masked_lm_head(minilm).usable  # as loading it finds
    tiny = ModelHub(tiny_mlm_hub.settings).get("tiny-mlm")  # saved by BertForMaskedLM: `cls.predictions` weights
    assert loaded_head(tiny) is None and not head_known_missing(tiny)


def direct(folder_lm, text):
    """The network's own logits and hidden states, straight from transformers."""
    from transformers import AutoModelForMaskedLM

    net = AutoModelForMaskedLM.from_pretrained(folder_lm.source.location).eval()
    enc = folder_lm.tokenizer(text.replace("[MASK]", folder_lm.tokenizer.mask_token), return_tensors="pt")
    with torch.no_grad():
        out = net(**enc, output_hidden_states=True)
    pos = int((enc["input_ids"][0] == folder_lm.tokenizer.mask_token_id).nonzero()[0])
    return net, out, pos


def test_the_last_layer_is_the_models_own_fill_mask(tiny_mlm_hub):
    tiny = tiny_mlm_hub.get("tiny-mlm")
    f = logit_lens(tiny, [TEXT], top=4)
    filled = mask(tiny, [TEXT], top=4, hub=tiny_mlm_hub).table("mask 1")
    assert f.answer_id == int(filled["id"][0])
    assert list(f.ids[-1]) == filled["id"].tolist()
    np.testing.assert_allclose(f.probabilities[-1], filled["probability"], rtol=1e-5)
    assert f.answer_rank[-1] == 1
    net, out, pos = direct(tiny, TEXT)
    probs = out.logits[0, pos].softmax(-1).numpy()
    np.testing.assert_allclose(f.answer_probability[-1], probs[f.answer_id], rtol=1e-5)


def test_every_layer_applies_the_same_head_to_that_layers_hidden_state(tiny_mlm_hub):
    tiny = tiny_mlm_hub.get("tiny-mlm")
    f = logit_lens(tiny, [TEXT], top=3)
    net, out, pos = direct(tiny, TEXT)
    special = set(tiny.tokenizer.all_special_ids)
    for layer, hidden in enumerate(out.hidden_states):
        with torch.no_grad():
            probs = net.cls(hidden[0, pos]).softmax(-1).numpy()
        ranked = [int(i) for i in np.argsort(-probs, kind="stable") if int(i) not in special]
        assert list(f.ids[layer]) == ranked[:3]
        np.testing.assert_allclose(f.probabilities[layer], probs[ranked[:3]], rtol=1e-5)
        assert f.answer_rank[layer] == ranked.index(f.answer_id) + 1


def test_the_reply_states_the_definition_and_offers_csvs(tiny_mlm_hub):
    result = lens(tiny_mlm_hub.get("tiny-mlm"), [TEXT])
    first = result.text.split(". ")[0]
    assert "logit lens" in first and "masked-LM head" in first and "every layer" in first
    assert result.table("lens by layer").shape[0] == 3
    assert csv_names(result) == ["lens-1-lens-by-layer.csv", "lens-2-lens-candidates.csv"]  # each table, once
    spec = result.charts[0].chart.to_dict()
    assert sum(len(v) for v in spec["datasets"].values()) == 3


@pytest.mark.parametrize("text, top, match", [
    ("the [MASK] sat on the [MASK] .", 5, "one mask"),
    ("the man sat .", 5, "one mask"),
    (TEXT, 0, "from 1 to 20"),
])
def test_bad_requests_get_a_sentence(tiny_mlm_hub, text, top, match):
    with pytest.raises(UserError, match=match):
        logit_lens(tiny_mlm_hub.get("tiny-mlm"), [text], top=top)
