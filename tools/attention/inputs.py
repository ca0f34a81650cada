"""What the attention commands share: checking their input, encoding it with attentions,
and labelling its tokens (the downloads are packed in :mod:`~tools.attention.replies`).

Layers and heads are numbered from 1 (see the package docstring).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tools.core.errors import UserError
from tools.encoding.encode import Encoded, encode
from tools.models.hub import LoadedModel

# --- validation --------------------------------------------------------------------------

def check_attention_layer(lm: LoadedModel, layer: int | None) -> int | None:
    """Validate a 1-based attention layer number (None stays None)."""
    if layer is not None and not 1 <= layer <= lm.num_layers:
        raise UserError(
            f"--layer {layer} is out of range: {lm.name} has attention layers 1 to {lm.num_layers} "
            "(numbered from 1)."
        )
    return layer


def check_head(lm: LoadedModel, head: int | None) -> int | None:
    """Validate a 1-based head number (None stays None)."""
    if head is not None and not 1 <= head <= lm.num_heads:
        raise UserError(
            f"--head {head} is out of range: {lm.name} has heads 1 to {lm.num_heads} in each layer "
            "(numbered from 1)."
        )
    return head


def check_text(texts: Sequence[str], verb: str, most: int = 2) -> None:
    """One non-blank text (or a pair when ``most`` is 2)."""
    if not 1 <= len(texts) <= most:
        shape = "one text or a pair `a | b`" if most == 2 else "one text"
        raise UserError(f"`{verb}` takes {shape}; got {len(texts)} texts.")
    for i, t in enumerate(texts):
        if not t.strip():
            raise UserError(f"Text {i + 1} is empty: give `{verb}` a sentence, like `{verb} The cat sat on the mat`.")


def encode_one(lm: LoadedModel, texts: Sequence[str]) -> tuple[Encoded, list[str]]:
    """Encode one text (or pair) with attentions; a truncation warning when it was cut."""
    pair = [texts[1]] if len(texts) == 2 else None
    enc = encode(lm, [texts[0]], pair, attentions=True)[0]
    if enc.attentions is None or enc.attentions.numel() == 0:
        raise UserError(f"{lm.name} returned no attention weights; load a BERT-style model with eager attention.")
    warnings = []
    if enc.dropped:
        warnings.append(
            f"The input was truncated to {lm.max_tokens} tokens ({lm.name}'s limit): {enc.dropped} tokens "
            "at the end were dropped and are not in the attention maps."
        )
    return enc, warnings


# --- token positions and labels -------------------------------------------------------------

@dataclass(frozen=True)
class Positions:
    """Where the special tokens are: ``cls`` and ``sep`` positions, and every text token."""

    cls: list[int]
    sep: list[int]
    text: list[int]


def positions(lm: LoadedModel, enc: Encoded) -> Positions:
    """Find [CLS]/[SEP] (or <s>/</s>) and the text tokens of an encoding."""
    tok = lm.tokenizer
    cls_id = tok.cls_token_id if tok.cls_token_id is not None else tok.bos_token_id
    sep_id = tok.sep_token_id if tok.sep_token_id is not None else tok.eos_token_id
    ids = [int(i) for i in enc.input_ids]
    return Positions(
        cls=[i for i, t in enumerate(ids) if t == cls_id],
        sep=[i for i, t in enumerate(ids) if t == sep_id],
        text=[i for i, s in enumerate(enc.sequence_ids) if s is not None],
    )


def segments(enc: Encoded) -> list[str]:
    """``A`` / ``B`` per token of a pair ("" for special tokens and for single texts)."""
    if enc.pair is None:
        return [""] * len(enc.tokens)
    return ["" if s is None else "AB"[s] for s in enc.sequence_ids]


def token_labels(enc: Encoded) -> list[str]:
    """Unique axis labels: position, token and, for a pair, its segment (``3 cat ·A``)."""
    segs = segments(enc)
    return [f"{i} {t}" + (f" ·{s}" if s else "") for i, (t, s) in enumerate(zip(enc.tokens, segs))]

