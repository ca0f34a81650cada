"""A tiny, complete BertForMaskedLM for the layer tests (random weights, its own small vocabulary)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

WORDS = ("the a cat dog sat on mat rug house car ran big small red blue and is was in of to it he she they man "
         "woman guitar playing river bank money book park").split()
MAX_LEN = 64


def build_tiny_mlm(folder: Path, seed: int = 0) -> None:
    """save_pretrained a 2-layer BertForMaskedLM and a WordPiece tokenizer into ``folder``."""
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    folder.mkdir(parents=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ","] + WORDS + ["##s", "##ed", "##ing"]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = BertTokenizerFast(vocab=str(folder / "vocab.txt"), model_max_length=MAX_LEN)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=MAX_LEN)
    BertForMaskedLM(config).save_pretrained(folder)
    tok.save_pretrained(folder)


@pytest.fixture(scope="module")
def tiny_mlm_hub(tmp_path_factory):
    """A hub as ASSISTANT_MODEL_ROOTS=<a folder holding tiny-mlm> would build it."""
    from tools.core.config import Settings
    from tools.models.hub import ModelHub

    root = tmp_path_factory.mktemp("layers-models")
    build_tiny_mlm(root / "tiny-mlm")
    return ModelHub(Settings(model_roots=str(root)))
