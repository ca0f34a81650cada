"""Tokenization views: word pieces, special tokens, padding, truncation and pairs."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from tools.core.errors import UserError
from tools.core.timing import answer
from tools.encoding import unknown
from tools.inspection import replies
from tools.inspection.facts import Padding, Tokens
from tools.models.hub import LoadedModel, as_model

PADDING = tuple(p.value for p in Padding)


def tokenization(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    max_length: int | None = None,
    padding: str | None = None,
    truncation: bool = False,
) -> Tokens:
    """One row per token of a text, or of a pair of texts encoded as a pair.

    Args:
        model: a loaded model or its name.
        texts: one text, or two texts that are encoded as a sentence pair.
        max_length: the length that padding pads to and truncation cuts at
            (default: the model's limit).
        padding: ``longest`` or ``max_length``.
        truncation: cut the input at ``max_length``.
    """
    lm = as_model(model)
    if not 1 <= len(texts) <= 2:
        raise UserError(f"`tokenize` takes one text or a pair `a | b`; got {len(texts)} texts.")
    if padding is not None and padding not in PADDING:
        raise UserError(f"Unknown --padding `{padding}`; use longest or max_length.")
    if max_length is not None and not 1 <= max_length <= lm.max_tokens:
        raise UserError(f"--max-length must be between 1 and {lm.max_tokens} (the model's limit); got {max_length}.")
    tok = lm.tokenizer
    pair = texts[1] if len(texts) == 2 else None
    full = tok(texts[0], pair, truncation=False)
    limit = max_length or lm.max_tokens
    enc = tok(
        texts[0], pair,
        truncation=truncation or None,
        max_length=limit if (truncation or padding == "max_length") else None,
        padding=padding or False,
        return_special_tokens_mask=True,
        return_offsets_mapping=True,
    )
    ids = enc["input_ids"]
    tokens = tok.convert_ids_to_tokens(ids)
    word_ids = enc.word_ids()
    seq_ids = enc.sequence_ids()
    type_ids = enc.get("token_type_ids", [0] * len(ids))
    rows = []
    prev_word: tuple[int | None, int | None] = (None, None)
    for i, (tid, token) in enumerate(zip(ids, tokens)):
        special = bool(enc["special_tokens_mask"][i])
        pad = tid == tok.pad_token_id and not enc["attention_mask"][i]
        word = (seq_ids[i], word_ids[i])
        piece = not special and word_ids[i] is not None and word == prev_word
        prev_word = word if word_ids[i] is not None else (None, None)
        rows.append({
            "position": i,
            "token": token,
            "id": int(tid),
            "word piece": piece,
            "special": special,
            "attention mask": int(enc["attention_mask"][i]),
            "token type": int(type_ids[i]),
            "segment": "" if seq_ids[i] is None else "AB"[seq_ids[i]],
            "kind": "padding" if pad else "special" if special else "word piece" if piece else "word",
        })
    offsets = [tuple(o) for o in enc["offset_mapping"]]
    unknown.note(lm, texts[0], ids, offsets, pair, seq_ids)
    unseen = unknown.look(lm, texts[0], ids, offsets, pair, seq_ids)
    decoded = tok.decode(ids, skip_special_tokens=True)
    with_specials = tok.decode([i for i, r in zip(ids, rows) if r["kind"] != "padding"])
    return Tokens(lm.name, tuple(texts), pd.DataFrame(rows), decoded, with_specials, len(full["input_ids"]),
                  limit, lm.max_tokens, max_length, padding, truncation, unseen)


#: The one-call tool: :func:`tokenization` answered as a Result by the family's formatter.
tokenize = answer(tokenization, replies.tokenize, "tokenize")
