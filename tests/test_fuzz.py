"""Fuzzing parse -> dispatch -> render with the real model.

Every input, however odd (unicode, control characters, quotes, pipes, huge numbers,
very long words, hostile markup, any verb and any option name), ends in a normal
reply or a clear error sentence: never the internal-error reply, never an exception
past the dispatcher, and the rendered markdown carries no live markup.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.commands.registry import COMMANDS, TABLE
from assistant.dispatch import execute
from assistant.render.html import reply_payload
from assistant.session import Session

VERBS = sorted(TABLE)
OPTION_NAMES = sorted({o.name for spec in COMMANDS for o in spec.options} | {"x", "layer-", "LAYER", "Pool"})
CHOICES = sorted({c for spec in COMMANDS for o in spec.options for c in o.choices})
HOSTILE = [
    "<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "[click](javascript:alert(1))",
    "![x](http://evil.example/x.png)", "<a href='javascript:alert(1)'>x</a>", "`` ` ``", "**bold**", "$x^2$",
    "[MASK]", "<mask>", "[CLS]", "[SEP]", "[PAD]", "\\", "|", "||", "\"", "'", "--", "-- --layer 3",
]
NUMBERS = ["0", "-1", "1", "2", "3", "12", "13", "-0", "1e308", "1e400", "-1e400", "inf", "-inf", "nan", "NaN",
           "9" * 30, "1" * 5000, "0x10", "1_000", "3.5", "٣", "²", "1/2", ""]

unicode_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=40)
control_text = st.text(alphabet=st.sampled_from(list("\x00\x01\x07\x08\t\n\r\x0b\x0c\x1b\x7f\u200b\u202e\ufeff")),
                       max_size=6)
long_word = st.builds(lambda ch, n: ch * n, st.sampled_from(["a", "é", "漢", "🙂", "x-", "[MASK]"]),
                      st.integers(100, 3000))
word = st.one_of(st.sampled_from(["the", "bank", "cat", "Paris", "river", "code", "A man plays guitar."]),
                 st.sampled_from(HOSTILE), st.sampled_from(NUMBERS), unicode_text, control_text, long_word)
text = st.lists(word, min_size=0, max_size=6).map(" ".join)
option_value = st.one_of(st.sampled_from(NUMBERS), st.sampled_from(CHOICES), unicode_text,
                         st.lists(st.sampled_from(CHOICES), min_size=1, max_size=4).map(",".join),
                         st.integers(-(10 ** 20), 10 ** 20).map(str), st.floats().map(repr))
option = st.tuples(st.sampled_from(OPTION_NAMES), st.one_of(st.none(), option_value)).map(
    lambda pair: f"--{pair[0]}" + (f" {pair[1]}" if pair[1] is not None else ""))
verb = st.one_of(st.sampled_from(VERBS), st.sampled_from(VERBS).map(str.upper), unicode_text)
line = st.builds(
    lambda v, texts, options, sep: f"{v} " + sep.join(texts) + " " + " ".join(options),
    verb, st.lists(text, min_size=0, max_size=5), st.lists(option, max_size=4),
    st.sampled_from([" | ", "|", " || ", " | | "]))
quoted = st.builds(lambda v, a, b: f'{v} "{a}" | \'{b}\'', st.sampled_from(VERBS), text, text)


def _value_for(option) -> st.SearchStrategy[str | None]:
    """A value this option accepts (mostly), so the model work behind the command runs too."""
    if option.is_flag:
        return st.none()
    kind = option.type
    if kind.choices and not kind.several:
        return st.one_of(st.sampled_from(option.choices), st.sampled_from(option.choices).map(str.upper))
    if kind.choices:
        return st.lists(st.sampled_from(option.choices), min_size=1, max_size=3, unique=True).map(",".join)
    if kind.numeric and kind.whole:
        lo = -2 if kind.minimum is None else int(kind.minimum)
        hi = 14 if kind.maximum is None else int(kind.maximum)
        return st.one_of(st.integers(lo, min(hi, lo + 60)), st.just(hi)).map(str)
    if kind.numeric:
        return st.floats(-1, 6, allow_nan=False).map(lambda v: f"{v:.3g}")
    return st.one_of(st.sampled_from(["minilm", "stsb-dev", "bert-small", "x"]), unicode_text)


def _command(spec) -> st.SearchStrategy[str]:
    least, most = spec.texts.least, spec.texts.most
    most = 4 if most is None else min(most, 4)
    sentence = st.lists(word, min_size=1, max_size=8).map(" ".join)
    texts = st.lists(sentence, min_size=least, max_size=max(least, most))
    if not spec.options:
        return texts.map(lambda chosen: f"{spec.name} " + " | ".join(chosen))
    options = st.lists(st.sampled_from(spec.options), unique_by=lambda o: o.name, max_size=3).flatmap(
        lambda chosen: st.tuples(*[_value_for(o).map(lambda v, o=o: f"--{o.name}" + ("" if v is None else f" {v}"))
                                   for o in chosen]))
    return st.tuples(texts, options).map(lambda parts: f"{spec.name} " + " | ".join(parts[0]) + " "
                                         + " ".join(parts[1]))


#: Lines the parser mostly accepts: a verb with the right number of texts and its own options.
plausible = st.sampled_from(COMMANDS).flatmap(_command)
lines = st.one_of(plausible, plausible, line, quoted, unicode_text, text)

#: The tags a reply's HTML may hold; any other tag, an ``on…`` attribute or a script link is live markup.
SAFE_TAGS = {"div", "p", "strong", "em", "code", "pre", "table", "thead", "tbody", "tr", "th", "td", "details",
             "summary", "b", "button", "ul", "ol", "li", "br", "a", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
             "blockquote", "sub", "span"}


def live_markup(text: str) -> list[str]:
    """Tags or attributes in ``text`` that could run or load something."""
    from html.parser import HTMLParser

    found: list[str] = []

    class Scan(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag not in SAFE_TAGS:
                found.append(tag)
            for name, value in attrs:
                if name.startswith("on") or (name in ("href", "src") and
                                             not re.match(r"(https?:|\?|/|#)", (value or "").strip(), re.I)):
                    found.append(f"{tag} {name}={value}")

    Scan().feed(text)
    return found


@pytest.fixture(scope="module", autouse=True)
def offline():
    """Hub names answer at once instead of waiting on a network that is not there."""
    before = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    yield
    if before is None:
        os.environ.pop("HF_HUB_OFFLINE", None)
    else:
        os.environ["HF_HUB_OFFLINE"] = before


@pytest.fixture(scope="module")
def fuzz_settings(hub, lm):
    return dataclasses.replace(hub.settings, time_limit_s=60.0)


def check(command: str, hub, fuzz_settings) -> None:
    reply = execute(command, Session(), hub, fuzz_settings)
    if reply.ok:
        assert reply.result is not None and reply.result.text
    else:
        assert reply.error and isinstance(reply.error, str)
        assert "Something went wrong" not in reply.error, (command[:300], reply.error)
        assert "Traceback" not in reply.error
    payload = reply_payload(reply)
    assert not live_markup(payload["html"]), (command[:300], live_markup(payload["html"]), payload["html"][:500])
    json.dumps(reply.to_json(), allow_nan=False)  # strict JSON for the HTTP API
    json.dumps(payload, allow_nan=False)  # what the page receives


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(command=lines)
def test_any_line_ends_in_a_reply_or_a_clear_error(command, hub, fuzz_settings):
    check(command, hub, fuzz_settings)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(command=lines)
def test_any_line_ends_in_a_reply_or_a_clear_error_long_run(command, hub, fuzz_settings):
    check(command, hub, fuzz_settings)


@pytest.mark.parametrize("command", [
    "compare " + "x" * 20_000 + " | y",
    "word " + "a" * 3000 + " | " + "a" * 3000,
    "tokenize \x00\x1b[31m | \u202e\ufeff",
    "attend " + "🙂" * 600,
    "compare a | b --layer 99999999999999999999",
    "compare a | b --layer " + "9" * 5000,
    "benchmark --threshold nan",
    "benchmark --threshold inf",
    "mask [MASK] " * 300,
    "word <script>alert(1)</script> | <script>alert(1)</script> is here. | and <script>alert(1)</script> there.",
    'compare "a | b" | "c',
    "compare the | bank | <script>alert(1)</script> --pool cls",  # found by the long run: similarity's summary
    "compare ![x](http://evil.example/x.png) | [a](javascript:alert(1)) | <img src=x onerror=alert(1)>",
    "HELP COMPARE",
    "model ../../etc/passwd",
    "",
    "|||||",
    "--layer 3",
])
def test_known_edge_cases(command, hub, fuzz_settings):
    check(command, hub, fuzz_settings)
