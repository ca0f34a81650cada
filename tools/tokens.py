"""Tokenization views: word pieces, special tokens, padding, truncation and pairs."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from tools import charts
from tools.core.errors import UserError
from tools.core.results import Chart, Result, Table
from tools.core.timing import timed
from tools.models.hub import LoadedModel, as_model

PADDING = ("longest", "max_length")


@timed("tokenize")
def tokenize(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    max_length: int | None = None,
    padding: str | None = None,
    truncation: bool = False,
) -> Result:
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
    frame = pd.DataFrame(rows)
    kept = sum(1 for r in rows if r["kind"] != "padding")
    dropped = len(full["input_ids"]) - kept
    warnings = []
    if dropped > 0:
        warnings.append(f"Truncation at {limit} tokens dropped {dropped} of {len(full['input_ids'])} tokens.")
    elif len(full["input_ids"]) > lm.max_tokens:
        warnings.append(
            f"This input has {len(full['input_ids'])} tokens but {lm.name} reads at most {lm.max_tokens}; "
            "add --truncation to see what it keeps."
        )
    decoded = tok.decode(ids, skip_special_tokens=True)
    with_specials = tok.decode([i for i, r in zip(ids, rows) if r["kind"] != "padding"])
    source = texts[0] if pair is None else f"{texts[0]} {pair}"
    lossless = decoded == source
    round_trip = pd.DataFrame({
        "form": ["input", "decoded (special tokens skipped)", "decoded (with special tokens)"],
        "text": [source if pair is None else f"{texts[0]} | {pair}", decoded, with_specials],
    })
    n_pieces = int(frame["word piece"].sum())
    n_special = int(frame["special"].sum())
    text = (
        f"**{len(rows)} tokens** ({kept - n_special} from the text, {n_pieces} of them word pieces, "
        f"{n_special} special{', ' + str(len(rows) - kept) + ' padding' if len(rows) > kept else ''})"
        f"{' for the pair' if pair else ''}. "
        + ("The decoded text matches the input exactly." if lossless else
           "Decoding does not give back the input exactly (see the round-trip table: "
           f"{lm.name}'s tokenizer normalises case, accents or spacing).")
    )
    chart_frame = frame.assign(text="A" if pair is None else frame["segment"].replace("", "special"))
    chart_frame = chart_frame.head(charts.MAX_ROWS)
    if pair is None:
        chart_frame = chart_frame.assign(text="text")
    return Result(
        command="tokenize",
        text=text,
        tables=[Table("tokens", frame.drop(columns=["kind"])), Table("round trip", round_trip)],
        charts=[Chart("tokens", charts.token_strip(chart_frame[chart_frame["position"] < 200],
                                                   title="Tokens (first 200)" if len(frame) > 200 else "Tokens"))],
        warnings=warnings,
        model=lm.name,
        settings={"max_length": max_length, "padding": padding, "truncation": truncation},
    )
