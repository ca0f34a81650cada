"""Hidden states in one forward pass, and the pooling strategies over them."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np
import torch

from tools import cancel
from tools.cache import ByteLRU, CacheStats
from tools.errors import UserError
from tools.gpu import gpu
from tools.hub import LoadedModel, onnx_session

#: Batches are cut so that no batch holds more than this many (padded) tokens...
MAX_BATCH_TOKENS = 8192
#: ...nor more inputs than this. STS-B test on 2 idle cores: 32 -> 6.6 s, 64 -> 5.8 s, 128 -> 6.3 s
#: (noisy); but the int8 fast path quantises activations per batch, and its STS-B Spearman
#: drop was 0.0050 with batches of 32 against 0.0077 with 64, so 32.
MAX_BATCH_SIZE = 32
#: ...nor, with attentions, more than this many attention weights (B x L x H x T x T floats, 256 MiB).
MAX_BATCH_ATTENTION = 2**26
#: Up to this many (padded) tokens in a forward pass one torch thread is faster than
#: every core on a 2-core machine: one 12-token input took 12 ms on 1 thread and 200 ms
#: on 2; from 24-48 tokens 2 threads won on an idle machine (bench/threads.py). Above
#: it a ThreadChooser picks from measured speed, since on a busy machine 1 thread wins.
SINGLE_THREAD_TOKENS = 32
#: Default size cap of each model's encoding cache (the hub sets ASSISTANT_CACHE_MB).
DEFAULT_CACHE_BYTES = 256 * 2**20
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

    @property
    def nbytes(self) -> int:
        """Its memory, about: (L+1) x T x D floats, attentions L x H x T x T, and per-token objects."""
        size = self.hidden_states.numel() * self.hidden_states.element_size()
        if self.attentions is not None:
            size += self.attentions.numel() * self.attentions.element_size()
        return size + len(self.tokens) * _TOKEN_OVERHEAD_BYTES + len(self.text) + len(self.pair or "")

    def copy(self, attentions: bool = True) -> "Encoded":
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
) -> list[Encoded]:
    """Run the encoder once per distinct input and return each input's states.

    Inputs are deduplicated and looked up in the model's encoding cache; the rest
    are tokenized together, sorted by length and batched, so a command's texts
    share forward passes; results come back in the order given, each a copy the
    caller may change. Texts longer than the model's limit are truncated and
    ``dropped`` says by how much.
    """
    if pairs is not None and len(pairs) != len(texts):
        raise ValueError("pairs must be as long as texts")
    limit = min(max_length or lm.max_tokens, lm.max_tokens)
    inputs = list(zip(texts, pairs if pairs is not None else [None] * len(texts)))
    unique = list(dict.fromkeys(inputs))
    with threads_for(0):  # copies and lookups: two threads only add waiting (forward passes choose their own)
        return _encode(lm, inputs, unique, limit, attentions)


def _encode(lm: LoadedModel, inputs: list, unique: list, limit: int, attentions: bool) -> list[Encoded]:
    cache = encoding_cache(lm)
    found: dict[tuple[str, str | None], Encoded] = {}
    for key in unique:
        hit = cache.get((*key, limit, attentions))
        if hit is not None:
            found[key] = hit
    missing = [key for key in unique if key not in found]
    if missing:
        features = _tokenize(lm, missing, limit)
        order = sorted(range(len(missing)), key=lambda i: len(features[i].ids))
        per_item = lm.num_layers * lm.num_heads if attentions else 0
        for batch in _batches(order, [len(f.ids) for f in features], per_item):
            cancel.check()  # a command past its time limit stops here and leaves the model's lock free
            for i, enc in _forward(lm, [features[i] for i in batch], attentions).items():
                key = missing[batch[i]]
                found[key] = enc
                cache.put((*key, limit, attentions), enc, enc.nbytes)
    return [found[x].copy(attentions) for x in inputs]


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
    full = tok(texts, pairs if has_pairs else None, truncation=False, return_offsets_mapping=True,
               return_token_type_ids=True, verbose=False)
    out: list[_Features] = []
    for i, (text, pair) in enumerate(inputs):
        enc, n_full = full.encodings[i], len(full["input_ids"][i])
        dropped = 0
        if n_full > limit:
            cut = tok(text, pair, truncation=True, max_length=limit, return_offsets_mapping=True,
                      return_token_type_ids=True)
            enc, dropped = cut.encodings[0], n_full - len(cut["input_ids"])
        out.append(_Features(text, pair, list(enc.ids), list(enc.type_ids), [tuple(o) for o in enc.offsets],
                             list(enc.sequence_ids), dropped))
    return out


def _batches(order: list[int], lengths: list[int], attention_per_item: int = 0) -> list[list[int]]:
    """Cut the length-sorted ``order`` into batches under the token, size and attention caps."""
    batches: list[list[int]] = []
    current: list[int] = []
    width = 0
    for i in order:
        wider = max(width, lengths[i])
        n = len(current) + 1
        too_big = (wider * n > MAX_BATCH_TOKENS or n > MAX_BATCH_SIZE
                   or attention_per_item * wider * wider * n > MAX_BATCH_ATTENTION)
        if current and too_big:
            batches.append(current)
            current, wider = [], lengths[i]
        current.append(i)
        width = wider
    if current:
        batches.append(current)
    return batches


@gpu  # ZeroGPU on a Space (issue 8); a no-op elsewhere
def _forward(lm: LoadedModel, batch: list[_Features], attentions: bool) -> dict[int, Encoded]:
    """One forward pass over a batch; returns each row's states without padding, on CPU.

    Hidden states alone run through PyTorch's fused attention (``sdpa``), which
    gives the same numbers faster, or on the int8 fast path through its ONNX
    Runtime session; attentions need PyTorch's eager implementation.
    """
    tok = lm.tokenizer
    padded = tok.pad([{"input_ids": f.ids, "token_type_ids": f.type_ids} for f in batch], return_tensors="pt",
                     return_attention_mask=True)
    if "token_type_ids" not in tok.model_input_names:
        padded.pop("token_type_ids", None)
    padded = {k: v.to(lm.device) for k, v in padded.items()}
    n_tokens = int(padded["input_ids"].numel())
    threads = threads_for(n_tokens, thread_chooser(lm))
    session = None if attentions or lm.device.type != "cpu" else onnx_session(lm, threads.wanted)
    if session is not None:  # the fast path's int8 ONNX export: every hidden state, (L+1, B, T, D)
        feed = {i.name: padded[i.name].numpy() for i in session.get_inputs()}
        with lm.lock, threads:
            stacked = torch.from_numpy(session.run(["hidden_states"], feed)[0])
        hidden, attn, on_cpu = None, None, True
    else:
        stacked = None
        with lm.lock, threads, torch.inference_mode(), _attention_kind(lm, attentions):
            out = lm.encoder(**padded, output_hidden_states=True, output_attentions=attentions)
            on_cpu = lm.device.type == "cpu"  # on CPU, copy each row once; elsewhere move the batch at once
            hidden = out.hidden_states if on_cpu else torch.stack(out.hidden_states, dim=1).float().cpu()
            attn = torch.stack(out.attentions, dim=1).float().cpu() if attentions else None  # (B, L, H, T, T)
    result: dict[int, Encoded] = {}
    for row, f in enumerate(batch):
        n = len(f.ids)
        if stacked is not None:
            states = stacked[:, row, :n].clone()
        elif on_cpu:
            states = torch.stack([h[row, :n] for h in hidden]).float()
        else:
            states = hidden[row, :, :n, :].clone()  # (L+1, T, D), its own memory
        result[row] = Encoded(
            text=f.text,
            pair=f.pair,
            input_ids=np.asarray(f.ids),
            tokens=tok.convert_ids_to_tokens(f.ids),
            offsets=f.offsets,
            sequence_ids=f.sequence_ids,
            hidden_states=states,
            attentions=attn[row, :, :, :n, :n].clone() if attn is not None else None,
            dropped=f.dropped,
        )
    return result


class _attention_kind:
    """Use ``sdpa`` for a forward pass that needs no attention weights, when the model supports it."""

    def __init__(self, lm: LoadedModel, attentions: bool) -> None:
        self.encoder = lm.encoder
        self.wanted = "eager" if attentions else "sdpa"

    def __enter__(self) -> None:
        self.before = getattr(self.encoder.config, "_attn_implementation", None)
        self.switched = False
        if self.before is not None and self.before != self.wanted and _can_switch(self.encoder):
            try:
                self.encoder.set_attn_implementation(self.wanted)
                self.switched = True
            except (ValueError, ImportError):  # a model without sdpa keeps eager
                pass

    def __exit__(self, *exc: object) -> None:
        if self.switched:
            self.encoder.set_attn_implementation(self.before)


def _can_switch(encoder: torch.nn.Module) -> bool:
    check = getattr(encoder, "_can_set_attn_implementation", None)
    return bool(check and check() and getattr(encoder, "_supports_sdpa", False))


# --- the encoding cache ---------------------------------------------------------------

def encoding_cache(lm: LoadedModel) -> ByteLRU:
    """This model's cache of encodings, keyed by (text, pair, max length, attentions).

    Passes with attentions run the eager implementation and those without run
    ``sdpa``; their hidden states differ in the last float bits, so each kind is
    cached on its own and a cached answer is always bit-identical to a fresh one.

    Capped in bytes (``lm.cache_bytes``, from ASSISTANT_CACHE_MB) and entries
    (``lm.cache_entries``, from ASSISTANT_CACHE_SIZE); shared by every conversation,
    like the model itself.
    """
    return lm.extra("encoding_cache", lambda m: ByteLRU(getattr(m, "cache_bytes", DEFAULT_CACHE_BYTES),
                                                         getattr(m, "cache_entries", 4096)))


def cache_stats(lm: LoadedModel) -> CacheStats:
    """Hits, misses, hit ratio and size of this model's encoding cache."""
    return encoding_cache(lm).stats()


