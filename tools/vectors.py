"""Hidden states in one forward pass, and the pooling strategies over them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np
import torch

from tools.errors import UserError
from tools.gpu import gpu
from tools.hub import LoadedModel

#: Batches are cut so that no batch holds more than this many (padded) tokens.
MAX_BATCH_TOKENS = 8192
MAX_BATCH_SIZE = 64
#: Below this many tokens in a forward pass one torch thread is faster than two
#: on a 2-core machine (thread start-up dominates); above it, all cores help.
SINGLE_THREAD_TOKENS = 256


@dataclass(frozen=True)
class Encoded:
    """One input's forward pass, with padding removed.

    Attributes:
        text: the first text; ``pair`` the second one, if any.
        input_ids: the token ids the model saw, shape (T,).
        tokens: their string forms.
        offsets: (start, end) character spans in the text they came from.
        sequence_ids: 0 or 1 for the text each token came from, None for specials.
        hidden_states: (layers + 1, T, hidden) float32 on CPU; index 0 is the
            embedding output, index L is layer L's output.
        attentions: (layers, heads, T, T) float32 on CPU, when asked for.
        dropped: how many tokens truncation cut off.
    """

    text: str
    pair: str | None
    input_ids: np.ndarray
    tokens: list[str]
    offsets: list[tuple[int, int]]
    sequence_ids: list[int | None]
    hidden_states: torch.Tensor
    attentions: torch.Tensor | None
    dropped: int

    def layer(self, index: int | None = None) -> torch.Tensor:
        """Hidden state ``index`` (default: the last layer), shape (T, hidden)."""
        return self.hidden_states[-1 if index is None else index]


def check_layer(lm: LoadedModel, layer: int | None) -> int:
    """Validate a hidden-state index (0 = embeddings, L = last layer)."""
    if layer is None:
        return lm.num_layers
    if not 0 <= layer <= lm.num_layers:
        raise UserError(
            f"--layer {layer} is out of range: {lm.name} has layers 0 (embeddings) to {lm.num_layers}."
        )
    return layer


def encode(
    lm: LoadedModel,
    texts: Sequence[str],
    pairs: Sequence[str] | None = None,
    *,
    attentions: bool = False,
    max_length: int | None = None,
) -> list[Encoded]:
    """Run the encoder once per distinct input and return each input's states.

    Inputs are deduplicated, sorted by length and batched, so a command's texts
    share forward passes; results come back in the order given. Texts longer
    than the model's limit are truncated and ``dropped`` says by how much.
    """
    if pairs is not None and len(pairs) != len(texts):
        raise ValueError("pairs must be as long as texts")
    limit = min(max_length or lm.max_tokens, lm.max_tokens)
    inputs = list(zip(texts, pairs if pairs is not None else [None] * len(texts)))
    unique = list(dict.fromkeys(inputs))
    tok = lm.tokenizer
    features = [
        tok(t, p, truncation=True, max_length=limit, return_offsets_mapping=True,
            return_overflowing_tokens=False, return_length=True)
        for t, p in unique
    ]
    full_lengths = [len(tok(t, p, truncation=False)["input_ids"]) for t, p in unique]
    order = sorted(range(len(unique)), key=lambda i: len(features[i]["input_ids"]))
    done: dict[int, Encoded] = {}
    for batch in _batches(order, [len(f["input_ids"]) for f in features]):
        done.update(_forward(lm, unique, features, full_lengths, batch, attentions))
    by_input = {unique[i]: done[i] for i in range(len(unique))}
    return [by_input[x] for x in inputs]


def _batches(order: list[int], lengths: list[int]) -> list[list[int]]:
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        width = max([lengths[j] for j in current] + [lengths[i]])
        if current and (width * (len(current) + 1) > MAX_BATCH_TOKENS or len(current) >= MAX_BATCH_SIZE):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


@gpu  # ZeroGPU on a Space (issue 8); a no-op elsewhere
def _forward(lm, unique, features, full_lengths, batch, attentions) -> dict[int, Encoded]:
    tok = lm.tokenizer
    padded = tok.pad(
        [{k: features[i][k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in features[i]}
         for i in batch],
        return_tensors="pt",
    )
    padded = {k: v.to(lm.device) for k, v in padded.items()}
    n_tokens = int(padded["input_ids"].numel())
    with lm.lock, threads_for(n_tokens), torch.inference_mode():
        out = lm.encoder(**padded, output_hidden_states=True, output_attentions=attentions)
    hidden = torch.stack(out.hidden_states, dim=1).float().cpu()  # (B, L+1, T, D)
    attn = torch.stack(out.attentions, dim=1).float().cpu() if attentions else None  # (B, L, H, T, T)
    result: dict[int, Encoded] = {}
    for row, i in enumerate(batch):
        f = features[i]
        n = len(f["input_ids"])
        text, pair = unique[i]
        seq_ids = f.sequence_ids() if hasattr(f, "sequence_ids") else [None] * n
        result[i] = Encoded(
            text=text,
            pair=pair,
            input_ids=np.asarray(f["input_ids"]),
            tokens=tok.convert_ids_to_tokens(f["input_ids"]),
            offsets=[tuple(o) for o in f["offset_mapping"]],
            sequence_ids=list(seq_ids),
            hidden_states=hidden[row, :, :n, :].clone(),
            attentions=attn[row, :, :, :n, :n].clone() if attn is not None else None,
            dropped=max(0, full_lengths[i] - n),
        )
    return result


class threads_for:
    """Use one torch thread for small forward passes and every core for large ones."""

    def __init__(self, n_tokens: int) -> None:
        self.wanted = 1 if n_tokens <= SINGLE_THREAD_TOKENS else max_threads()

    def __enter__(self) -> None:
        self.before = torch.get_num_threads()
        if self.wanted != self.before:
            torch.set_num_threads(self.wanted)

    def __exit__(self, *exc: object) -> None:
        if torch.get_num_threads() != self.before:
            torch.set_num_threads(self.before)


def max_threads() -> int:
    import os

    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


# --- pooling ---------------------------------------------------------------------------

def _cls(states: torch.Tensor) -> torch.Tensor:
    return states[0]


def _mean(states: torch.Tensor) -> torch.Tensor:
    return states.mean(dim=0)


def _max(states: torch.Tensor) -> torch.Tensor:
    return states.max(dim=0).values


class Pooling(str, Enum):
    """How a sentence vector is made from token vectors (padding is never included)."""

    CLS = "cls"
    MEAN = "mean"
    MAX = "max"
    SBERT = "sbert"

    @classmethod
    def parse(cls, value: str) -> "Pooling":
        try:
            return cls(value.lower())
        except ValueError:
            raise UserError(
                f"Unknown pooling `{value}`; use one of {', '.join(p.value for p in cls)}."
            ) from None


_SIMPLE: dict[Pooling, Callable[[torch.Tensor], torch.Tensor]] = {
    Pooling.CLS: _cls,
    Pooling.MEAN: _mean,
    Pooling.MAX: _max,
}


def available_poolings(lm: LoadedModel) -> list[Pooling]:
    """Every pooling this model supports (``sbert`` only with a sentence-transformers recipe)."""
    pools = [Pooling.CLS, Pooling.MEAN, Pooling.MAX]
    if lm.sentence_config() is not None:
        pools.append(Pooling.SBERT)
    return pools


def pool(lm: LoadedModel, enc: Encoded, pooling: Pooling, layer: int | None = None) -> torch.Tensor:
    """One sentence vector from one encoded input.

    ``sbert`` follows the model's own sentence-transformers recipe (pooling mode and
    normalisation) on the last layer, exactly as ``SentenceTransformer.encode`` does.
    """
    states = enc.layer(layer)
    if pooling is Pooling.SBERT:
        recipe = lm.sentence_config()
        if recipe is None:
            raise UserError(
                f"{lm.name} has no sentence-transformers pooling recipe; use --pool mean, cls or max."
            )
        vec = _sbert(states, recipe["mode"])
        return torch.nn.functional.normalize(vec, dim=0) if recipe["normalize"] else vec
    return _SIMPLE[pooling](states)


def _sbert(states: torch.Tensor, mode: str) -> torch.Tensor:
    if mode == "mean_sqrt_len":
        return states.sum(dim=0) / np.sqrt(states.shape[0])
    if mode == "lasttoken":
        return states[-1]
    return _SIMPLE[Pooling(mode)](states)


def sentence_vectors(
    lm: LoadedModel, texts: Sequence[str], pooling: Pooling, layer: int | None = None
) -> tuple[torch.Tensor, list[Encoded]]:
    """Pooled vectors (N, hidden) for ``texts`` and the encodings they came from.

    ``sbert`` pooling reads at most the model's sentence length (as
    sentence-transformers does), so texts longer than that are encoded again at
    that length; other poolings use the model's full limit.
    """
    encs = encode(lm, texts)
    if pooling is Pooling.SBERT:
        recipe = lm.sentence_config()
        cap = recipe["max_seq_length"] if recipe else lm.max_tokens
        long = [e.text for e in encs if len(e.tokens) > cap]
        if long:
            short = dict(zip(long, encode(lm, long, max_length=cap)))
            encs_for_pool = [short.get(e.text, e) if len(e.tokens) > cap else e for e in encs]
        else:
            encs_for_pool = encs
        return torch.stack([pool(lm, e, pooling, None) for e in encs_for_pool]), encs
    return torch.stack([pool(lm, e, pooling, layer) for e in encs]), encs


def cosine_matrix(vectors: torch.Tensor) -> np.ndarray:
    """Pairwise cosine similarities of the rows of ``vectors``."""
    unit = torch.nn.functional.normalize(vectors.double(), dim=1)
    return (unit @ unit.T).numpy()
