"""`mask`: fill-mask predictions from a complete masked-LM head only.

A tiny BertForMaskedLM (random weights, its own 35-token vocabulary) is built here,
saved with save_pretrained into a folder under ASSISTANT_MODEL_ROOTS and loaded
through the hub by name, as a user's local model would be.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from assistant.dispatch import execute
from assistant.session import Session
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.inspection.masking import ATTENTION_ROWS, MAX_MASKS, mask, masked_lm_head
from tools.models import loading as loading_module
from tools.models.hub import ModelHub

ROOT = Path(__file__).resolve().parents[1]
WORDS = "the a cat dog sat on mat rug house car ran big small red blue and is was in of to it he she they".split()
MAX_LEN = 32  # the tiny model's position limit, so "past the cut" is cheap to reach
WORD_STARTS = ["Ġmat", "Ġcar", "Ġhouse"]  # byte-level BPE tokens that begin a word


def build_tiny(folder: Path, mask_token: str = "[MASK]", seed: int = 0) -> None:
    """A random 2-layer BertForMaskedLM and a WordPiece tokenizer over a small vocabulary."""
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    folder.mkdir(parents=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", mask_token, ".", ","] + WORDS + ["##s", "##ed", "##ing"]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = BertTokenizerFast(vocab=str(folder / "vocab.txt"), mask_token=mask_token, model_max_length=MAX_LEN)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=MAX_LEN)
    BertForMaskedLM(config).save_pretrained(folder)
    tok.save_pretrained(folder)


def build_tiny_roberta(folder: Path) -> None:
    """A random RobertaForMaskedLM (head under `lm_head`) with a byte-level BPE trained here; mask `<mask>`."""
    from tokenizers import AddedToken, ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaForMaskedLM, RobertaTokenizerFast

    folder.mkdir(parents=True)
    bpe = ByteLevelBPETokenizer()
    corpus = ["The cat sat on the mat.", "A dog ran to the big red house.", "She sat in the small blue car."]
    bpe.train_from_iterator(corpus * 5, vocab_size=330, min_frequency=1,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.save_model(str(folder))
    merges = [tuple(line.split()) for line in (folder / "merges.txt").read_text().splitlines()
              if line and not line.startswith("#")]
    tok = RobertaTokenizerFast(vocab=json.loads((folder / "vocab.json").read_text()), merges=merges,
                               model_max_length=MAX_LEN - 2, mask_token=AddedToken("<mask>", lstrip=True))
    torch.manual_seed(2)
    config = RobertaConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=32, max_position_embeddings=MAX_LEN, pad_token_id=tok.pad_token_id,
                           bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    model = RobertaForMaskedLM(config)
    with torch.no_grad():  # a model that prefers three whole words, so word starts rank first
        model.lm_head.bias[tok.convert_tokens_to_ids(WORD_STARTS)] += 8.0
    model.save_pretrained(folder)
    tok.save_pretrained(folder)


@pytest.fixture(scope="module")
def model_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("model-root")
    build_tiny(root / "tiny-mlm")
    build_tiny(root / "tiny-angle", mask_token="<mask>", seed=1)
    build_tiny_roberta(root / "tiny-roberta")
    return root


@pytest.fixture(scope="module")
def tiny_hub(model_root) -> ModelHub:
    """A hub as ASSISTANT_MODEL_ROOTS=<root> ASSISTANT_MLM_MODEL=tiny-mlm would build it."""
    return ModelHub(Settings(model_roots=str(model_root), mlm_model="tiny-mlm"))


@pytest.fixture()
def offline(monkeypatch):
    """The hub is unreachable and nothing is cached: the fallback `bert-small` cannot load."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    real = loading_module.local_folder
    monkeypatch.setattr(loading_module, "local_folder", lambda s: None if s.kind == "hub" else real(s))


