"""Which model a question names for an option that takes models (``--vs``, ``--models``), and where."""

from __future__ import annotations

import re

from assistant.commands.options import Option, ParamType
from assistant.commands.slots import INT8, MODEL, model_name
from assistant.understanding.spans import compiled, with_lead
from assistant.understanding.words import RATHER
from tools.models.names import FAST_SUFFIX

#: What a model is compared with follows ("with the default minilm's", "against minilm").
_COMPARED = r"\b(?:with|against|to|vs\.?|versus|beside|next\s+to)\s+(?:the\s+)?(?:default\s+)?$"


def model_said(text: str, option: Option, own_model: str | None) -> tuple[str, tuple[int, int]] | None:
    """The model (or models) said for an option that takes them, and where: the int8 path of the conversation's
    own model for "its int8 version"; the conversation's own model named as the subject ("does minilm encode
    X?"), not after a word that compares ("with minilm's"), is said and sets nothing (an empty value)."""
    named = [m for m in MODEL.finditer(text) if not compiled(RATHER).search(text[:m.start()])]
    several = "," in option.usage()
    names = list(dict.fromkeys(model_name(m) for m in named))
    if not several and own_model is not None:  # another model named beside it, else its own said as compared with
        names = [n for n in names if n != own_model] or [
            own_model for m in named if model_name(m) == own_model and compiled(_COMPARED).search(text[:m.start()])]
    fast = INT8.search(text)
    if not names and fast and own_model is not None and not own_model.endswith(FAST_SUFFIX):
        return own_model + FAST_SUFFIX, with_lead(text, *fast.span())  # "does the int8 model agree?"
    if not named:
        return None
    value = ",".join(names) if several else names[-1] if names else ""
    return value, with_lead(text, (named[0] if several else named[-1]).start(), named[-1].end())


def takes_models(option: Option) -> bool:
    """Whether an option's value is a model name (or names): a free-text option whose help speaks of models."""
    return type(option.type) is ParamType and re.search(r"\bmodels?\b", option.help) is not None
