"""Hidden states in one forward pass per distinct input: dedup, cache, length-sorted token-budget batches."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from tools.core import cancel
from tools.core.errors import UserError
from tools.encoding import unknown
from tools.encoding.cache import encoding_cache
from tools.encoding.forward import Batch, Pool, forward_batches, pooled_batches
from tools.models.hub import LoadedModel

#: Batches are cut so that no batch holds more than this many (padded) tokens...
MAX_BATCH_TOKENS = 8192
#: ...nor more inputs than this. STS-B test on 2 idle cores: 32 -> 6.6 s, 64 -> 5.8 s, 128 -> 6.3 s
#: (noisy); but the int8 fast path quantises activations per batch, and its STS-B Spearman
#: drop was 0.0050 with batches of 32 against 0.0077 with 64, so 32.
MAX_BATCH_SIZE = 32
#: ...or this many on a GPU, where a batch of 32 short texts leaves it waiting on the CPU (STS-B test on an H200:
#: 5,000 sentences/s at 32, the pace of sentence-transformers' own default batch).
GPU_BATCH_SIZE = 256
#: ...nor, with attentions, more than this many attention weights (B x L x H x T x T floats, 256 MiB).
MAX_BATCH_ATTENTION = 2**26
#: Batches per forward call, without attentions: a backend with workers of its own runs them side by side
#: (ONNX Runtime on a 2-core AMD EPYC: two one-thread sessions 1.17-1.22x one two-thread session).
BATCHES_PER_CALL = 16
#: Python's share of a cached token besides its vectors (token string, offset tuple, ids).
_TOKEN_OVERHEAD_BYTES = 160


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
            embedding output, index L is layer L's output. An encoding made for sentence
            vectors alone keeps only the last layer: (1, T, hidden), and ``first_layer`` is L.
        attentions: (layers, heads, T, T) float32 on CPU, when asked for.
        dropped: how many tokens truncation cut off.
        first_layer: the hidden state that ``hidden_states[0]`` is (0 unless only the last was kept).
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
    first_layer: int = 0

    def layer(self, index: int | None = None) -> torch.Tensor:
        """Hidden state ``index`` (default: the last layer), shape (T, hidden)."""
        if index is None:
            return self.hidden_states[-1]
        if not self.first_layer <= index < self.first_layer + len(self.hidden_states):
            raise ValueError(f"this encoding kept hidden states {self.first_layer} and up, not {index}")
        return self.hidden_states[index - self.first_layer]

    @property
    def nbytes(self) -> int:
        """Its memory, about: (L+1) x T x D floats, attentions L x H x T x T, and per-token objects."""
        size = self.hidden_states.numel() * self.hidden_states.element_size()
        if self.attentions is not None:
            size += self.attentions.numel() * self.attentions.element_size()
        return size + len(self.tokens) * _TOKEN_OVERHEAD_BYTES + len(self.text) + len(self.pair or "")

    def copy(self, attentions: bool = True) -> Encoded:
        """A copy whose tensors and lists the caller may change without touching the cache."""
        return dataclasses.replace(
            self, input_ids=self.input_ids.copy(), tokens=list(self.tokens), offsets=list(self.offsets),
            sequence_ids=list(self.sequence_ids), hidden_states=self.hidden_states.clone(),
            attentions=self.attentions.clone() if attentions and self.attentions is not None else None,
        )


def check_layer(lm: LoadedModel, layer: int | None) -> int:
    """Validate a hidden-state index (0 = embeddings, L = last layer)."""
    if layer is None:
        return lm.num_layers
    if not 0 <= layer <= lm.num_layers:
        raise UserError(
            f"--layer {layer} is out of range: {lm.name} has layers 0 (embeddings) to {lm.num_layers}."
        )
    return layer


def truncation_warnings(lm: LoadedModel, encs: Sequence[Encoded]) -> list[str]:
    """One sentence per input that was cut at the model's limit, numbered as the user typed them."""
    return [f"Text {i + 1} was truncated to {lm.max_tokens} tokens: {e.dropped} tokens were dropped."
            for i, e in enumerate(encs) if e.dropped]


