"""A command is one object: a toy command registered in one place is found by `help`, the parser, the
router, the JSON face and the MCP tools, with nothing else changed; every command's options come from its
parameter dataclass and its choices from the toolkit's enums."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import pytest

from assistant.commands.base import Command, Context, Texts
from assistant.commands.options import param
from assistant.commands.registry import COMMANDS, TABLE, registered
from assistant.dispatch import execute
from assistant.mcp_server import answer, tools
from assistant.parsing import parse
from assistant.session import Session
from assistant.understanding import understand
from tools.core.errors import UserError
from tools.core.results import Result, Table
from tools.encoding.pooling import Pooling

pytestmark = pytest.mark.long


class Shout(Command[Any, dict]):
    """A toy: each text in capitals, repeated, with the letter count as facts."""

    name, aliases = "shout", ("yell",)
    summary = "each text in capital letters, repeated"
    texts = Texts(1, 3, "one to three texts", "text [| text2 ...]")
    examples = ("shout hello | world --times 2",)
    phrasings = ("write \"A\" in capital letters", "say \"A\" loudly in upper case", "uppercase the text \"A\"",
                 "make \"A\" all caps", "shout \"A\" at me")

    @dataclass(frozen=True)
    class Params:
        times: int = param("how many times to repeat", 1, minimum=1, maximum=5)
        pool: str = param("not used: shows that choices come from an enum", "mean", choices=Pooling)

    def compute(self, ctx: Context, texts: list[str], p: Params) -> dict:
        return {"texts": texts, "loud": [t.upper() * p.times for t in texts], "pool": p.pool}

    def reply(self, facts: dict) -> Result:
        import pandas as pd

        frame = pd.DataFrame({"text": facts["texts"], "shouted": facts["loud"]})
        return Result("shout", f"Shouted {len(facts['texts'])} texts.", [Table("shouted", frame)],
                      settings={"pool": facts["pool"]})


@pytest.fixture()
def shout():
    with registered(Shout) as command:
        yield command


def test_a_toy_command_is_found_everywhere_without_touching_another_file(shout, hub):
    assert TABLE["shout"] is shout and TABLE["yell"] is shout and shout in list(COMMANDS)
    listing = execute("help", Session(), hub)
    assert "shout" in list(listing.result.tables[0].frame["command"])
    usage = execute("help shout", Session(), hub)
    assert "shout text [| text2 ...] [--times N] [--pool cls|mean|max|sbert]" in usage.result.text

    inv = parse("yell hi | there --times 3 --pool CLS", TABLE)
    assert (inv.verb, inv.texts, inv.options) == ("shout", ["hi", "there"], {"times": 3, "pool": "cls"})
    with pytest.raises(UserError, match="--times must be from 1 to 5"):
        parse("shout hi --times 9", TABLE)

    read = understand("could you make 'good morning' all caps?", Session(), hub, TABLE, hub.settings)
    assert read.line == "shout good morning"

    reply = execute("shout hi --times 2", Session(), hub).to_json()
    assert reply["ok"] and reply["command"] == "shout" and reply["tables"][0]["rows"] == [["hi", "HIHI"]]

    by_name = {t.name: t for t in tools(hub.settings)}
    schema = by_name["shout"].inputSchema["properties"]
    assert schema["times"]["type"] == "integer" and schema["times"]["maximum"] == 5
    assert "mean" in schema["pool"]["enum"]
    called = answer("shout", {"texts": ["hey"], "times": 2}, hub, hub.settings)
    assert json.loads(called.content[0].text)["tables"][0]["rows"] == [["hey", "HEYHEY"]]


def test_help_shows_a_commands_options_and_says_so_when_it_takes_none(hub):
    compare = execute("help compare", Session(), hub).result
    assert "--pool" in set(compare.table("compare options")["option"].str.split().str[0])
    syntax = execute("help syntax", Session(), hub).result  # no empty table with headers only
    assert not syntax.tables and "Usage: `syntax text` (it takes no options)" in syntax.text


def test_the_toy_leaves_no_trace_once_unregistered(hub):
    with registered(Shout):
        assert "shout" in TABLE
    assert "shout" not in TABLE and "yell" not in TABLE
    assert not execute("shout hi", Session(), hub).ok


def test_every_option_comes_from_a_parameter_field_and_every_choice_from_an_enum():
    for command in COMMANDS:
        fields = {f.name for f in dataclasses.fields(command.Params)} if dataclasses.is_dataclass(
            command.Params) else set()
        own = [o for o in command.options if o.name != "vs"]
        assert {o.dest.rstrip("_") for o in own} <= {f.rstrip("_") for f in fields} | {"with"}, command.name
        assert command.usage.startswith(command.name)
        for option in own:
            assert option.help, f"{command.name} --{option.name} has no help"
    compare = TABLE["compare"]
    assert compare.option("pool").choices == (*(p.value for p in Pooling), "all")


def test_side_by_side_is_offered_exactly_where_a_command_says_how_two_answers_differ():
    takes = {c.name for c in COMMANDS if c.takes_vs}
    assert takes == {"compare", "word", "tokenize", "attend", "neighbors", "why", "probe", "contextuality", "rollout",
                     "lens"}
    assert all(c.option("vs") is not None for c in COMMANDS if c.takes_vs)
    assert all(c.option("vs") is None for c in COMMANDS if not c.takes_vs and c.name != "again")
