"""The agent face: one MCP tool per command, generated from the command objects, served at ``/mcp``.

Each registered command (but ``again``, ``history`` and ``export``, which are about a page's
conversation) is a tool whose input schema is read from the command: ``texts`` (how many, and what
they are), one typed property per option (integers and numbers with their bounds, a choice as an
enum, several choices as an array of them, a flag as a boolean), and ``model``. ``run`` takes a free
command line or a question in plain English. A call becomes a command line (built as the router
builds one, so texts holding ``|`` or ``--`` are quoted) and runs through :func:`dispatch.execute`
in a fresh conversation, with the web faces' file access (data folders only).

A reply is the JSON of :meth:`Reply.to_json` with each chart's Vega-Lite spec left out, both as text
(``json.dumps``) and as structured content, then each chart drawn offline as a PNG image. A refused
call answers ``ok: false`` with its sentence in ``error`` (and ``isError``), never a protocol error.

The server is the MCP SDK's low-level one (the schemas are generated, not read from a function's
signature), over streamable HTTP, stateless, answering in plain JSON; :class:`AgentFace` is both the
ASGI endpoint mounted on the page's own server and the lifespan that runs its session manager.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
import logging
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from assistant.commands.base import Command
from assistant.commands.options import Option
from assistant.commands.registry import COMMANDS, TABLE
from assistant.dispatch import Reply, execute
from assistant.render.raster import drawing_png
from assistant.session import Session
from assistant.sharing.export import chart_png
from assistant.sharing.links import META
from assistant.understanding.fill import as_text, build
from tools.benchmark.access import WEB
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.core.text import code
from tools.models.hub import ModelHub

log = logging.getLogger("assistant")

#: Where the page's server answers MCP (streamable HTTP).
PATH = "/mcp"
#: Commands about a page's conversation: no tool (each call is a fresh conversation).
LEFT_OUT = META
#: The tool that takes a free command line or a question.
RUN = "run"
LOOPBACK = ("127.0.0.1", "localhost", "::1")

INSTRUCTIONS = (
    "Ask BERT-family embedding models about text: similarity, word senses, attention, projections, masked "
    "words, STS-B benchmarks. Each tool runs one command in a fresh conversation and answers JSON: ok, text "
    "(the answer in markdown), tables (every number), settings, warnings, error (one sentence when ok is "
    "false); each chart follows as a PNG image. `run` takes a free command line or a question in plain "
    "English with its texts in quotes.")

_STRINGS = {"type": "array", "items": {"type": "string"}}
_NULLABLE = {"type": ["string", "null"]}
#: The shape of every tool's structured content (and of the JSON text beside it).
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "ok": {"type": "boolean", "description": "false: the command was refused; error says why"},
        "command": {"type": "string"}, "model": {"type": "string"}, "elapsed_ms": {"type": "number"},
        "text": {"type": "string", "description": "the answer, in markdown"},
        "warnings": _STRINGS, "settings": {"type": "object", "description": "the choices that shaped the answer"},
        "tables": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "columns": _STRINGS, "rows": {"type": "array", "items": {"type": "array"}}}}},
        "charts": {"type": "array", "description": "the charts' names, in the order of the PNG images",
                   "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "drawings": {"type": "array", "description": "pictures past a chart's size (every attention head): name, "
                     "kind and meta, their PNG images after the charts' ones", "items": {"type": "object"}},
        "error": {**_NULLABLE, "description": "one sentence: what was wrong and what to do"},
        "interpreted_as": {**_NULLABLE, "description": "the command line that ran"},
        "read_because": {**_NULLABLE, "description": "for a question: why it was read as interpreted_as"},
        "suggestions": {**_STRINGS, "description": "command lines offered when a question was unclear"},
    },
    "required": ["ok", "error"],
}


# --- the tools, from the command objects ------------------------------------------------------

def tool_commands() -> list[Command[Any, Any]]:
    """The commands that are tools, in ``help``'s order."""
    return [c for c in COMMANDS if c.name not in LEFT_OUT and c.name != RUN]


def tools(settings: Settings) -> list[types.Tool]:
    """Every tool: one per command, then ``run``."""
    hints = types.ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True)
    out = [types.Tool(name=c.name, title=c.summary, description=describe(c), inputSchema=input_schema(c, settings),
                      outputSchema=OUTPUT_SCHEMA, annotations=hints) for c in tool_commands()]
    out.append(types.Tool(name=RUN, title="Run a command line or a question", description=run_description(),
                          inputSchema=run_schema(settings), outputSchema=OUTPUT_SCHEMA, annotations=hints))
    return out


def describe(command: Command[Any, Any]) -> str:
    """The command's summary, its usage line and its first example."""
    parts = [command.summary, f"Usage: {command.usage}"]
    if command.examples:
        parts.append(f"Example: {command.examples[0]}")
    return "\n".join(parts)


