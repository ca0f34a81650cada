"""The previous command on a second model: "compare that with bert-small", "how does minilm:int8 see that?", "and
with the int8 model?" (``--vs`` side by side, or the command's own model option)."""

from __future__ import annotations

import re
from collections.abc import Mapping

import assistant.understanding.spoken as spoken
from assistant.commands import slots
from assistant.commands.base import Command, Invocation
from assistant.session import Session
from assistant.sharing.links import merged_line
from assistant.understanding.context import sounds_like_follow_up
from assistant.understanding.earlier import previous_command
from assistant.understanding.facts import Understanding
from assistant.understanding.models_said import takes_models
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.text import code
from tools.models.names import FAST_SUFFIX, split_fast

#: "compare with bert-base" (no texts), "both side by side": the previous command beside another model.
_VERSUS = re.compile(r"^\s*(?:and\s+|now\s+)?(?:compare\s+(?:(?:the|its|this|that)\s+[a-z-]+\s+)?"
                     r"(?:with|against|to|on)|next\s+to|beside|alongside)\b"  # ("compare the rollout with ...")
                     r"|.*\bside[- ]by[- ]side\b", re.I)
#: "it", "the same pair": the previous reply, when a question asks for it on another model ("compare it with
#: bert-base", "the same head on bert-small as well").
_IT = re.compile(r"\bit\b|\bthe\s+same\s+(?:pair|sentences?|texts?|head|layer|heads|layers|thing)\b", re.I)
#: How a question asks for the previous answer on another model ("compare that with bert-small").
_ANOTHER_MODEL = re.compile(r"\b(?:with|vs\.?|versus|against|on|using|in|for|does|would|answer|see|compare|next to|"
                            r"beside|alongside|put)\b", re.I)
#: "also show minilm:int8": another model beside the answer, for a command that shows two side by side (``--vs``).
_ALSO = re.compile(r"\b(?:also|too|as well)\b", re.I)


def _named_in_several_words(words: str, spec: Command, table: Mapping[str, Command]) -> bool:
    """Whether ``words`` name a command other than ``spec`` by a name of several words ("logit lens", "attention
    flow"; a name of one word is often a noun of the question: "embedding", "map")."""
    said = " ".join(re.findall(r"[a-z]+", words.lower()))
    return any(re.search(rf"\b{name.replace('-', ' ')}\b", said) for name, command in table.items()
               if "-" in name and command.name != spec.name)


def another_model(question: str, session: Session, table: Mapping[str, Command],
                  settings: Settings) -> Understanding | None:
    """The previous command on a second model, side by side (``--vs``): "compare that with bert-small",
    "how does minilm:int8 see that?", "and with the int8 model?". None when the question names no model
    or brings texts of its own (then it is a new question)."""
    read = slots.read(question)
    whose = (found := slots.MODEL.search(question)) is not None and re.match(r"['’]s\b", question[found.end():])
    if read.quoted or not (sounds_like_follow_up(question) or _IT.search(question) or _VERSUS.match(question)
                           or whose):
        return None
    asks = _ANOTHER_MODEL.search(question) is not None or whose  # ("mpnet's guesses?": that model's answer)
    if not asks and not _ALSO.search(question):
        return None
    if (last := previous_command(session, table)) is None:
        return None
    previous, spec = last
    if _named_in_several_words(slots.MODEL.sub(" ", read.rest), spec, table):
        return None  # "logit lens on it, with bert-small alongside" after `mask`: another command, read as asked
    if not asks and spec.option("vs") is None:
        return None  # "include bert-small too" after `benchmark`: its list of models grows
    found = slots.MODEL.search(question)
    if len({slots.model_name(m) for m in slots.MODEL.finditer(question)}) > 1:
        return None  # "do that for minilm and mpnet": a list of models, for the command's own option
    own_model = session.model or settings.model
    if found is not None and not (slots.model_name(found) == own_model and slots.INT8.search(
            question[:found.start()] + " " + question[found.end():])):  # ("minilm's layers with the int8 model's")
        other = slots.model_name(found)
    elif slots.INT8.search(question):
        other = split_fast(own_model)[0] + FAST_SUFFIX
    else:
        return None
    own = next((o for o in spec.options if takes_models(o)), None)
    said = spoken.read(read.rest, spec, own_model=own_model).options  # "and the attributions"
    also = {o.dest: said[o.name] for o in spec.options if o.name in said and not takes_models(o)}
    if not any(o.name == "vs" for o in spec.options) and own is not None:  # `mask --model bert-base`
        try:
            line = merged_line(previous, Invocation("again", [], {**also, own.dest: other}), table, settings)
        except UserError:
            line = None
        if line is not None:
            return Understanding(line=line, follow_up=True,
                                 because=f"it asks for the previous command, {code(previous, 80)}, with "
                                         f"{code(other, 40)}")
    if not any(o.name == "vs" for o in spec.options):
        return Understanding(message=f"`{spec.name}` does not answer on two models side by side; switch this "
                             f"conversation's model, then run it again.", suggestions=(f"model {other}", previous),
                             follow_up=True)
    try:
        line = merged_line(previous, Invocation("again", [], {**also, spec.option("vs").dest: other}), table, settings)
    except UserError as exc:
        return Understanding(message=f"I read this as {code(previous, 80)} on {code(other, 40)}, but: {exc}",
                             suggestions=(previous,), follow_up=True)
    return Understanding(line=line, follow_up=True,
                         because=f"it asks for the previous command, {code(previous, 80)}, on {code(other, 40)}")
