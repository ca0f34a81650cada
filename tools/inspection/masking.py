"""Fill-mask: top-K predictions per mask, a greedy joint filling, and what the mask attended to.

Predictions come only from a model whose masked-language-model head was loaded
complete. A model whose head weights are missing from its checkpoint (the
embedded all-MiniLM-L6-v2 is one: transformers would initialise the head at
random) is never used for predictions; the masked-LM fallback is used instead
(``--model``, else ``ASSISTANT_MLM_MODEL``, default ``bert-small``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from tools.core.errors import UserError
from tools.core.text import code
from tools.core.timing import answer
from tools.encoding import unknown
from tools.inspection import replies
from tools.inspection.facts import Fills
from tools.models.gpu import gpu
from tools.models.hub import LoadedModel, ModelHub, default_hub, model_by_key
from tools.models.mlm_head import MaskedLMHead, masked_lm_head
from tools.models.names import resolve
from tools.models.threads import threads_for

#: The most masks one command fills (each extra mask costs one forward pass in the joint filling).
MAX_MASKS = 10
#: The most candidates per mask.
MAX_TOP = 50
#: Rows per mask in the attention table.
ATTENTION_ROWS = 5
#: Mask spellings a person may type, whatever the model's own mask token is.
TYPED_MASKS = ("[MASK]", "<mask>")
_WORD_START = ("Ġ", "▁")  # byte-level BPE and SentencePiece mark a token that starts a word


# --- choosing the model that predicts ------------------------------------------------------

def _load_named(name: str, hub: ModelHub, reason: str = "") -> tuple[LoadedModel, MaskedLMHead]:
    """Load a masked-LM model by name through the hub, or raise the one sentence that says how to get one.

    ``reason`` starts the sentence when this model stands in for another one.
    """
    source = resolve(name, hub.settings)  # a bad name gets the hub's own sentence
    try:
        lm = hub.get(name)
    except UserError as exc:
        why = "no network here, or no such model on the hub" if source.kind == "hub" else _short(str(exc))
        lead = f"{reason}the masked-LM model" if reason else "The masked-LM model"
        raise UserError(
            f"{lead} {code(name, 60)} could not be loaded ({why}): put a masked-LM model such as "
            "prajjwal1/bert-small in a folder under ASSISTANT_MODEL_ROOTS and name that folder with "
            "ASSISTANT_MLM_MODEL or `--model`."
        ) from exc
    head = masked_lm_head(lm)
    if not head.usable:
        lead = f"{reason}the masked-LM model" if reason else "The model"
        raise UserError(
            f"{lead} {code(lm.name, 60)} cannot fill masks either ({head.problem}): name a model with a "
            "complete masked-LM head, such as `bert-small`, with `--model` or ASSISTANT_MLM_MODEL."
        )
    return lm, head


def _short(message: str) -> str:
    first = message.strip().rstrip(".")
    return (first[:1].lower() + first[1:])[:200]


def choose_model(
    model: LoadedModel, mlm_model: LoadedModel | str | None, fallback: str, hub: ModelHub
) -> tuple[LoadedModel, MaskedLMHead, str]:
    """The model that predicts, its head, and a warning when it stands in for ``model``.

    An explicit ``mlm_model`` always predicts; otherwise ``model`` does when its head
    is complete, else the ``fallback`` model does.
    """
    if isinstance(mlm_model, LoadedModel):
        head = masked_lm_head(mlm_model)
        if not head.usable:
            raise UserError(f"{code(mlm_model.name, 60)} cannot fill masks ({head.problem}): pick a model "
                            "with a complete masked-LM head, such as `bert-small`.")
        return mlm_model, head, ""
    if mlm_model:
        lm, head = _load_named(mlm_model, hub)
        return lm, head, ""
    own = masked_lm_head(model)
    if own.usable:
        return model, own, ""
    reason = f"{code(model.name, 60)} has no masked-LM head of its own ({own.problem}), and "
    lm, head = _load_named(fallback, hub, reason)
    warning = (f"{model.name} has no masked-LM head of its own ({own.problem}), so these predictions come "
               f"from the masked-LM model {lm.name}.")
    return lm, head, warning


# --- preprocess ----------------------------------------------------------------------------

def mask_pattern(extra: str | None = None) -> re.Pattern[str]:
    """``[MASK]``, ``<mask>`` (any case) and a model's own mask token."""
    spellings = list(TYPED_MASKS) + ([extra] if extra else [])
    return re.compile("|".join(re.escape(s) for s in dict.fromkeys(spellings)), re.IGNORECASE)


