"""The same word in different contexts: its vector under each layer strategy.

An occurrence of a word is found through the tokenizer's character offsets,
case-insensitively on the original text, so capitalised forms and words split
into several word pieces are found; its vector is the mean of its pieces'
vectors. The layer strategies are those of the source notebooks (003).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import torch

from tools.core.errors import UserError
from tools.core.text import code
from tools.core.timing import answer
from tools.encoding.encode import Encoded, encode
from tools.models.hub import LoadedModel, as_model
from tools.similarity import replies
from tools.similarity.facts import Occurrence, Strategy, WordInContext

#: At most this many occurrences are compared (their pairs grow quadratically).
MAX_OCCURRENCES = 60
#: A "word" longer than this many whitespace-separated words is taken for a sentence by mistake.
MAX_WORD_PARTS = 4

#: hidden states (L+1, n, D) -> token vectors (n, D or 4D).
STRATEGIES: dict[Strategy, Callable[[torch.Tensor], torch.Tensor]] = {
    Strategy.FIRST: lambda hs: hs[1],
    Strategy.LAST: lambda hs: hs[-1],
    Strategy.SUM_ALL: lambda hs: hs.sum(dim=0),
    Strategy.SUM_LAST4: lambda hs: hs[-4:].sum(dim=0),
    Strategy.CONCAT_LAST4: lambda hs: torch.cat([hs[-4], hs[-3], hs[-2], hs[-1]], dim=-1),
    Strategy.MEAN_LAST4: lambda hs: hs[-4:].mean(dim=0),
}


def parse_strategies(lm: LoadedModel, value: str) -> tuple[list[Strategy], list[str]]:
    """``all`` or one strategy name -> the strategies to run, and warnings about skipped ones."""
    wanted = (value or "").strip().lower()
    if wanted == "all":
        chosen = list(Strategy)
    else:
        try:
            chosen = [Strategy(wanted)]
        except ValueError:
            raise UserError(
                f"Unknown strategy {code(value, 30)}; use one of {', '.join(s.value for s in Strategy)} or all."
            ) from None
    usable = [s for s in chosen if lm.num_layers >= 4 or not s.needs_four_layers]
    if not usable:
        raise UserError(
            f"--strategy {chosen[0].value} needs four layers but {lm.name} has {lm.num_layers}; "
            "use first, last or sum-all."
        )
    skipped = [s.value for s in chosen if s not in usable]
    notes = [f"{lm.name} has only {lm.num_layers} layers, so {', '.join(skipped)} were left out."] if skipped else []
    return usable, notes


# --- finding occurrences ---------------------------------------------------------------

def check_word(word: str) -> str:
    """The word, stripped, or a :class:`UserError` when it cannot be looked for."""
    clean = " ".join(word.split())
    if not clean:
        raise UserError("Give the word first, then the sentences: `word bank | I sat by the river bank. | ...`.")
    if not any(ch.isalnum() for ch in clean):
        raise UserError(
            f"The word {code(clean, 30)} has no letters or digits; give a word such as `bank` to look for."
        )
    if len(clean.split()) > MAX_WORD_PARTS:
        raise UserError(
            f"{code(clean, 40)} looks like a sentence, not a word; put the word first: "
            "`word bank | sentence 1 | sentence 2`."
        )
    return clean


def pattern(word: str) -> re.Pattern[str]:
    """Whole-word, case-insensitive matches of ``word`` (spaces inside match any whitespace)."""
    body = r"\s+".join(re.escape(part) for part in word.split())
    return re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)


def find(word: str, enc: Encoded, sentence: int) -> list[Occurrence]:
    """Every occurrence of ``word`` in one encoded sentence, mapped to tokens by character offsets."""
    found = []
    for match in pattern(word).finditer(enc.text):
        positions = tuple(
            i for i, ((s, e), seq) in enumerate(zip(enc.offsets, enc.sequence_ids))
            if seq is not None and e > s and s < match.end() and e > match.start()
        )
        if positions:  # an empty match means truncation cut it off
            found.append(Occurrence(sentence, match.start(), match.end(), match.group(0), positions,
                                    tuple(enc.tokens[i] for i in positions)))
    return found


def pieces_of(lm: LoadedModel, word: str) -> list[str]:
    """The word pieces the tokenizer makes of ``word`` (lower-case form, as looked for)."""
    return list(lm.tokenizer.tokenize(word))


# --- vectors -----------------------------------------------------------------------------

def token_vectors(enc: Encoded, positions: Sequence[int], strategy: Strategy) -> torch.Tensor:
    """The strategy's vectors of the tokens at ``positions`` of one encoding, (n, D')."""
    return STRATEGIES[strategy](enc.hidden_states[:, list(positions), :])


def occurrence_vector(enc: Encoded, occ: Occurrence, strategy: Strategy) -> torch.Tensor:
    """One occurrence's vector: the mean of its pieces' vectors under ``strategy``."""
    return token_vectors(enc, occ.positions, strategy).mean(dim=0)


def occurrences(
    lm: LoadedModel, word: str, sentences: Sequence[str]
) -> tuple[list[Occurrence], list[Encoded], list[int]]:
    """Encode the sentences once and find the word in each.

    Returns:
        The occurrences in sentence order, the encodings, and the indexes of the
        sentences where the word was not found.
    """
    encs = encode(lm, sentences)
    found: list[Occurrence] = []
    missing: list[int] = []
    for i, enc in enumerate(encs):
        here = find(word, enc, i)
        found.extend(here)
        if not here:
            missing.append(i)
    return found, encs, missing


def locate(lm: LoadedModel, target: str, sentences: Sequence[str]) -> tuple[list[Occurrence], list[Encoded], list[str]]:
    """Occurrences to compare (at least two), the encodings, and notes about sentences without the word.

    Raises:
        UserError: the word is in none of the sentences (the message names the word
            pieces looked for), or occurs only once.
    """
    occs, encs, missing = occurrences(lm, target, sentences)
    notes: list[str] = []
    if missing:
        looked_for = " ".join(pieces_of(lm, target)) or target
        where = ", ".join(str(i + 1) for i in missing)
        sentence_word = "sentence" if len(missing) == 1 else "sentences"
        absent = (f"{code(target, 30)} (word pieces {code(looked_for, 60)}) does not occur in "
                  f"{sentence_word} {where}")
        truncated = [i + 1 for i in missing if encs[i].dropped]
        if truncated:
            absent += f" (sentence {', '.join(map(str, truncated))} was cut at {lm.max_tokens} tokens)"
        if not occs:
            raise UserError(absent + "; check the spelling, or give sentences that contain it.")
        notes.append(absent + ".")
    if len(occs) < 2:
        raise UserError(
            f"{code(target, 30)} occurs only once, so there is nothing to compare it with; "
            "add another sentence that contains it."
        )
    if len(occs) > MAX_OCCURRENCES:
        notes.append(f"{code(target, 30)} occurs {len(occs)} times; the first {MAX_OCCURRENCES} are compared.")
        occs = occs[:MAX_OCCURRENCES]
    return occs, encs, notes


def vectors(
    lm: LoadedModel | str | None, word: str, sentences: Sequence[str], strategy: str = "last"
) -> tuple[list[Occurrence], np.ndarray]:
    """Python helper: each occurrence of ``word`` and its vector (rows) under one strategy."""
    model = as_model(lm)
    strat = Strategy(strategy)
    occs, encs, _ = occurrences(model, check_word(word), sentences)
    if not occs:
        return [], np.zeros((0, 0), dtype=np.float32)
    return occs, torch.stack([occurrence_vector(encs[o.sentence], o, strat) for o in occs]).numpy()


def cosines(rows: torch.Tensor, other: torch.Tensor) -> np.ndarray:
    a = torch.nn.functional.normalize(rows.double(), dim=-1)
    b = torch.nn.functional.normalize(other.double(), dim=-1)
    return (a @ b.T).numpy()


# --- the command -------------------------------------------------------------------------

def word_in_context(
    model: LoadedModel | str | None,
    texts: Sequence[str],
    strategy: str = "all",
    seed: int = 0,
) -> WordInContext:
    """The vector of one word in each of several sentences, compared across contexts.

    Args:
        model: a loaded model or its name.
        texts: the word first, then one or more sentences that contain it.
        strategy: ``first``, ``last``, ``sum-all``, ``sum-last4``, ``concat-last4``,
            ``mean-last4`` or ``all`` (one row per strategy).
        seed: seeds the choice of the random token of the baseline.

    Returns:
        The facts; ``word`` (the same call) answers with a Result:
        Occurrences, cosine between every pair of occurrences (labelled by sentence
        and token position), baselines (the word against the other tokens of its
        sentence, and against one random token), a heatmap or bars per strategy.
    """
    lm = as_model(model)
    if len(texts) < 2:
        raise UserError("`word` needs the word and at least one sentence: `word bank | I sat by the river bank.`.")
    target = check_word(texts[0])
    sentences = list(texts[1:])
    strategies, warnings = parse_strategies(lm, strategy)
    occs, encs, found_notes = locate(lm, target, sentences)
    warnings.extend(found_notes)
    labels = [o.label for o in occs]
    rng = np.random.default_rng(seed)
    random_token = _random_token(encs, occs, rng)
    pair_rows, summary_rows, cosine = [], [], {}
    for strat in strategies:
        vecs = torch.stack([occurrence_vector(encs[o.sentence], o, strat) for o in occs])
        cosine[strat] = cosines(vecs, vecs)
        for i, j in itertools.combinations(range(len(occs)), 2):
            pair_rows.append({"strategy": strat.value, "a": labels[i], "b": labels[j],
                              "same sentence": occs[i].sentence == occs[j].sentence,
                              "cosine": float(cosine[strat][i, j])})
        summary_rows.append(_summary(strat, occs, encs, vecs, cosine[strat], random_token))
    piece = encs[random_token[0]].tokens[random_token[1]] if random_token else None
    return WordInContext(lm.name, target, tuple(sentences), tuple(strategies), tuple(occs), cosine,
                         pd.DataFrame(pair_rows), pd.DataFrame(summary_rows), seed, random_token, piece, warnings)


#: The one-call tool: :func:`word_in_context` answered as a Result by the family's formatter.
word = answer(word_in_context, replies.word, "word")


def _random_token(encs: list[Encoded], occs: list[Occurrence], rng: np.random.Generator) -> tuple[int, int] | None:
    """One (sentence, position) of a non-special token outside every occurrence, picked with ``rng``."""
    taken = {(o.sentence, p) for o in occs for p in o.positions}
    pool = [(s, p) for s, e in enumerate(encs) for p, seq in enumerate(e.sequence_ids)
            if seq is not None and (s, p) not in taken]
    if not pool:
        return None
    return pool[int(rng.integers(len(pool)))]


def _summary(strat: Strategy, occs: list[Occurrence], encs: list[Encoded], vecs: torch.Tensor,
             cos: np.ndarray, random_token: tuple[int, int] | None) -> dict[str, object]:
    n = len(occs)
    upper = np.triu_indices(n, k=1)
    same = np.array([occs[i].sentence == occs[j].sentence for i, j in zip(*upper)], dtype=bool)
    values = cos[upper]
    context = []
    taken = {(o.sentence, p) for o in occs for p in o.positions}
    for k, o in enumerate(occs):
        enc = encs[o.sentence]
        others = [p for p, seq in enumerate(enc.sequence_ids) if seq is not None and (o.sentence, p) not in taken]
        if others:
            context.append(float(cosines(vecs[k:k + 1], token_vectors(enc, others, strat)).mean()))
    random_cos = float("nan")
    if random_token is not None:
        s, p = random_token
        random_cos = float(cosines(vecs, token_vectors(encs[s], [p], strat)).mean())
    return {
        "strategy": strat.value,
        "dims": int(vecs.shape[1]),
        "mean cosine": float(values.mean()),
        "min cosine": float(values.min()),
        "max cosine": float(values.max()),
        "same-sentence mean": float(values[same].mean()) if same.any() else float("nan"),
        "cross-sentence mean": float(values[~same].mean()) if (~same).any() else float("nan"),
        "context baseline": float(np.mean(context)) if context else float("nan"),
        "random-token baseline": random_cos,
    }
