"""The command language, checked without loading a model."""

from __future__ import annotations

import pytest

from assistant.commands.registry import TABLE
from assistant.parsing import parse
from tools.core.config import Settings
from tools.core.errors import UserError


def p(line: str, **settings):
    return parse(line, TABLE, Settings(**settings))


def error(line: str, **settings) -> str:
    with pytest.raises(UserError) as info:
        p(line, **settings)
    return str(info.value)


def test_texts_options_and_case():
    inv = p("COMPARE  A cat sat. |  A kitten sat.  --POOL All --layer 3")
    assert inv.verb == "compare"
    assert inv.texts == ["A cat sat.", "A kitten sat."]
    assert inv.options == {"pool": "all", "layer": 3, "vs": None}


def test_defaults_and_flags():
    inv = p("tokenize Hello there --truncation --max-length 8")
    assert inv.options == {"max_length": 8, "padding": None, "truncation": True, "vs": None}
    assert p("tokenize Hello").options["truncation"] is False


def test_quotes_keep_pipes_and_dashes_inside_a_text():
    inv = p('compare "a | b --pool max" | \'c\'')
    assert inv.texts == ["a | b --pool max", "c"]
    assert inv.options["pool"] == "mean"


def test_apostrophes_and_dashes_inside_words_are_text():
    inv = p("compare One woman's ankle -- measured. | A well-known fact")
    assert inv.texts == ["One woman's ankle -- measured.", "A well-known fact"]


def test_a_verb_typed_with_a_colon_is_the_verb():
    inv = parse("sim: good morning | good night", TABLE)
    assert (inv.verb, inv.texts) == ("compare", ["good morning", "good night"])
    with pytest.raises(UserError, match="Unknown command"):
        parse("simm: good morning | good night", TABLE)


def test_aliases_map_to_the_command():
    assert p("sim a | b").verb == "compare"
    assert p("?").verb == "help"


def test_empty_line():
    assert "Type a command" in error("   ")


def test_verb_alone_names_what_is_missing_with_an_example():
    message = error("compare")
    assert "needs at least two texts separated by `|`" in message
    assert "for example" in message
    # the example is a whole line that works, not one cut short (compare's first has 144 characters)
    example = TABLE["compare"].examples[0]
    assert message.endswith(f"for example `{example}`.") and len(example) > 90
    tokenize = TABLE["tokenize"].examples[0]
    assert tokenize.endswith(".") and error("tokenize").endswith(f"for example `{tokenize}`")  # one full stop


def test_unknown_verb_suggests_close_verbs():
    assert "Did you mean `compare`?" in error("compar a | b")


def test_unknown_verb_offers_the_obvious_intent():
    assert "try `compare A dog. | A cat.`" in error("A dog. | A cat.")


def test_unknown_option_names_the_known_ones():
    message = error("compare a | b --pol all")
    assert "has no option `--pol`" in message
    assert "Did you mean `--pool`?" in message


def test_bad_choice_lists_allowed_values():
    message = error("compare a | b --pool meen")
    assert "use one of cls, mean, max, sbert, all" in message and "Did you mean `mean`?" in message


def test_bad_number_names_the_range():
    assert "takes a whole number" in error("compare a | b --layer two")
    assert "from 1 to 100000" in error("tokenize a --max-length 0")
    assert "from 1 to 100000" in error("tokenize a --max-length 99999999999999999999999")


def test_option_without_value():
    assert "--layer needs a value" in error("compare a | b --layer")


def test_option_given_twice():
    assert "given twice" in error("compare a | b --layer 1 --layer 2")


def test_compare_with_one_text():
    assert "needs at least two texts" in error("compare only one text")


def test_empty_text_between_pipes():
    assert "Text 2 is empty" in error("compare a | | b")


def test_an_empty_quoted_text_is_refused_as_empty_not_read_as_two_quote_marks(hub):
    from assistant.dispatch import execute
    from assistant.session import Session

    with pytest.raises(UserError, match="Text 1 is empty: write something between the quotes"):
        parse("attend ''", TABLE)
    reply = execute("attend '' ", Session(), hub, hub.settings)  # (not a question about the text "''")
    assert not reply.ok and not reply.routed and reply.error == "Text 1 is empty: write something between the quotes."
    reply = execute('compare "" | a cat', Session(), hub, hub.settings)
    assert not reply.ok and reply.error.startswith("Text 1 is empty: write something between the `|` separators")


def test_too_many_texts_names_the_limit():
    message = error("compare " + " | ".join(f"text {i}" for i in range(1000)))
    assert "at most 64 texts per command (ASSISTANT_MAX_TEXTS); got 1,000" in message


def test_too_long_text_names_the_limit():
    message = error("compare " + "x" * 20_001 + " | b")
    assert "20,001 characters long; the limit is 20,000" in message


def test_limits_come_from_settings():
    assert "at most 3 texts" in error("compare a | b | c | d", max_texts=3)


def test_tokenize_takes_at_most_a_pair():
    assert "at most 2 texts" in error("tokenize a | b | c")


def test_hostile_text_in_errors_stays_inside_code_spans():
    message = error("`<img src=x onerror=alert(1)>` | b")
    assert "``" in message  # the fence grows past the user's own backticks


def test_a_command_of_a_few_actions_refuses_another_word_when_parsed():
    # `corpus map ...` is no action of `corpus`: refused with the actions, so a sentence that starts with "corpus"
    # can be read as a question instead
    message = error("corpus map coloured by rating")
    assert "`corpus` does not know `map`" in message and "list, load, use, info, drop, stop" in message
    assert parse("corpus LOAD reviews.csv", TABLE).texts == ["LOAD reviews.csv"]