def check_request(text: str, top: int, own_mask: str | None = None) -> int:
    """Validate the text's masks and ``top`` before any model work; return the number of masks."""
    if not isinstance(top, int) or isinstance(top, bool) or not 1 <= top <= MAX_TOP:
        raise UserError(f"--top must be from 1 to {MAX_TOP}; got {code(str(top), 20)}.")
    n = len(mask_pattern(own_mask).findall(text))
    if n == 0:
        raise UserError("The text has no mask: put `[MASK]` (or `<mask>`) where a word is missing, "
                        "for example `mask The [MASK] sat on the mat.`")
    if n > MAX_MASKS:
        raise UserError(f"The text has {n} masks; `mask` fills at most {MAX_MASKS} at once, so remove "
                        f"{n - MAX_MASKS} of them.")
    return n


@dataclass(frozen=True)
class Prepared:
    """The text split around its masks and encoded for the model."""

    segments: list[str]  # the text between masks (one more than masks)
    typed: list[str]  # each mask as the person typed it
    model_text: str  # the text with every mask in the model's own spelling
    input_ids: torch.Tensor  # (T,) after truncation
    positions: list[int]  # token position of each mask that survived truncation
    full_tokens: int
    lost: int  # masks past the model's limit


def prepare(lm: LoadedModel, text: str) -> Prepared:
    """Translate the masks to the model's token, tokenize, and find each mask's position."""
    tok = lm.tokenizer
    pattern = mask_pattern(tok.mask_token)
    segments = pattern.split(text)
    typed = pattern.findall(text)
    model_text = tok.mask_token.join(segments)
    limit = lm.max_tokens
    full = tok(model_text, truncation=False)["input_ids"]
    kept = tok(model_text, truncation=True, max_length=limit)["input_ids"]
    unknown.note(lm, text, kept)
    ids = torch.tensor(kept)
    positions = [int(p) for p in (ids == tok.mask_token_id).nonzero().flatten()]
    found_full = sum(1 for i in full if i == tok.mask_token_id)
    if found_full != len(typed):
        raise UserError(f"{lm.name}'s tokenizer did not keep every mask as one token; write each mask as "
                        f"{code(tok.mask_token, 20)} with spaces around it.")
    return Prepared(segments, typed, model_text, ids, positions, len(full), found_full - len(positions))


# --- forward -------------------------------------------------------------------------------

def forward(lm: LoadedModel, ids: torch.Tensor, positions: Sequence[int], attentions: bool = False):
    """One pass of ``lm``'s masked-LM network (its head must be usable) across the GPU boundary.

    Returns:
        Probabilities (len(positions), V) at the mask positions, in their order, and,
        if asked, attentions (L, H, T, T); CPU tensors.
    """
    probs, attn = _forward_on_gpu(lm.key, ids.numpy().astype(np.int64), tuple(int(p) for p in positions),
                                  attentions)
    return torch.from_numpy(probs), torch.from_numpy(attn) if attn is not None else None


def _seconds_for(key: str, ids: np.ndarray, positions: tuple[int, ...], attentions: bool = False) -> int:
    return 10 + len(ids) // 500  # one input of at most 512 tokens


