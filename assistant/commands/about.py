"""Commands about the tool and its model: help, model, tokenize."""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from assistant.commands.base import Command, Context, Meaning, Texts, terms_pattern
from assistant.commands.options import param
from assistant.commands.registry import commands, register
from assistant.commands.slots import INT8, MODEL, TARGET_WORD, Slots, asking_words, model_name
from tools.core.errors import UserError
from tools.core.results import Result, Table
from tools.core.text import code
from tools.inspection import info, replies, tokens
from tools.inspection.facts import Padding, Tokens
from tools.models.names import FAST_SUFFIX, split_fast

ORDER = 10
#: Words that ask how a command is typed ("what options does project take?", "the usage of selfattn").
ABOUT_TYPING = re.compile(r"\b(?:options?|flags?|usage|syntax|arguments?|parameters?|help|hepl|manual|explain|"
                          r"examples?|the (?!last|previous|same|next|first)[\w-]+ command|"
                          r"how (?:do i|to|can i|should i) (?:use|type|write)|tell me more about)\b", re.I)
#: What a question that names a command and asks how it is typed adds to ``help``'s score.
NAMED_BONUS = 0.4
#: What a quoted sentence takes from `model` (it names a text, not a model).
SENTENCE_PENALTY = 0.15


@register
class Help(Command[Any, Result]):
    name, aliases = "help", ("?", "commands")
    followed = False
    summary = "the command list, or one command's usage, examples and terms, or what one term means"
    texts = Texts(0, 1, "a command's name or a term", "[command|term]")
    examples = ("help", "help compare", "help selectivity")
    phrasings = (
        'what can you do?',
        'what commands are there?',
        'show me the list of commands',
        'how do I use this assistant?',
        'help me, what can I type here?',
        'which commands exist and what are their options?',
        'how do I use the attend command?',
        'what options does the compare command take?',
        'explain how to type a mask command',
        'what kinds of questions can I ask?',
        'I am new here, where do I start?',
        'give me an overview of this tool',
    )

    def compute(self, ctx: Context, texts: list[str], params: Any) -> Result:
        if texts:
            meaning, command = asked_of_help(texts[0], ctx.commands)  # "help compare", "help with clusters", "help CKA"
            if command is None:
                known = {n.lower(): n for c in commands() for n in (c.name, *c.aliases, *(m.term for m in c.meanings))}
                close = difflib.get_close_matches(texts[0].lower(), list(known), n=1, cutoff=0.75)
                meant = known[close[0]] if close else None
                hint = f"; did you mean `help {meant}`? Or" if meant else ";"
                raise UserError(f"There is no command or term {code(texts[0], 30)}{hint} type `help` for the list.",
                                fixes=((texts[0], meant),) if meant else ())
            rows = [{"option": o.usage(), "what it does": o.help,
                     "default": "" if o.default is None else str(o.default)} for o in command.options]
            frame = pd.DataFrame(rows, columns=["option", "what it does", "default"])
            examples = "\n".join(f"- `{e}`" for e in command.examples)
            aliases = f" (also: {', '.join(command.aliases)})" if command.aliases else ""
            asked = f"**{meaning.term}** (a term of `{command.name}`): {meaning.text}\n\n" if meaning else ""
            terms = "".join(f"\n- **{m.term}**: {m.text}" for m in command.meanings if m is not meaning)
            listed = f"\n\n{'Other terms' if meaning else 'Terms'}:{terms}" if terms else ""
            text = (f"{asked}**{command.name}**{aliases}: {command.summary}\n\nUsage: `{command.usage}`"
                    f"{'' if rows else ' (it takes no options)'}\n\nExamples:\n{examples}{listed}")
            return Result("help", text, [Table(f"{command.name} options", frame)] if rows else [])
        frame = pd.DataFrame([{"command": c.name, "usage": c.usage, "what you get": c.summary} for c in commands()])
        text = ("Type a command, texts separated by `|`, options after `--`, or ask in plain English "
                "(\"How similar are 'A cat sat.' and 'A kitten sat.'?\"). "
                "`help <command>` shows one command's options and examples.")
        return Result("help", text, [Table("commands", frame)])

    def fit(self, slots: Slots) -> float:
        """A question without quoted texts that names a command and asks how it is typed."""
        if slots.quoted or not ABOUT_TYPING.search(slots.rest):
            return 0.0
        names = {n for c in commands() if c.name != "help" for n in (c.name, *c.aliases)
                 if ABOUT_TYPING.fullmatch(n) is None}
        return NAMED_BONUS if any(w in names for w in re.findall(r"[\w-]+", slots.rest.lower())) else 0.0

    def question_texts(self, slots: Slots, table: Mapping[str, Command[Any, Any]]) -> list[str] | None:
        named = _named(slots.rest, table)
        return [table[named[0]].name] if named else []


