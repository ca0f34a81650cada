"""The logit lens on a masked-LM: the model's own masked-LM head applied to the mask's hidden state at
every layer, not only the last.

Only a complete head is used (:func:`tools.models.mlm_head.masked_lm_head` refuses a head any of
whose weights would be random, as ``mask`` does); a model without one is refused with that reason,
never read through a random head. The head is the whole prediction network after the encoder
(BERT's ``cls``: dense, activation, LayerNorm, decoder; RoBERTa's ``lm_head``), so at the last
layer the lens gives exactly the model's fill-mask output.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from tools.core.errors import UserError
from tools.core.text import code
from tools.core.timing import answer
from tools.inspection.masking import mask_pattern, prepare
from tools.layers import replies_maps
from tools.layers.facts import LogitLens
from tools.models.gpu import gpu
from tools.models.hub import LoadedModel, as_model, model_by_key
from tools.models.mlm_head import masked_lm_head
from tools.models.threads import threads_for

#: The most candidates per layer.
MAX_TOP = 20
#: Where each architecture keeps the network between the last hidden state and the logits.
HEAD_MODULES = ("cls", "lm_head")


def head_module(network: torch.nn.Module) -> torch.nn.Module | None:
    """The prediction network after the encoder (BERT ``cls``, RoBERTa ``lm_head``), or None."""
    for name in HEAD_MODULES:
        module = getattr(network, name, None)
        if isinstance(module, torch.nn.Module):
            return module
    return None


def _seconds_for(key: str, ids: np.ndarray, position: int) -> int:
    return 10 + len(ids) // 500


@gpu(duration=_seconds_for)  # small picklable arguments: the model's key, token ids, the mask's position
def _lens_on_gpu(key: str, ids: np.ndarray, position: int) -> np.ndarray:
    """(L+1, V) probabilities of the head applied to the mask's hidden state 0..L."""
    lm = model_by_key(key)
    network = masked_lm_head(lm).network
    assert network is not None, "logit_lens refused a model without a usable head"
    head = head_module(network)
    assert head is not None, "logit_lens refused a head it does not know"
    batch = {"input_ids": torch.from_numpy(ids).unsqueeze(0).to(lm.device),
             "attention_mask": torch.ones(1, len(ids), dtype=torch.long, device=lm.device)}
    with threads_for(len(ids)), torch.inference_mode():
        out = network(**batch, output_hidden_states=True)
        states = torch.stack([h[0, position] for h in out.hidden_states])  # (L+1, D)
        logits = head(states)
        return logits.float().softmax(dim=-1).cpu().numpy()


def _special(tok, vocab: int) -> np.ndarray:
    special = np.zeros(vocab, dtype=bool)
    special[[i for i in tok.all_special_ids if i is not None and 0 <= i < vocab]] = True
    return special


def logit_lens(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    *,
    top: int = 5,
) -> LogitLens:
    """The logit lens: the masked-LM head applied to the mask's hidden state at every layer.

    Args:
        model: a loaded model with a complete masked-LM head, or its name (a model without one,
            such as the embedded all-MiniLM-L6-v2, is refused).
        texts: one text with one mask, typed ``[MASK]``, ``<mask>`` or the model's own mask token.
        top: candidates per layer, 1 to 20.

    Returns:
        The facts; ``lens`` (the same call) answers with a Result:
        The top predictions with probabilities per hidden state (0 = embeddings), the rank and
        probability of the last layer's answer at each, a chart of that rank, tables also as CSV.
    """
    lm = as_model(model)
    if len(texts) != 1 or not str(texts[0]).strip():
        raise UserError("`lens` takes one text with one `[MASK]`, like `lens The cat sat on the [MASK].`")
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MAX_TOP:
        raise UserError(f"--top must be from 1 to {MAX_TOP}; got `{top}`.")
    text = texts[0]
    masks = len(mask_pattern(lm.tokenizer.mask_token).findall(text))
    if masks != 1:
        raise UserError(f"`lens` reads one mask; the text has {masks}. Put exactly one `[MASK]` where a word is "
                        "missing, like `lens The cat sat on the [MASK].`")
    head = masked_lm_head(lm)
    if not head.usable:
        raise UserError(f"`lens` needs the model's own complete masked-LM head, and {code(lm.name, 60)} has none "
                        f"({head.problem}); switch to a masked-LM model such as `bert-small` to read its layers.")
    if head_module(head.network) is None:
        raise UserError(f"`lens` knows the masked-LM heads of BERT-style (`cls`) and RoBERTa-style (`lm_head`) "
                        f"models; {code(lm.name, 60)} keeps its head elsewhere.")
    prep = prepare(lm, text)
    if not prep.positions:
        raise UserError(f"The text is {prep.full_tokens} tokens long and {lm.name} reads at most {lm.max_tokens}, "
                        "so the mask lies past the cut; shorten the text or move the mask earlier.")
    warnings = []
    if prep.full_tokens > lm.max_tokens:
        warnings.append(f"The text is {prep.full_tokens} tokens long; {lm.name} read only the first "
                        f"{lm.max_tokens}, which hold the mask.")
    position = prep.positions[0]
    probs = _lens_on_gpu(lm.key, prep.input_ids.numpy().astype(np.int64), position)
    tok = lm.tokenizer
    ranked = np.where(_special(tok, probs.shape[-1]), -1.0, probs)
    order = np.argsort(-ranked, axis=-1, kind="stable")
    ids = order[:, :top]
    answer_id = int(ids[-1, 0])
    answer_p = probs[:, answer_id]
    ranks = 1 + (ranked > answer_p[:, None]).sum(axis=-1)
    words = tuple(tuple(tok.convert_ids_to_tokens([int(i) for i in row])) for row in ids)
    return LogitLens(lm.name, lm.num_layers, text, tuple(tok.convert_ids_to_tokens(prep.input_ids.tolist())),
                     position, top, ids, words, np.take_along_axis(probs, ids, axis=-1), words[-1][0], answer_id,
                     ranks, answer_p.astype(np.float64), warnings)


#: The one-call tool: :func:`logit_lens` answered as a Result by the family's formatter.
lens = answer(logit_lens, replies_maps.lens, "lens")
