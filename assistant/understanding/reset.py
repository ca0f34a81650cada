"""Options a follow-up sets back to their default ("back to the last layer", "drop the layer option", "every layer
and head again"): read by :func:`back_to_default`, which `again` then merges (``--name default`` removes one)."""

from __future__ import annotations

from assistant.commands.base import Command
from assistant.understanding.models_said import takes_models
from assistant.understanding.spans import compiled
from assistant.understanding.spoken import Spoken, count_option, option_names
from assistant.understanding.words import ALONE, EVERY_ONE, ITS_OWN_COUNT, LAST_ONE, RESET, WHOLE_LAYER

#: Where a reset was said, while :func:`back_to_default` reads on ("every layer and head": the head after it too).
_RESET_MARK = "\x00"


def back_to_default(text: str, spec: Command) -> Spoken:
    """The options of ``spec`` that ``text`` sets back ("back to the last layer", "drop the layer option", "reset
    the pooling"): name -> ``default``, the value `again` takes for it; ``rest``: the text without those words."""
    found = Spoken(rest=text)
    for option in spec.options:  # by its own name or its usual word; each pattern is compiled once
        if takes_models(option) and compiled(ALONE).search(found.rest):  # "just this model on its own"
            found.options[option.name] = "default"
            found.rest = compiled(ALONE).sub(" ", found.rest)
            continue
        names = "|".join(option_names(spec, option)[:2])
        said = compiled(RESET.format(names) + (EVERY_ONE.format(names) if "default: every" in option.help else "")
                        + (WHOLE_LAYER if "default: every head" in option.help else "")
                        + (LAST_ONE.format(names) if "the last layer by default" in option.help else "")
                        + (ITS_OWN_COUNT if option.name == count_option(spec) else ""))
        if said.search(found.rest):  # ("all the layers again", where every layer is the default)
            found.options[option.name] = "default"
            found.rest = said.sub(f" {_RESET_MARK} ", found.rest)
    for option in spec.options if found.options else ():  # "back to all layers and all heads"
        names = "|".join(option_names(spec, option)[:2])
        also = compiled(rf"\b(?:and|,|of|in|across|for)\s+(?:all|every|the\s+default)\s+(?:the\s+)?(?:{names})s?\b|"
                        rf"\band\s+(?:the\s+)?(?:{names})s\b(?!\s*\d)|"  # ("show all layers and heads")
                        rf"{_RESET_MARK}\s*(?:and|,)\s+(?:the\s+)?(?:{names})\b(?!\s*\d)")  # ("every layer and head")
        if option.name not in found.options and also.search(found.rest):
            found.options[option.name] = "default"
            found.rest = also.sub(" ", found.rest)
    found.rest = found.rest.replace(_RESET_MARK, " ")
    return found