def encode(
    lm: LoadedModel,
    texts: Sequence[str],
    pairs: Sequence[str] | None = None,
    *,
    attentions: bool = False,
    max_length: int | None = None,
    last_only: bool = False,
) -> list[Encoded]:
    """Run the encoder once per distinct input and return each input's states.

    Inputs are deduplicated and looked up in the model's encoding cache; the rest
    are tokenized together, sorted by length and batched, so a command's texts
    share forward passes (a few batches per call through the GPU boundary,
    :func:`tools.encoding.forward.forward_batches`); results come back in the order
    given, each a copy the caller may change. Texts longer than the model's limit
    are truncated and ``dropped`` says by how much. With ``last_only`` (sentence vectors, no
    attentions) an encoding may keep only the last layer; a cached full one serves too.
    """
    if pairs is not None and len(pairs) != len(texts):
        raise ValueError("pairs must be as long as texts")
    limit = min(max_length or lm.max_tokens, lm.max_tokens)
    inputs = list(zip(texts, pairs if pairs is not None else [None] * len(texts)))
    unique = list(dict.fromkeys(inputs))
    cache = encoding_cache(lm)
    found: dict[tuple[str, str | None], Encoded] = {}
    last_only = last_only and not attentions
    for key in unique:
        hit = cache.get((*key, limit, attentions))
        if hit is None and last_only:
            hit = cache.get((*key, limit, "last"))
        if hit is not None:
            found[key] = hit
    missing = [key for key in unique if key not in found]
    if missing:
        features = _tokenize(lm, missing, limit)
        per_item = lm.num_layers * lm.num_heads if attentions else 0
        for group in _groups(lm, features, per_item, 1 if attentions else BATCHES_PER_CALL):
            done = _forward(lm, [[features[i] for i in batch] for batch in group], attentions, last_only)
            for batch, encs in zip(group, done):
                for i, enc in zip(batch, encs):
                    key = missing[i]
                    found[key] = enc
                    cache.put((*key, limit, "last" if last_only else attentions), enc, enc.nbytes)
    for key in unique if unknown.watching() else ():
        enc = found[key]
        unknown.note(lm, enc.text, enc.input_ids.tolist(), enc.offsets, enc.pair, enc.sequence_ids)
    return [found[x].copy(attentions) for x in inputs]