def asked_of_help(text: str, table: Mapping[str, Command[Any, Any]]) -> tuple[Meaning | None, Command[Any, Any] | None]:
    """What `help TEXT` is about: the command it names by name, else the term whose meaning it asks ("help
    selectivity": that meaning and its command), else a command named among its words or said by its terms."""
    said = text.lower().strip()
    if said in table and table[said].name == said:  # ("help cka": the command, its terms' meanings among its help)
        return None, table[said]
    meant = [(m, c) for c in commands() if (m := c.meaning_said(text)) is not None]
    if meant:  # ("help anisotropy", an alias of `contextuality` too: the term's meaning first; the longest term)
        return max(meant, key=lambda pair: len(pair[0].term))
    named = _named(text, table)  # (an alias, "help layer-similarity"; then a name among its words)
    if named:
        return None, table[named[0]]
    return None, next((c for c in commands() if c.terms and terms_pattern(c.terms).search(text)), None)


def _named(text: str, table: Mapping[str, Command[Any, Any]]) -> list[str]:
    """The commands ``text`` names (the whole text first, then its words; a command's own name before another
    command's alias: "explain the benchmark command")."""
    if text.lower().strip() in table:
        return [text.lower().strip()]
    named = [n for m in re.finditer(r"([\w-]+)(\s+command\b)?", text.lower())  # not "syntax" or "explain": words
             if (n := _as_named(m.group(1), table)) and table[n].name != "help"  # that ask about typing, unless
             and (ABOUT_TYPING.fullmatch(n) is None or m.group(2))]  # "command" follows ("the syntax command")
    return sorted(named, key=lambda w: table[w].name != w)


def _as_named(word: str, table: Mapping[str, Command[Any, Any]]) -> str | None:
    """``word`` as a command's name, also said as a verb's other form ("tokenizing", "clustered", "compares")."""
    stems = [word[:-len(end)] for end in ("ing", "ed", "es", "s") if word.endswith(end) and len(word) > len(end) + 2]
    return next((n for n in (word, *(s + e for s in stems for e in ("", "e", "s"))) if n in table), None)


@register
class Model(Command[Any, Result]):
    name = "model"
    followed = False
    passes_through = True
    summary = ("the model's facts (layers, heads, sizes, parameters, device); with a name, switch to it (`int8`: "
               "this model's int8 fast path)")
    texts = Texts(0, 1, "a model name", "[name]")
    examples = ("model", "model minilm", "model int8")
    phrasings = (
        'which model is this?',
        'how many layers and heads does the model have?',
        'what is the hidden size of the model?',
        'how many parameters does this model have?',
        'tell me about the current model',
        'switch to another model',
        'what is the shape of the embedding matrix?',
        'what is the vocabulary size of the model?',
        'is the model on the CPU or the GPU?',
        'what model is loaded?',
        'switch to bert-base',
        'use the mpnet model instead',
        'change the model to bert-small',
        'load minilm:int8',
    )

    def compute(self, ctx: Context, texts: list[str], params: Any) -> Result:
        if texts:
            name = texts[0].strip()
            if name.lower() in ("int8", FAST_SUFFIX):  # the conversation's own model on its int8 path
                name = split_fast(ctx.session.model or ctx.settings.model)[0] + FAST_SUFFIX
            loaded = ctx.model(name)  # raises before the conversation's model changes
            ctx.session.model = name
            result = replies.describe(info.description(loaded))
            return dataclasses.replace(result, text=f"Switched this conversation to **{loaded.name}**. " + result.text)
        return replies.describe(info.description(ctx.model()))

    def fit(self, slots: Slots) -> float:
        """A quoted sentence is no model's name: a question that carries one asks another command about it."""
        return -SENTENCE_PENALTY if slots.quotes_a_phrase else 0.0

    def question_texts(self, slots: Slots, table: Mapping[str, Command[Any, Any]]) -> list[str] | None:
        if slots.quoted:
            return slots.texts[:1]
        named = MODEL.search(slots.rest)
        if named is None and (hub := _HUB_NAME.search(slots.rest)) is not None:
            return [hub.group(1)]  # "load bert-base-uncased": a name of the hub's, said without its organisation
        return [model_name(named)] if named else ["int8"] if INT8.search(slots.rest) else []  # ("the int8 model")