@gpu(duration=_seconds_for)  # small picklable arguments: the model's key, token ids, positions, a flag
def _forward_on_gpu(key: str, ids: np.ndarray, positions: tuple[int, ...], attentions: bool):
    lm = model_by_key(key)
    network = masked_lm_head(lm).network
    assert network is not None, "forward is called only with a usable head"
    batch = {"input_ids": torch.from_numpy(ids).unsqueeze(0).to(lm.device),
             "attention_mask": torch.ones(1, len(ids), dtype=torch.long, device=lm.device)}
    with threads_for(len(ids)), torch.inference_mode():
        out = network(**batch, output_attentions=attentions)
        probs = out.logits[0, list(positions)].float().softmax(dim=-1).cpu().numpy()
        attn = torch.stack(out.attentions, dim=1)[0].float().cpu().numpy() if attentions else None
    return probs, attn


# --- postprocess ---------------------------------------------------------------------------

def _candidates(probs: torch.Tensor, special: torch.Tensor, k: int) -> tuple[list[int], list[float]]:
    """Top ``k`` non-special tokens (probabilities come from the full softmax)."""
    ranked = probs.masked_fill(special, -1.0)
    values, ids = ranked.topk(k)
    return [int(i) for i in ids], [float(v) for v in values]


def _fill(tok, token_id: int, space_marked: bool) -> tuple[str, str, bool]:
    """How a token is shown, the text it puts in a sentence, and whether it continues the previous word."""
    token = tok.convert_ids_to_tokens(token_id)
    if token.startswith("##"):
        return token, token[2:], True
    text = tok.convert_tokens_to_string([token]).strip()
    if not text or "\ufffd" in text or not text.isprintable():  # a lone byte of a longer character
        text = token
    if token.startswith(_WORD_START):
        return text, text, False
    return text, text, space_marked


def _uses_word_start_marks(tok) -> bool:
    return any(t.startswith(_WORD_START) for t in tok.tokenize(" hello world"))


def complete(segments: list[str], typed: list[str], fills: dict[int, tuple[str, bool]]) -> str:
    """The text with the masks in ``fills`` replaced; other masks stay as typed."""
    out = [segments[0]]
    for i, seg_after in enumerate(segments[1:]):
        if i in fills:
            word, piece = fills[i]
            if piece:
                out[-1] = out[-1].rstrip()
            out.append(word)
        else:
            out.append(typed[i])
        out.append(seg_after)
    return "".join(out)


def _special_mask(tok, vocab: int) -> torch.Tensor:
    special = torch.zeros(vocab, dtype=torch.bool)
    ids = [i for i in tok.all_special_ids if i is not None and 0 <= i < vocab]
    special[ids] = True
    return special