def pooled(lm: LoadedModel, texts: Sequence[str], pool: Pool, max_length: int | None = None,
           progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """One vector per text (N, hidden) float32, pooled from the last layer, for bulk work that keeps nothing else
    (a corpus's rows): the same distinct inputs, length-sorted batches and passes as :func:`encode`, but no
    per-text states, copies or cache entries; each batch is pooled where it ran and only its vectors come back.
    ``progress`` is told how many distinct texts are done, of how many, after each forward call."""
    limit = min(max_length or lm.max_tokens, lm.max_tokens)
    unique = list(dict.fromkeys(texts))
    features = _tokenize(lm, [(t, None) for t in unique], limit)
    vectors = np.empty((len(unique), lm.hidden_size), dtype=np.float32)
    finished = 0
    for group in _groups(lm, features, 0, BATCHES_PER_CALL):
        done = pooled_batches(lm.key, [_pad(lm, [features[i] for i in batch]) for batch in group], pool)
        for batch, rows in zip(group, done):
            vectors[batch] = rows
            finished += len(batch)
        if progress is not None:
            progress(finished, len(unique))
    at = {text: i for i, text in enumerate(unique)}
    return vectors[[at[t] for t in texts]]


def _pad(lm: LoadedModel, batch: list[_Features]) -> Batch:
    """One batch padded to its longest input, on the tokenizer's padding side, as numpy int64 arrays."""
    tok = lm.tokenizer
    width = max(len(f.ids) for f in batch)
    ids = np.full((len(batch), width), tok.pad_token_id if tok.pad_token_id is not None else 0, dtype=np.int64)
    mask = np.zeros((len(batch), width), dtype=np.int64)
    types = np.zeros((len(batch), width), dtype=np.int64)
    left = getattr(tok, "padding_side", "right") == "left"
    for row, f in enumerate(batch):
        span = slice(width - len(f.ids), width) if left else slice(0, len(f.ids))
        ids[row, span], mask[row, span], types[row, span] = f.ids, 1, f.type_ids
    return Batch(ids, mask, types if "token_type_ids" in tok.model_input_names else None)


@dataclass(frozen=True)
class _Features:
    """One input's tokenization, before padding."""

    text: str
    pair: str | None
    ids: list[int]
    type_ids: list[int]
    offsets: list[tuple[int, int]]
    sequence_ids: list[int | None]
    dropped: int


def _tokenize(lm: LoadedModel, inputs: list[tuple[str, str | None]], limit: int) -> list[_Features]:
    """Tokenize every input in one call; only inputs over ``limit`` are tokenized again, truncated."""
    tok = lm.tokenizer
    texts = [t for t, _ in inputs]
    pairs = [p for _, p in inputs]
    has_pairs = any(p is not None for p in pairs)
    if has_pairs and not all(p is not None for p in pairs):  # mixed: one call per kind keeps it simple
        return [_tokenize(lm, [x], limit)[0] for x in inputs]
    # ids, type ids, offsets and sequence ids are read from the fast tokenizer's own encodings: asking transformers
    # to convert offsets and type ids into lists too took 2.1x as long (STS-B test's 2,552 distinct sentences,
    # 357 ms against 167 ms, AMD EPYC 25/1)
    full = tok(texts, pairs if has_pairs else None, truncation=False, return_attention_mask=False,
               return_token_type_ids=False, verbose=False)
    out: list[_Features] = []
    for i, (text, pair) in enumerate(inputs):
        enc = full.encodings[i]
        n_full = len(enc.ids)
        dropped = 0
        if n_full > limit:
            enc = tok(text, pair, truncation=True, max_length=limit, return_attention_mask=False,
                      return_token_type_ids=False).encodings[0]
            dropped = n_full - len(enc.ids)
        out.append(_Features(text, pair, list(enc.ids), list(enc.type_ids), [tuple(o) for o in enc.offsets],
                             list(enc.sequence_ids), dropped))
    return out


def _groups(lm: LoadedModel, features: list[_Features], attention_per_item: int,
            step: int) -> Iterator[list[list[int]]]:
    """The inputs' length-sorted batches, ``step`` batches per forward call; before each call a command past its time
    limit stops (and leaves the model's lock free)."""
    order = sorted(range(len(features)), key=lambda i: len(features[i].ids))
    size = GPU_BATCH_SIZE if lm.device.type == "cuda" else MAX_BATCH_SIZE
    batches = _batches(order, [len(f.ids) for f in features], attention_per_item, size)
    for start in range(0, len(batches), step):
        cancel.check()
        yield batches[start:start + step]


def _batches(order: list[int], lengths: list[int], attention_per_item: int = 0,
             size: int = MAX_BATCH_SIZE) -> list[list[int]]:
    """Cut the length-sorted ``order`` into batches under the token, size and attention caps."""
    batches: list[list[int]] = []
    current: list[int] = []
    width = 0
    for i in order:
        wider = max(width, lengths[i])
        n = len(current) + 1
        too_big = (wider * n > MAX_BATCH_TOKENS or n > size
                   or attention_per_item * wider * wider * n > MAX_BATCH_ATTENTION)
        if current and too_big:
            batches.append(current)
            current, wider = [], lengths[i]
        current.append(i)
        width = wider
    if current:
        batches.append(current)
    return batches


def _forward(lm: LoadedModel, batches: list[list[_Features]], attentions: bool,
             last_only: bool = False) -> list[list[Encoded]]:
    """Pad each batch, run them across the GPU boundary in one call, and wrap each row's states as an
    :class:`Encoded`."""
    tok = lm.tokenizer
    done = forward_batches(lm.key, [_pad(lm, batch) for batch in batches], attentions, last_only)
    return [[Encoded(text=f.text, pair=f.pair, input_ids=np.asarray(f.ids), tokens=tok.convert_ids_to_tokens(f.ids),
                     offsets=f.offsets, sequence_ids=f.sequence_ids, hidden_states=torch.from_numpy(hidden),
                     attentions=torch.from_numpy(attn) if attn is not None else None, dropped=f.dropped,
                     first_layer=lm.num_layers if last_only else 0)
             for f, (hidden, attn) in zip(batch, rows)]
            for batch, rows in zip(batches, done)]