def direct_top(folder: Path, text: str, k: int) -> tuple[list[int], list[float]]:
    """Top-k non-special ids and probabilities at the first mask, straight from transformers."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    net = AutoModelForMaskedLM.from_pretrained(folder).eval()
    enc = tok(text, return_tensors="pt")
    with torch.no_grad():
        logits = net(**enc).logits[0]
    pos = int((enc["input_ids"][0] == tok.mask_token_id).nonzero()[0])
    probs = logits[pos].softmax(-1)
    probs[tok.all_special_ids] = -1
    values, ids = probs.topk(k)
    return ids.tolist(), values.tolist()


# --- predictions ---------------------------------------------------------------------------

def test_top_k_rows_are_the_models_own_probabilities_sorted(tiny_hub, model_root):
    text = "The [MASK] sat on the mat."
    result = mask(tiny_hub.get("tiny-mlm"), [text], top=7, hub=tiny_hub)
    table = result.table("mask 1")
    assert list(table.columns) == ["rank", "token", "probability", "sentence", "word piece", "id"]
    assert list(table["rank"]) == list(range(1, 8))
    probs = table["probability"].tolist()
    assert all(0.0 <= p <= 1.0 for p in probs) and probs == sorted(probs, reverse=True)
    assert sum(probs) <= 1.0
    ids, values = direct_top(model_root / "tiny-mlm", text, 7)
    assert table["id"].tolist() == ids
    assert probs == pytest.approx(values, rel=1e-5, abs=1e-7)
    assert not set(table["token"]) & {"[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]"}
    for row in table.to_dict("records"):
        assert "[MASK]" not in row["sentence"]
        piece = row["word piece"]
        assert piece == row["token"].startswith("##")
        expected = f"The{row['token'][2:]} sat" if piece else f"The {row['token']} sat"
        assert row["sentence"].startswith(expected), row["sentence"]
    assert result.model == "tiny-mlm" and result.settings["top"] == 7 and not result.warnings
    assert "tiny" in result.text and "mask 1" in result.text


def test_several_masks_each_on_its_own_and_a_greedy_joint_filling(tiny_hub):
    lm = tiny_hub.get("tiny-mlm")
    text = "The [MASK] sat on the [MASK] ."
    result = mask(lm, [text], top=4, hub=tiny_hub)
    first, second, joint = result.table("mask 1"), result.table("mask 2"), result.table("joint filling")
    assert len(first) == len(second) == 4
    assert all(s.endswith("the [MASK] .") for s in first["sentence"])  # the other mask stays as typed
    assert all(s.startswith("The [MASK] sat") for s in second["sentence"])
    assert joint["step"].tolist() == [1, 2]
    assert joint["token"][0] == first["token"][0]  # step 1 sees no fills yet
    assert "greedy, left to right" in result.text
    # step 2 is mask 2's best given mask 1 filled: the same as asking with mask 1 written in
    filled = mask(lm, [text.replace("[MASK]", joint["token"][0], 1)], top=1, hub=tiny_hub).table("mask 1")
    assert joint["token"][1] == filled["token"][0]
    assert joint["probability"][1] == pytest.approx(filled["probability"][0], rel=1e-5, abs=1e-7)
    assert "[MASK]" not in joint["sentence so far"].iloc[-1]
    assert result.settings["masks"] == 2


def test_own_mask_token_and_the_other_spelling_are_translated(tiny_hub):
    lm = tiny_hub.get("tiny-mlm")
    square = mask(lm, ["The [MASK] sat on the mat."], top=5, hub=tiny_hub)
    angle = mask(lm, ["The <mask> sat on the mat."], top=5, hub=tiny_hub)
    assert angle.table("mask 1")[["token", "probability"]].equals(square.table("mask 1")[["token", "probability"]])
    assert "`<mask>` was read as" in angle.text and "was read as" not in square.text
    # a model whose own mask token is <mask> takes [MASK] too, and keeps the typed spelling in sentences
    roberta_style = mask(tiny_hub.get("tiny-angle"), ["The [MASK] sat on the [mask] ."], top=3, hub=tiny_hub)
    assert roberta_style.settings["mask_token"] == "<mask>"
    assert len(roberta_style.table("mask 2")) == 3
    assert all(s.endswith("the [mask] .") for s in roberta_style.table("mask 1")["sentence"])


def test_roberta_style_model_fills_its_own_mask_and_places_word_starts(tiny_hub):
    lm = tiny_hub.get("tiny-roberta")
    result = mask(lm, ["The cat sat on the [MASK]."], top=20, hub=tiny_hub)
    assert result.settings["mask_token"] == "<mask>" and "`[MASK]` was read as" in result.text
    table = result.table("mask 1")
    assert len(table) == 20
    assert sorted(table["token"][:3]) == ["car", "house", "mat"] and not table["word piece"][:3].any()
    assert table["sentence"][:3].isin(["The cat sat on the mat.", "The cat sat on the car.",
                                       "The cat sat on the house."]).all()
    assert table["word piece"][3:].any()  # byte-level pieces follow, glued to the word before
    for row in table.to_dict("records"):
        raw = lm.tokenizer.convert_ids_to_tokens(row["id"])
        assert row["word piece"] == (not raw.startswith("Ġ"))
        glue = "" if row["word piece"] else " "
        assert row["sentence"] == f"The cat sat on the{glue}{row['token']}.", (raw, row["sentence"])


def test_attention_table_names_the_tokens_each_mask_attends_to_most(tiny_hub):
    result = mask(tiny_hub.get("tiny-mlm"), ["The [MASK] sat on the [MASK] ."], top=3, hub=tiny_hub)
    attn = result.table("attention")
    assert attn["mask"].value_counts().to_dict() == {1: ATTENTION_ROWS, 2: ATTENTION_ROWS}
    n_tokens = 9  # [CLS] the [MASK] sat on the [MASK] . [SEP]
    for _, rows in attn.groupby("mask"):
        weights = rows["attention"].tolist()
        assert weights == sorted(weights, reverse=True) and all(0 < w <= 1 for w in weights)
        assert rows["position"].between(0, n_tokens - 1).all()
        assert rows["position"].is_unique


def test_bar_chart_holds_every_candidate(tiny_hub):
    result = mask(tiny_hub.get("tiny-mlm"), ["The [MASK] sat on the [MASK] ."], top=6, hub=tiny_hub)
    spec = result.charts[0].chart.to_dict()
    values = next(iter(spec["datasets"].values()))
    assert spec["mark"]["type"] == "bar" and spec["encoding"]["x"]["field"] == "probability"
    assert len(values) == 12 and {v["mask"] for v in values} == {"mask 1", "mask 2"}
    assert spec["encoding"]["color"]["field"] == "mask"


# --- which model predicts ----------------------------------------------------------------------

def test_minilm_head_is_detected_missing_and_never_used(tiny_hub):
    minilm = tiny_hub.get("minilm")
    head = masked_lm_head(minilm)
    assert head.network is None and not head.usable
    assert any("cls.predictions" in k for k in head.missing)
    assert masked_lm_head(tiny_hub.get("tiny-mlm")).usable
    result = mask(minilm, ["The [MASK] sat on the mat."], top=3, hub=tiny_hub)  # falls back to tiny-mlm
    assert result.model == "tiny-mlm" and result.settings["fallback"] is True
    assert "minilm has no masked-LM head" in result.warnings[0] and "tiny-mlm" in result.warnings[0]
    direct = mask(tiny_hub.get("tiny-mlm"), ["The [MASK] sat on the mat."], top=3, hub=tiny_hub)
    assert result.table("mask 1").equals(direct.table("mask 1"))


def test_minilm_is_refused_and_no_prediction_shown_when_the_fallback_is_unreachable(lm, hub, run, offline):
    with pytest.raises(UserError) as caught:
        mask(lm, ["The [MASK] sat on the mat."], hub=hub)
    sentence = str(caught.value)
    assert sentence.startswith("`minilm` has no masked-LM head")
    assert "`bert-small` could not be loaded" in sentence
    assert "ASSISTANT_MODEL_ROOTS" in sentence and "ASSISTANT_MLM_MODEL" in sentence
    reply = run("mask The [MASK] sat on the mat.")
    assert not reply.ok and reply.result is None and reply.error == sentence
    assert reply.to_json()["tables"] == [] and reply.to_json()["charts"] == []


def test_explicit_model_without_a_head_is_refused(tiny_hub):
    with pytest.raises(UserError, match="cannot fill masks"):
        mask(tiny_hub.get("tiny-mlm"), ["The [MASK] sat."], mlm_model="minilm", hub=tiny_hub)


def test_local_folder_fallback_named_by_model_option(tiny_hub):
    reply = execute("mask The <mask> sat on the mat. --model tiny-angle --top 2", Session(), tiny_hub)
    assert reply.ok, reply.error
    assert reply.result.model == "tiny-angle" and len(reply.result.table("mask 1")) == 2


# --- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, top, words", [
    ("The cat sat on the mat.", 5, ["no mask", "[MASK]"]),
    (" ".join(["[MASK]"] * (MAX_MASKS + 1)), 5, ["11 masks", f"at most {MAX_MASKS}"]),
    ("The [MASK] sat.", 0, ["--top", "1 to 50"]),
    ("The [MASK] sat.", 51, ["--top", "1 to 50"]),
])
def test_bad_input_gets_one_sentence(tiny_hub, text, top, words):
    with pytest.raises(UserError) as caught:
        mask(tiny_hub.get("tiny-mlm"), [text], top=top, hub=tiny_hub)
    assert all(w in str(caught.value) for w in words), str(caught.value)


@pytest.mark.parametrize("line, words", [
    ("mask The cat sat on the mat.", ["no mask"]),
    ("mask " + " ".join(["[MASK]"] * 11), ["11 masks", "at most 10"]),
    ("mask The [MASK] sat. --top 0", ["--top", "1 to 50"]),
    ("mask The [MASK] sat. --top 51", ["--top", "1 to 50"]),
])
def test_bad_input_from_the_command_line(tiny_hub, line, words):
    reply = execute(line + " --model tiny-mlm", Session(), tiny_hub)
    assert not reply.ok and all(w in reply.error for w in words), reply.error


def test_mask_past_the_models_limit_is_reported(tiny_hub):
    lm = tiny_hub.get("tiny-mlm")
    long = " ".join(["the cat sat on the mat ."] * 6)  # 42 words, past the 32-token limit
    with pytest.raises(UserError) as caught:
        mask(lm, [long + " the [MASK] ."], hub=tiny_hub)
    assert "past the cut" in str(caught.value) and "32" in str(caught.value)
    kept = mask(lm, ["the [MASK] sat . " + long], top=3, hub=tiny_hub)  # the mask is before the cut
    assert "read only the first 32" in kept.warnings[0]
    partly = mask(lm, ["the [MASK] sat . " + long + " [MASK]"], top=3, hub=tiny_hub)
    assert "past the cut" in partly.warnings[0] and "1 of 2 masks" in partly.warnings[0]
    assert [t.name for t in partly.tables] == ["mask 1", "attention"]


# --- one result, three faces --------------------------------------------------------------------

def _comparable(payload: dict) -> dict:
    """The result itself: the timing and the conversation's reading of the line are not the tool's."""
    return {k: v for k, v in payload.items() if k not in ("elapsed_ms", "interpreted_as", "suggestions")}


@pytest.mark.slow
def test_python_run_handler_and_command_line_agree(tiny_hub, model_root):
    text = "The [MASK] sat on the <mask> ."
    python = mask(tiny_hub.get("minilm"), [text], top=4, mlm_model="tiny-mlm", fallback="tiny-mlm",
                  hub=tiny_hub).to_json()
    handler = execute(f"mask {text} --top 4 --model tiny-mlm", Session(), tiny_hub).to_json()
    env = {**os.environ, "ASSISTANT_MODEL_ROOTS": str(model_root), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "assistant", "run", f"mask {text} --top 4 --model tiny-mlm",
                           "--json"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    cli = json.loads(done.stdout)
    assert python["ok"] and python["model"] == "tiny-mlm"
    assert _comparable(handler) == _comparable(python)
    assert _comparable(cli) == _comparable(python)
    assert handler["interpreted_as"] == cli["interpreted_as"] == f"mask {text} --top 4 --model tiny-mlm"



def test_every_mask_example_in_help_answers_where_a_masked_lm_model_is_at_hand(tiny_hub):
    """The page test runs every other example; `mask` needs a masked-LM model, which only the tests build here.
    An example naming a hub model (``--model bert-small``) gets the one offline sentence, never a traceback."""
    from assistant.commands.registry import TABLE

    for line in TABLE["mask"].examples:
        reply = execute(line, Session(), tiny_hub, tiny_hub.settings)
        if "--model " in line:
            assert not reply.ok and "bert-small" in reply.error and "\n" not in reply.error.strip(), reply.error
            assert "Traceback" not in reply.error
            continue
        assert reply.ok, (line, reply.error)
        assert reply.result.model == "tiny-mlm"  # MiniLM has no masked-LM head: the fallback answered
        assert reply.result.tables and reply.result.tables[0].frame.shape[0] >= 1
        if "--why" in line:
            assert "contribution" in reply.result.table("why").columns
