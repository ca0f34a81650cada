"""Tokens the vocabulary lacks, counted wherever a command's texts are tokenized and gathered per command.

A BERT-family WordPiece vocabulary has no pieces for most emoji and for many scripts: such characters become
``[UNK]`` (one shared vector for all of them), and scripts it knows only letter by letter (Arabic, Greek,
Hangul for an English vocabulary) come out as strings of single-letter pieces. Either way the vectors carry
little of the text's meaning. :func:`note` records this for one tokenized input while a command runs under
:func:`watch` (the command runner's scope, in a context variable: tools need no extra argument, and outside a
watch it does nothing); :mod:`~tools.encoding.replies` writes the warnings.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tools.models.hub import LoadedModel

#: A text is "spelled letter by letter" when at least this many of its tokens, and at least half, are single
#: letters outside ASCII.
MIN_SPELLED = 3
#: How many distinct unknown characters a record keeps to show.
SHOWN_CHARACTERS = 8


@dataclass(frozen=True)
class Unseen:
    """What one tokenized input holds that the vocabulary lacks.

    Attributes:
        model: the model's name.
        text: the input (a pair's two texts joined by `` | ``).
        tokens: its tokens, special tokens not counted.
        unknown: how many of them are the unknown token.
        characters: the distinct characters the unknown tokens stand for (the first few).
        spelled: how many tokens are single letters outside ASCII.
    """

    model: str
    text: str
    tokens: int
    unknown: int
    characters: tuple[str, ...]
    spelled: int

    @property
    def letter_by_letter(self) -> bool:
        """Whether most of the text was spelled out in single letters."""
        return self.spelled >= MIN_SPELLED and 2 * self.spelled >= self.tokens


_SEEN: contextvars.ContextVar[dict[tuple[str, str], Unseen] | None] = contextvars.ContextVar("unseen", default=None)


@contextlib.contextmanager
def watch() -> Iterator[dict[tuple[str, str], Unseen]]:
    """Gather what :func:`note` finds in this context until the block ends; yields the (model, text) -> record map."""
    found: dict[tuple[str, str], Unseen] = {}
    reset = _SEEN.set(found)
    try:
        yield found
    finally:
        _SEEN.reset(reset)


def watching() -> bool:
    """Whether a command in this context is gathering records (tools skip the counting otherwise)."""
    return _SEEN.get() is not None


def look(lm: LoadedModel, text: str, ids: Sequence[int], offsets: Sequence[tuple[int, int]] | None = None,
         pair: str | None = None, sequence_ids: Sequence[int | None] | None = None) -> Unseen:
    """Count the unknown and single-letter tokens of one tokenized input.

    Args:
        lm: the model whose tokenizer made ``ids``.
        text: the first text; ``pair`` the second one, if any.
        ids: the token ids, special tokens included.
        offsets: each token's (start, end) in the text it came from, to name the unknown characters.
        sequence_ids: 0 or 1 for the text each token came from (None for special tokens).
    """
    tok = lm.tokenizer
    special = set(tok.all_special_ids) - {tok.unk_token_id}
    unk = tok.unk_token_id
    kept = [i for i, t in enumerate(ids) if int(t) not in special]
    unknown = [i for i in kept if unk is not None and int(ids[i]) == unk]
    characters: list[str] = []
    if offsets is not None:
        for i in unknown:
            source = pair if sequence_ids is not None and sequence_ids[i] == 1 and pair is not None else text
            start, end = offsets[i]
            piece = source[start:end]
            if piece and piece not in characters:
                characters.append(piece)
    pieces = tok.convert_ids_to_tokens([int(ids[i]) for i in kept])
    spelled = sum(1 for p in pieces if len(p.removeprefix("##")) == 1 and p.removeprefix("##").isalpha()
                  and not p.removeprefix("##").isascii())
    shown = text if pair is None else f"{text} | {pair}"
    return Unseen(lm.name, shown, len(kept), len(unknown), tuple(characters[:SHOWN_CHARACTERS]), spelled)


def note(lm: LoadedModel, text: str, ids: Sequence[int], offsets: Sequence[tuple[int, int]] | None = None,
         pair: str | None = None, sequence_ids: Sequence[int | None] | None = None) -> None:
    """Record one tokenized input for the running command when it has unknown or letter-by-letter tokens."""
    found = _SEEN.get()
    if found is None:
        return
    key = (lm.name, text if pair is None else f"{text} | {pair}")
    if key in found:
        return
    seen = look(lm, text, ids, offsets, pair, sequence_ids)
    if seen.unknown or seen.letter_by_letter:
        found[key] = seen