def clear_cache(lm: LoadedModel) -> None:
    """Forget this model's cached encodings and reset its counters."""
    encoding_cache(lm).clear()


# --- threads ---------------------------------------------------------------------------

class threads_for:
    """Use one torch thread for small forward passes and, for large ones, the faster of 1 and every core.

    ``chooser`` (a model's :class:`ThreadChooser`) decides large passes from measured
    speed and is told how long each took; without one, large passes use every core.
    """

    def __init__(self, n_tokens: int, chooser: "ThreadChooser | None" = None) -> None:
        self.n_tokens = n_tokens
        self.chooser = chooser
        cores = max_threads()
        if cores == 1 or n_tokens <= SINGLE_THREAD_TOKENS:
            self.wanted = 1
        else:
            self.wanted = chooser.pick() if chooser is not None else cores

    def __enter__(self) -> None:
        self.before = torch.get_num_threads()
        if self.wanted != self.before:
            torch.set_num_threads(self.wanted)
        self.start = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        if self.chooser is not None and self.n_tokens > SINGLE_THREAD_TOKENS and exc[0] is None:
            self.chooser.record(self.wanted, self.n_tokens, time.perf_counter() - self.start)
        if torch.get_num_threads() != self.before:
            torch.set_num_threads(self.before)


class ThreadChooser:
    """Picks 1 thread or every core for large forward passes from their measured speed.

    On a 2-core machine two threads were 2-3x faster than one when the cores were
    idle and 3-5x slower when other processes kept them busy (bench/threads.py), and
    that changes from minute to minute. So each model keeps a moving average of
    seconds per token for both choices, uses the faster one, and tries the other
    every ``EXPLORE_EVERY`` large passes to notice when the machine changes.
    """

    EXPLORE_EVERY = 24  # trying the slower choice costs about 1/24 of the difference
    WEIGHT = 0.3  # of the newest measurement in the moving average

    def __init__(self, cores: int | None = None) -> None:
        self.choices = sorted({1, cores or max_threads()})
        self.rate: dict[int, float | None] = {c: None for c in self.choices}
        self.passes = 0
        self._lock = threading.Lock()

    def pick(self) -> int:
        with self._lock:
            self.passes += 1
            unknown = [c for c in self.choices if self.rate[c] is None]
            if unknown:
                return unknown[-1]
            best = min(self.choices, key=lambda c: self.rate[c])
            if self.passes % self.EXPLORE_EVERY == 0:
                return next(c for c in self.choices if c != best) if len(self.choices) > 1 else best
            return best

    def record(self, threads: int, n_tokens: int, seconds: float) -> None:
        with self._lock:
            rate = seconds / max(1, n_tokens)
            old = self.rate.get(threads)
            self.rate[threads] = rate if old is None else (1 - self.WEIGHT) * old + self.WEIGHT * rate


def thread_chooser(lm: LoadedModel) -> ThreadChooser:
    """This model's :class:`ThreadChooser`."""
    return lm.extra("thread_chooser", lambda m: ThreadChooser())


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
    with threads_for(0):  # many tiny tensor operations: one thread (two wait on each other on a busy machine)
        return _pooled(lm, texts, encs, pooling, layer)


def _pooled(lm: LoadedModel, texts: Sequence[str], encs: list[Encoded], pooling: Pooling,
            layer: int | None) -> tuple[torch.Tensor, list[Encoded]]:
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
