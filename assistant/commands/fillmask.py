"""The fill-mask command: mask (and mask --why)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assistant.commands.base import Command, Context, Invocation, Texts
from assistant.commands.options import param
from assistant.commands.registry import register
from assistant.commands.slots import Slots
from tools.core.results import Result
from tools.inspection import mask_why, masking, replies
from tools.inspection.facts import FillReasons
from tools.models.mlm_head import head_known_missing

ORDER = 30
#: What a blank in a question (``[MASK]``, ``___``) adds to this command's score.
BLANK_BONUS = 0.15


#: A blank's fills asked of every layer ("now the same at every layer", "at which layer does it know the answer?"):
#: the logit lens.
_EVERY_LAYER = re.compile(r"\b(?:at|for|in|across|over|through)\s+(?:every|each|all(?:\s+the)?)\s+layers?\b|"
                          r"\blayer\s+by\s+layer\b|\bper\s+layer\b|"
                          r"\b(?:which|what)\s+layer\s+(?:does|did|do)\s+(?:it|the\s+model|\w+)\s+(?:first\s+)?"
                          r"(?:know|get|find|predict|guess|figure|work|settle|pick|see)\b|"
                          r"\b(?:when|how\s+early|how\s+soon)\s+(?:does|did)\s+(?:it|the\s+model)\s+(?:first\s+)?"
                          r"(?:know|get|find|predict|guess|figure|settle|pick)\b", re.I)


@register
class Mask(Command[Any, Any]):
    name, aliases = "mask", ("fill", "fill-mask", "unmask")
    summary = "top-K fills per [MASK] with probabilities, a greedy joint filling, and what the mask attended to"
    texts = Texts(1, 1, "one text with `[MASK]` (or `<mask>`) where a word is missing", "text with [MASK]")
    examples = ("mask The [MASK] sat on the mat.",
                "mask Paris is the [MASK] of [MASK]. --top 10",
                "mask The <mask> sat on the mat. --model bert-small",
                "mask The [MASK] sat on the mat. --why")
    phrasings = (
        'what word fills the blank in "A"?',
        'predict the missing word in "A [MASK]"',
        'fill in the blank: the ___ sat on the mat',
        'what does the model put in place of [MASK] in "A"?',
        'guess the masked token in "A"',
        'complete the sentence "A" where the word is missing',
        'what goes in the gap?',
        'just the final predictions for "A", not layer by layer',
        'give me only the final predictions, not per layer',
    )

    @dataclass(frozen=True)
    class Params:
        top: int = param("how many candidates per mask", 5, minimum=1, maximum=50, metavar="K")
        model: str | None = param("the masked-LM model to predict with (default: this conversation's model when "
                                  "it has a masked-LM head, else ASSISTANT_MLM_MODEL)", metavar="name")
        why: bool = param("also show which input tokens drove each mask's top fill (integrated gradients on its "
                          "logit)", False)

    @staticmethod
    def fallback(ctx: Context) -> str:
        """The masked-LM model used when the conversation's model has no head: the page's pick, else the setting."""
        return getattr(ctx.session, "mlm_model", "") or ctx.settings.mlm_model

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Any:
        fallback = self.fallback(ctx)
        if p.why:
            return mask_why.explanation(ctx.model(), texts, p.top, p.model, fallback, ctx.hub)
        return masking.filling(ctx.model(), texts, p.top, p.model, fallback, ctx.hub)

    def reply(self, facts: Any) -> Result:
        return replies.mask_why(facts) if isinstance(facts, FillReasons) else replies.mask(facts)

    def offered(self, ctx: Context) -> bool:
        """Not where the model's head is known to be missing and the fallback masked-LM model known not to load."""
        return not head_known_missing(ctx.model()) or ctx.hub.known(self.fallback(ctx)) is not False

    def fit(self, slots: Slots) -> float:
        if slots.has_mask:
            return BLANK_BONUS
        row = any(re.fullmatch(r"#\d+", t) for t in slots.texts)  # a corpus row ("what made #42 come up?"): no blank
        return -2 * BLANK_BONUS if row else 0.0

    def handed_on(self, question: str, before: Invocation) -> str | None:
        """"The same at every layer", "layer by layer", "when does it know?": the logit lens on the same blank."""
        return "lens" if _EVERY_LAYER.search(question) else None

    def question_texts(self, slots: Slots, table: Mapping[str, Command[Any, Any]]) -> list[str] | None:
        return slots.masked