def input_schema(command: Command[Any, Any], settings: Settings) -> dict[str, Any]:
    """``texts``, one property per option, and ``model`` (unless the command has a ``model`` option)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    spec = command.texts
    if spec.most != 0:
        most = spec.most if spec.most is not None else settings.max_texts
        count = f"{spec.least} to {most} texts" if spec.least != most else f"exactly {most} text{'s' * (most > 1)}"
        texts: dict[str, Any] = {**_STRINGS, "maxItems": most,
                                 "description": f"one text per item ({count}): {spec.hint or 'the texts'}"}
        if spec.least:
            texts["minItems"] = spec.least
            required.append("texts")
        properties["texts"] = texts
    for option in command.options:
        properties[option.dest] = option_schema(option)
    if "model" not in properties:
        properties["model"] = _model_property(settings)
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def option_schema(option: Option) -> dict[str, Any]:
    """One option as a JSON schema property: its type, bounds or choices, help and default."""
    ptype = option.type
    schema: dict[str, Any]
    if option.is_flag:
        schema = {"type": "boolean"}
    elif ptype.choices and ptype.several:
        schema = {"type": "array", "items": {"type": "string", "enum": list(ptype.choices)}, "uniqueItems": True}
    elif ptype.choices:
        schema = {"type": "string", "enum": list(ptype.choices)}
    elif ptype.numeric:
        schema = {"type": "integer" if getattr(ptype, "whole", True) else "number"}
        for bound in ("minimum", "maximum"):
            if getattr(ptype, bound, None) is not None:
                schema[bound] = _number(getattr(ptype, bound), getattr(ptype, "whole", True))
    else:
        schema = {"type": "string"}
    schema["description"] = option.help
    default = _plain(option.default)
    if default is not None:
        schema["default"] = default.split(",") if ptype.several and isinstance(default, str) else default
    return schema


def run_schema(settings: Settings) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": ["command"], "properties": {
        "command": {"type": "string", "description": "a command line (verb, texts separated by |, --options) or "
                    "a question in plain English with its texts in quotes"},
        "model": _model_property(settings)}}


def run_description() -> str:
    verbs = ", ".join(c.name for c in tool_commands())
    return ("Run one command line or answer one question in plain English. A command line is a verb "
            f"({verbs}), then texts separated by |, then --options: for example \"compare A cat sat. | A kitten "
            "sat. --pool all\" or \"help compare\". A question (\"How similar are 'A cat sat.' and 'A kitten "
            "sat.'?\") is read as the command that answers it: interpreted_as holds that command line, and "
            "suggestions the command lines offered when the question was unclear.")


def _model_property(settings: Settings) -> dict[str, Any]:
    return {"type": "string", "description": "the model to run on: an alias such as minilm or minilm:int8, a "
            f"Hugging Face id, or a folder under ASSISTANT_MODEL_ROOTS (default: the server's, {settings.model})"}


def _number(value: float, whole: bool) -> int | float:
    return int(value) if whole else float(value)


def _plain(value: Any) -> Any:
    """A default as JSON: an enum's value, a tuple as a list."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


# --- a call -> a command line -> a reply --------------------------------------------------------

def command_line(command: Command[Any, Any], arguments: Mapping[str, Any]) -> str:
    """The command line a tool call stands for, or a :class:`UserError` saying which argument is wrong."""
    args = dict(arguments)
    texts = args.pop("texts", None)
    if texts is None:
        texts = []
    elif isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise UserError(f"`texts` is a list of strings, for example {json.dumps(['A cat sat.', 'A kitten sat.'])}.")
    by_key = {key: o for o in command.options for key in (o.dest, o.name)}
    options: dict[str, str] = {}
    for key, value in args.items():
        option = by_key.get(key)
        if option is None:
            allowed = ", ".join([*(["texts"] if command.texts.most != 0 else []), *(o.dest for o in command.options),
                                 *([] if command.option("model") else ["model"])])
            raise UserError(f"`{command.name}` has no argument {code(key, 30)}; it takes {allowed}.")
        if value is None or (value is False and option.is_flag):
            continue
        if option.is_flag:
            if value is not True:
                raise UserError(f"`{option.dest}` is true or false; got {code(json.dumps(value), 30)}.")
            options[option.name] = ""
            continue
        if option.type.several and isinstance(value, list):
            value = ",".join(str(v) for v in value)
        if isinstance(value, float) and value.is_integer() and getattr(option.type, "whole", False):
            value = int(value)
        options[option.name] = _value(str(value))
    return build(command, texts, options)


def _value(raw: str) -> str:
    """An option's value as the parser reads it back (quoted when it holds a space, ``|`` or ``--``)."""
    if raw and not any(ch.isspace() for ch in raw):
        return as_text(raw)
    mark = "'" if '"' in raw else '"'
    return f"{mark}{raw}{mark}"