#: A model of the hub named after the verb that loads it, without its organisation ("load bert-base-uncased").
_HUB_NAME = re.compile(r"^\W*(?:load|switch\s+to|use|try|open)\s+(?:the\s+)?([a-z][a-z0-9]*(?:[-_.][a-z0-9]+)+)"
                       r"(?:\s+(?:model|instead))?\W*$", re.I)
#: What a word is asked to turn into, after it ("which word pieces does unbelievably become").
_BECOMES = re.compile(r"\s+(?:becomes?|turns?\s+into|(?:gets?\s+)?(?:split|broken|chopped)\s+into|breaks?\s+into)\W*$",
                      re.I)


@register
class Tokenize(Command[Any, Tokens]):
    name, aliases = "tokenize", ("tokens", "tok")
    terms = ("sub-?words?", "word-?pieces?", "word pieces")
    meanings = (
        Meaning("word pieces", "the subword units of the model's vocabulary: a word it lacks is split into pieces it "
                "has (WordPiece marks a continuation with ##)."),
    )
    summary = "a row per token: word pieces, special tokens, ids, masks, token types; the decoded round trip"
    texts = Texts(1, 2, "a text, or a pair `a | b`", "text [| text2]")
    examples = ("tokenize BERT provides contextual embeddings.",
                "tokenize Where is the bank? | By the river. --padding max_length --max-length 16")
    phrasings = (
        'how is "A" tokenized?',
        'split "A" into tokens',
        'what are the word pieces of "A"?',
        'wordpiece breakdown of "A"',
        'show me the token ids of "A"',
        'how does the tokenizer break up "A"?',
        'how many tokens is "A"?',
        'what subword pieces does "w" turn into?',
        'break "w" into wordpieces',
        'tokenize the pair "A" and "B"',
    )

    @dataclass(frozen=True)
    class Params:
        max_length: int | None = param("pad to / cut at this many tokens", minimum=1, maximum=100_000)
        padding: str | None = param("pad the encoding", choices=Padding)
        truncation: bool = param("cut the input at --max-length (or the model's limit)", False)

    def question_texts(self, slots: Slots, table: Mapping[str, Command[Any, Any]]) -> list[str] | None:
        """"Which word pieces does unbelievably become": the text, without the verb that asks for its pieces; "the
        word covid": that word."""
        if slots.quoted:
            return None
        word = TARGET_WORD.search(slots.rest)
        if word is not None and word.group(1).lower() not in asking_words(self.phrasings):  # (not "the word pieces")
            return [word.group(1)]  # ("does the tokenizer know the word covid? show me its tokens")
        asked = _BECOMES.search(slots.payload)
        return [slots.payload[:asked.start()]] if asked is not None and asked.start() > 0 else None

    def compute(self, ctx: Context, texts: list[str], p: Params) -> Tokens:
        return tokens.tokenization(ctx.model(), texts, p.max_length, p.padding, p.truncation)

    def reply(self, facts: Tokens) -> Result:
        return replies.tokenize(facts)

    def differ(self, a: Tokens, b: Tokens, names: tuple[str, str]) -> str:
        return replies.tokenize_difference(a, b, names)