def filling(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    top: int = 5,
    mlm_model: LoadedModel | str | None = None,
    fallback: str | None = None,
    hub: ModelHub | None = None,
) -> Fills:
    """Fill the masks of a text with a masked-language model.

    Args:
        model: the conversation's model (or its name); it predicts when its
            masked-LM head loads complete.
        texts: one text holding 1 to 10 masks, typed as ``[MASK]``, ``<mask>``
            or the model's own mask token (they are translated).
        top: candidates per mask, 1 to 50.
        mlm_model: predict with this model instead (``--model``); it must have a
            complete masked-LM head.
        fallback: the model used when ``model`` has no complete head (default:
            the hub's ``mlm_model`` setting, ASSISTANT_MLM_MODEL).
        hub: resolves and loads model names (default: the process-wide hub).

    Returns:
        The facts; ``mask`` (the same call) answers with a Result:
        A table per mask (rank, token, probability, completed sentence, word piece),
        with several masks a greedy left-to-right joint filling, the tokens each
        mask attends to most in the last layer (heads averaged), and a bar chart.
    """
    if len(texts) != 1:
        raise UserError(f"`mask` takes one text with `[MASK]` in it; got {len(texts)} texts.")
    text = texts[0]
    hub = hub or default_hub()
    conversation = model if isinstance(model, LoadedModel) else hub.get(model)
    n_masks = check_request(text, top, conversation.tokenizer.mask_token)
    lm, head, fallback_note = choose_model(conversation, mlm_model, fallback or hub.settings.mlm_model, hub)
    tok = lm.tokenizer
    prep = prepare(lm, text)
    warnings = [fallback_note] if fallback_note else []
    if not prep.positions:
        where = "the mask lies" if n_masks == 1 else f"all {n_masks} masks lie"
        raise UserError(f"The text is {prep.full_tokens} tokens long and {lm.name} reads at most "
                        f"{lm.max_tokens}, so {where} past the cut; shorten the text or move the mask earlier.")
    if prep.lost:
        warnings.append(f"The text is {prep.full_tokens} tokens long and {lm.name} reads at most "
                        f"{lm.max_tokens}: the last {prep.lost} of {n_masks} masks lie past the cut and "
                        "were not filled.")
    elif prep.full_tokens > lm.max_tokens:
        warnings.append(f"The text is {prep.full_tokens} tokens long; {lm.name} read only the first "
                        f"{lm.max_tokens}, which hold every mask.")
    probs, attn = forward(lm, prep.input_ids, prep.positions, attentions=True)
    special = _special_mask(tok, probs.shape[-1])
    marked = _uses_word_start_marks(tok)
    candidates = []
    for m in range(len(prep.positions)):
        ids, values = _candidates(probs[m], special, top)
        rows = []
        for rank, (tid, p) in enumerate(zip(ids, values), start=1):
            shown, word, piece = _fill(tok, tid, marked)
            rows.append({"rank": rank, "token": shown, "probability": p,
                         "sentence": complete(prep.segments, prep.typed, {m: (word, piece)}),
                         "word piece": piece, "id": tid})
        candidates.append(pd.DataFrame(rows))
    joint, sentence, joint_p = None, "", 1.0
    if len(prep.positions) > 1:
        joint, sentence, joint_p = _greedy(lm, head, prep, probs, special, marked)
    return Fills(lm.name, conversation.name, bool(fallback_note), tok.mask_token, tuple(prep.typed), top,
                 tuple(candidates), joint, sentence, joint_p, _attention_table(tok, prep, attn), warnings)


#: The one-call tool: :func:`filling` answered as a Result by the family's formatter.
mask = answer(filling, replies.mask, "mask")


def _greedy(lm, head, prep: Prepared, first_probs, special, marked):
    """Fill masks left to right, each with its top token given the ones already filled."""
    tok = lm.tokenizer
    ids = prep.input_ids.clone()
    probs = first_probs
    rows, fills, joint = [], {}, 1.0
    for m, pos in enumerate(prep.positions):
        if m > 0:
            probs, _ = forward(lm, ids, prep.positions)
        (tid,), (p,) = _candidates(probs[m], special, 1)
        ids[pos] = tid
        shown, word, piece = _fill(tok, tid, marked)
        fills[m] = (word, piece)
        joint *= p
        rows.append({"step": m + 1, "mask": m + 1, "token": shown, "probability": p,
                     "sentence so far": complete(prep.segments, prep.typed, dict(fills)), "word piece": piece})
    return pd.DataFrame(rows), rows[-1]["sentence so far"], joint


def _attention_table(tok, prep: Prepared, attn: torch.Tensor) -> pd.DataFrame:
    """The tokens each mask attends to most in the last layer, heads averaged."""
    last = attn[-1].mean(dim=0)  # (T, T)
    tokens = tok.convert_ids_to_tokens(prep.input_ids.tolist())
    rows = []
    for m, pos in enumerate(prep.positions):
        weights, where = last[pos].topk(min(ATTENTION_ROWS, last.shape[-1]))
        for rank, (w, j) in enumerate(zip(weights.tolist(), where.tolist()), start=1):
            rows.append({"mask": m + 1, "rank": rank, "position": j, "token": tokens[j], "attention": w})
    return pd.DataFrame(rows)