def reply_content(reply: Reply, tool: str = "") -> types.CallToolResult:
    """The reply as JSON text and structured content, and each chart as a PNG image (``tool``: the command
    named when a refused line names none)."""
    result = reply.result
    charts = list(result.charts) if result is not None else []
    drawings = list(result.drawings) if result is not None else []
    lean = (dataclasses.replace(reply, result=dataclasses.replace(result, charts=[], drawings=[]))
            if result is not None else reply)
    body = lean.to_json()
    body["command"] = body["command"] or tool
    images: list[types.ImageContent] = []
    drawn = []
    for chart in charts:
        try:
            png = chart_png(chart)
        except Exception:  # a chart vl-convert cannot draw must not lose the answer
            log.exception("could not draw chart %r", chart.name)
            body["warnings"].append(f"The chart {chart.name!r} could not be drawn as an image; the tables hold "
                                    "its numbers.")
            continue
        drawn.append({"name": chart.name})
        images.append(types.ImageContent(type="image", data=base64.b64encode(png).decode("ascii"),
                                         mimeType="image/png"))
    body["charts"] = drawn
    for drawing in drawings:  # every attention head: one PNG image, as the offline export shows it
        body["drawings"].append({"name": drawing.name, "kind": drawing.kind, "meta": drawing.meta})
        images.append(types.ImageContent(type="image", data=base64.b64encode(drawing_png(drawing)).decode("ascii"),
                                         mimeType="image/png"))
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(body)), *images],
                                structuredContent=body, isError=not body["ok"])


def answer(name: str, arguments: Mapping[str, Any], hub: ModelHub, settings: Settings) -> types.CallToolResult:
    """One tool call, in a fresh conversation that is closed after it."""
    arguments = dict(arguments or {})
    command = TABLE.get(name) if name != RUN else None
    if name != RUN and (command is None or command.name != name or name in LEFT_OUT):
        return reply_content(Reply(name, error=f"There is no tool {code(name, 30)}; the tools are "
                                   f"{', '.join(t.name for t in tools(settings))}."))
    own_model = command is not None and command.option("model") is not None
    model = "" if own_model else arguments.pop("model", "") or ""
    try:
        if not isinstance(model, str):
            raise UserError("`model` is a model's name, for example `minilm`.")
        if command is None:
            line = arguments.pop("command", "")
            if arguments:
                raise UserError(f"`run` takes command and model; not {code(', '.join(arguments), 40)}.")
            if not isinstance(line, str):
                raise UserError("`command` is a command line or a question, as one string.")
        else:
            line = command_line(command, arguments)
    except UserError as exc:
        return reply_content(Reply(name, error=str(exc)), command.name if command else "")
    session = Session(model=model)
    try:
        reply = execute(line, session, hub, settings, access=WEB)
    finally:
        session.close()  # one call, one conversation: nothing of it stays on the server
    return reply_content(reply, command.name if command else "")


# --- the server -------------------------------------------------------------------------------

def server(hub: ModelHub, settings: Settings) -> Server:
    """The MCP server: its tools list and its calls, at most ``settings.concurrency`` at once."""
    app: Server = Server("embedding-assistant", instructions=INSTRUCTIONS)
    limiter = anyio.CapacityLimiter(settings.concurrency)

    @app.list_tools()
    async def list_tools() -> list[types.Tool]:
        return tools(settings)

    # the command's own parser checks the arguments, so a bad one gets the same sentence as on the page
    @app.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return await anyio.to_thread.run_sync(answer, name, arguments, hub, settings, limiter=limiter)

    return app


class AgentFace:
    """The MCP endpoint on the page's own server: an ASGI app at :data:`PATH` and the lifespan that mounts it
    and runs its session manager (stateless streamable HTTP, plain JSON responses).

    ``guard``: check the Host and Origin headers against the loopback addresses (DNS rebinding), for a
    server bound to this machine only; a public address or a share link turns it off.
    """

    def __init__(self, hub: ModelHub, settings: Settings, guard: bool = True) -> None:
        self.server = server(hub, settings)
        self.security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]) if guard else None
        self.manager: StreamableHTTPSessionManager | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.manager is None:  # before start-up or after shut-down
            await send({"type": "http.response.start", "status": 503, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"The MCP server is not running."})
            return
        await self.manager.handle_request(scope, receive, send)

    @asynccontextmanager
    async def lifespan(self, app: Any) -> AsyncIterator[None]:
        """Mount the endpoint on ``app`` (once) and run a session manager while the server serves."""
        if not any(getattr(route, "path", None) == PATH for route in app.router.routes):
            app.router.routes.insert(0, Route(PATH, endpoint=self))
        # a session manager runs once: each start of the server gets its own
        self.manager = StreamableHTTPSessionManager(self.server, json_response=True, stateless=True,
                                                    security_settings=self.security)
        try:
            async with self.manager.run():
                yield
        finally:
            self.manager = None


def guarded(host: str | None, share: bool) -> bool:
    """Whether the endpoint should refuse other Host headers: served on loopback only, and no share link."""
    bound = host or os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1"
    return bound in LOOPBACK and not share
