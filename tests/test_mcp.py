"""The agent face: `python -m assistant serve --mcp` as a real process, spoken to with the official MCP client
over streamable HTTP at /mcp. One MCP tool per command with a schema read from the command object; replies
as JSON text, the same structured content, and charts as PNG images."""

from __future__ import annotations

import base64
import json
import sys
import urllib.error
import urllib.request

import pytest

from assistant.commands.registry import COMMANDS
from assistant.sharing.links import META
from tests.conftest import ROOT, free_port
from tests.servers import Server, mcp_session, offline_env

pytestmark = pytest.mark.long

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def server():
    port = free_port()
    server = Server([sys.executable, "-m", "assistant", "serve", "--host", "127.0.0.1", "--port", str(port), "--mcp"],
                    ROOT, offline_env(PYTHONPATH=str(ROOT)), port)
    try:
        server.wait(lambda: "MCP server" in server.log, "word about the MCP server")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def endpoint(server) -> str:
    return f"{server.url}mcp"


def call(endpoint: str, name: str, arguments: dict):
    return mcp_session(endpoint, lambda session: session.call_tool(name, arguments))


def body_of(result) -> dict:
    """The reply's JSON, read from its first content block, which must be text holding JSON."""
    assert result.content[0].type == "text"
    body = json.loads(result.content[0].text)
    assert result.structuredContent == body  # the same answer, structured
    return body


def test_the_log_says_where_the_endpoint_is_and_gradio_mcp_is_off(server, endpoint):
    assert f"MCP server (streamable HTTP): {endpoint}" in server.log
    with pytest.raises(urllib.error.HTTPError) as refused:  # Gradio's own MCP layer is not mounted
        urllib.request.urlopen(f"{server.url}gradio_api/mcp/schema", timeout=30)
    assert refused.value.code == 404


def test_one_tool_per_command_with_schemas_read_from_the_command(endpoint):
    listed = mcp_session(endpoint, lambda session: session.list_tools()).tools
    tools = {tool.name: tool for tool in listed}
    expected = [c.name for c in COMMANDS if c.name not in META] + ["run"]
    assert [tool.name for tool in listed] == expected
    assert not {"again", "history", "export"} & set(tools)

    compare = tools["compare"]
    assert compare.description.startswith("cosine similarity")
    assert "Usage: compare a | b [| c ...]" in compare.description and "Example: compare " in compare.description
    schema = compare.inputSchema
    props = schema["properties"]
    assert props["texts"]["type"] == "array" and props["texts"]["items"] == {"type": "string"}
    assert props["texts"]["minItems"] == 2 and "texts" in schema["required"]
    assert props["pool"]["type"] == "string" and "mean" in props["pool"]["enum"] and props["pool"]["default"] == "mean"
    assert props["layer"]["type"] == "integer" and props["layer"]["minimum"] == 0
    assert props["layer"]["description"].startswith("hidden state")
    assert props["model"]["type"] == "string" and props["vs"]["type"] == "string"
    assert schema["additionalProperties"] is False

    benchmark = tools["benchmark"].inputSchema["properties"]
    assert "texts" not in benchmark  # takes none
    assert benchmark["pool"]["type"] == "array" and "sbert" in benchmark["pool"]["items"]["enum"]
    assert benchmark["threshold"]["type"] == "number" and benchmark["sample"]["minimum"] == 3
    mask = tools["mask"].inputSchema["properties"]
    assert mask["why"]["type"] == "boolean" and mask["why"]["default"] is False
    assert mask["texts"]["maxItems"] == 1
    run = tools["run"].inputSchema
    assert run["required"] == ["command"] and run["properties"]["command"]["type"] == "string"
    assert tools["compare"].outputSchema["properties"]["ok"]["type"] == "boolean"


def test_compare_answers_json_the_same_structured_and_a_png_chart(endpoint):
    result = call(endpoint, "compare", {"texts": ["A cat sat on the mat.", "A kitten | sat on the rug."],
                                        "pool": "all"})
    body = body_of(result)
    assert body["ok"] is True and body["error"] is None and result.isError is False
    assert body["command"] == "compare" and body["model"] == "minilm" and body["elapsed_ms"] > 0
    assert body["interpreted_as"] == 'compare A cat sat on the mat. | "A kitten | sat on the rug." --pool all'
    table = body["tables"][0]
    assert "cosine" in table["columns"] and {row[0] for row in table["rows"]} == {"cls", "mean", "max", "sbert"}
    b = table["columns"].index("b")
    assert table["rows"][0][b] == "A kitten | sat on the rug."  # the quoted text arrived whole
    assert body["settings"]["pool"] == "all"
    images = [block for block in result.content[1:] if block.type == "image"]
    assert len(images) == len(body["charts"]) >= 1 and "vega_lite" not in json.dumps(body)
    assert images[0].mimeType == "image/png" and base64.b64decode(images[0].data).startswith(PNG)


def test_run_reads_a_question_in_english(endpoint):
    body = body_of(call(endpoint, "run", {"command": "How similar are 'A cat sat.' and 'A kitten sat.'?"}))
    assert body["ok"] is True and body["interpreted_as"].startswith("compare A cat sat. | A kitten sat.")


def test_bad_input_answers_ok_false_with_its_sentence(endpoint):
    result = call(endpoint, "compare", {"texts": ["A cat sat.", "A kitten sat."], "layer": -1})
    body = body_of(result)
    assert body["ok"] is False and result.isError is True
    assert body["error"] == "--layer must be from 0 to 1000; got `-1`." and body["command"] == "compare"
    one = body_of(call(endpoint, "compare", {"texts": ["only one"]}))
    assert one["ok"] is False and "two texts" in one["error"]
    unknown = body_of(call(endpoint, "compare", {"texts": ["a", "b"], "colour": "red"}))
    assert unknown["ok"] is False and unknown["error"].startswith("`compare` has no argument `colour`")


def test_the_readme_names_every_tool_and_the_endpoint():
    from assistant.mcp_server import tools
    from tools.core.config import Settings

    section = (ROOT / "README.md").read_text().split("### MCP (agents)", 1)[1].split("\n## ", 1)[0]
    assert "http://127.0.0.1:7860/mcp" in section and '"mcpServers"' in section
    missing = [tool.name for tool in tools(Settings()) if f"`{tool.name}`" not in section]
    assert missing == []
