"""Sharing: follow-ups (`again`, `history`), permalinks, conversation export, the Space bundle,
ZeroGPU wrapping, `--share` without a network, and the MCP server."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from assistant.commands.base import Context
from assistant.commands.registry import TABLE
from assistant.session import Session
from assistant.sharing.export import html_page, markdown_zip, pipe_table
from assistant.sharing.links import full_turns, page_address, permalink
from tests.conftest import ROOT, free_port
from tests.servers import Server, mcp_session, offline_env

CAT = "attend The cat sat on the mat --layer 1 --head 3"
COMPARE = "compare A man plays guitar. | Someone is playing an instrument. | The stock market fell."


# --- again -------------------------------------------------------------------------------

def test_again_reruns_attend_at_layer_2_with_the_other_options_kept(run):
    session = Session()
    first = run(CAT, session)
    assert first.ok, first.error
    reply = run("again --layer 2", session)
    assert reply.ok, reply.error
    assert reply.result.command == "attend"
    assert reply.result.settings["layer"] == 2 and reply.result.settings["head"] == 3
    assert reply.result.text.startswith("Re-ran `attend The cat sat on the mat --layer 2 --head 3`.")
    direct = run("attend The cat sat on the mat --layer 2 --head 3")
    assert reply.result.table("weights").equals(direct.result.table("weights"))
    assert not reply.result.table("weights").equals(first.result.table("weights"))
    # history keeps the command that really ran, so `again` chains and permalinks reproduce it
    assert session.history[-1] == "attend The cat sat on the mat --layer 2 --head 3"
    chained = run("again --head default", session)
    assert chained.ok and chained.result.settings["layer"] == 2 and chained.result.settings["view"] != "head"
    assert session.history[-1] == "attend The cat sat on the mat --layer 2"


def test_again_refuses_with_the_previous_commands_own_sentences(run):
    session = Session()
    assert "no earlier command to run again" in run("again --layer 2", session).error
    run(CAT, session)
    wrong = run("again --pool cls", session)
    assert not wrong.ok and "`attend` has no option `--pool`" in wrong.error
    assert "out of range" in run("again --layer 99", session).error
    assert "--layer needs a value" in run("again --layer", session).error
    assert session.history == [CAT]  # refused follow-ups change nothing


def test_again_with_new_texts_flags_and_quoted_texts(run):
    session = Session()
    assert run('compare "x | y" | z --pool cls', session).ok
    reply = run("again --layer 3", session)
    assert reply.ok, reply.error
    assert session.history[-1] == 'compare "x | y" | z --pool cls --layer 3'
    assert reply.result.settings["layer"] == 3
    assert run("again A cat sat. | A kitten sat.", session).ok
    assert session.history[-1] == "compare A cat sat. | A kitten sat. --pool cls --layer 3"
    assert run("tokenize Hello there --truncation --max-length 4", session).ok
    assert run("again --truncation off", session).ok
    assert session.history[-1] == "tokenize Hello there --max-length 4"


# --- history and permalinks ---------------------------------------------------------------

def test_history_lists_the_commands_with_permalinks_that_reproduce_them(run):
    session = Session(base_url="https://example.hf.space/")
    run(CAT, session)
    run("again --layer 2", session)
    run("compare a cat | a dog", session)
    reply = run("history", session)
    assert reply.ok
    table = reply.result.table("history")
    assert list(table["command"]) == [CAT, "attend The cat sat on the mat --layer 2 --head 3", "compare a cat | a dog"]
    for line, link in zip(table["command"], table["permalink"]):
        parts = urlsplit(link)
        assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "https://example.hf.space/"
        assert parse_qs(parts.query)["q"] == [line]
    assert "[compare a cat \\| a dog](https://example.hf.space/?q=compare%20a%20cat%20%7C%20a%20dog)" \
        in reply.result.text
    assert "has no answered commands yet" in run("history").error


def test_permalink_and_page_address():
    link = permalink("http://127.0.0.1:7860/", "compare a & b | c?", "bert-small")
    query = parse_qs(urlsplit(link).query)
    assert query == {"q": ["compare a & b | c?"], "model": ["bert-small"]}
    assert permalink("", "help") == "?q=help"
    page = {"host": "127.0.0.1:7860", "origin": "http://127.0.0.1:7860",
            "referer": "http://127.0.0.1:7860/?q=help&model=minilm"}
    assert page_address(page) == "http://127.0.0.1:7860/"
    proxied = {"host": "10.0.0.5:7860", "x-forwarded-host": "me-app.hf.space", "x-forwarded-proto": "https"}
    assert page_address(proxied) == "https://me-app.hf.space/"
    foreign = {"host": "127.0.0.1:7860", "origin": "http://127.0.0.1:7860", "referer": "https://evil.example/x"}
    assert page_address(foreign) == "http://127.0.0.1:7860/"  # a referer from elsewhere is never used
    assert page_address({}) == ""


# --- export --------------------------------------------------------------------------------

def _conversation(run) -> Session:
    session = Session(base_url="http://127.0.0.1:7860/")
    for line in (COMPARE, "tokenize <b>bold</b> | pipe", "export"):
        reply = run(line, session)
        assert reply.ok, reply.error
    return session


def test_export_command_gives_a_zip_and_an_html_file(run):
    session = _conversation(run)
    reply = run("export", session)
    assert reply.ok
    names = {a.filename: a for a in reply.result.artifacts}
    assert set(names) == {"conversation-markdown.zip", "conversation.html"}
    archive = zipfile.ZipFile(io.BytesIO(names["conversation-markdown.zip"].data))
    text = archive.read("conversation.md").decode()
    assert text.count("\n## ") == 2  # compare and tokenize; earlier exports are not exported again
    assert "| text | 1: A man plays guitar. |" in text  # a pipe table
    charts = [n for n in archive.namelist() if n.startswith("charts/") and n.endswith(".vl.json")]
    assert charts and json.loads(archive.read(charts[0]))["$schema"].startswith("https://vega.github.io/schema/")
    assert any(n.startswith("tables/") and n.endswith(".csv") for n in archive.namelist())
    assert "export --format" in run("help export").result.text
    assert "nothing to export yet" in run("export").error


def test_markdown_and_html_escape_user_text(run, hub):
    session = _conversation(run)
    turns = full_turns(Context(session, hub, hub.settings, commands=TABLE),
                       [t for t in session.turns if t.command != "export"])
    page = html_page(turns, session.base_url)
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page
    assert "<script" not in page.lower() and " src='http" not in page and ' src="http' not in page
    assert page.count("src='data:image/png;base64,") == sum(len(t.result.charts) for t in turns)
    import pandas as pd
    table = pipe_table(pd.DataFrame({"token": ["a|b", "<i>x</i>", "**y**"], "score": [0.5, 1e-9, None]}))
    rows = table.splitlines()
    assert all(row.count(" | ") == 1 for row in rows[2:])  # a `|` inside a cell does not split it
    assert "<i>" not in table and "\\*\\*y\\*\\*" in table and "1e-09" in table
    data = markdown_zip(turns)
    assert zipfile.ZipFile(io.BytesIO(data)).testzip() is None


# --- ZeroGPU -------------------------------------------------------------------------------

FAKE_SPACES = """
calls = []

def GPU(fn, duration=None):
    def on_gpu(*args, **kwargs):
        calls.append(fn.__name__)
        return fn(*args, **kwargs)
    return on_gpu
"""

PROBE = """
import spaces
from tools.encoding import encode, forward
from tools.models.hub import ModelHub
from tools.core.config import Settings
encode.encode(ModelHub(Settings()).get("minilm"), ["a cat", "a dog"])
print(forward.forward_batches.__name__, spaces.calls)
"""


@pytest.mark.slow
def test_gpu_decorator_is_a_no_op_here_and_wraps_the_forward_pass_where_spaces_is_installed(tmp_path):
    from tools.encoding import forward as vectors
    from tools.models import gpu

    def forward():
        return "ran"

    assert gpu.zero_gpu() is None  # the repository's own spaces/ folder is not Hugging Face's `spaces`
    assert gpu.gpu(forward) is forward
    assert vectors.forward_batches.__name__ == "forward_batches"
    (tmp_path / "spaces.py").write_text(FAKE_SPACES)  # stands in for the package a ZeroGPU Space has
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**offline_env(), "SPACES_ZERO_GPU": "true",
                              "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-2:] == ["on_gpu", "['forward_batches']"]  # one batch, one wrapped forward pass


# --- the Space bundle, --share and --mcp as real processes ----------------------------------

def test_space_bundle_front_matter_and_pins_match_the_repository():
    sys.path.insert(0, str(ROOT / "spaces"))
    try:
        import build as space_build
    finally:
        sys.path.remove(str(ROOT / "spaces"))
    import gradio

    meta = space_build.front_matter((ROOT / "spaces" / "README.md").read_text())
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py" and meta["python_version"] == "3.11"
    assert meta["sdk_version"] == gradio.__version__
    assert len(meta["short_description"]) <= 60 and meta["emoji"] and meta["colorFrom"] and meta["title"]
    space_build.check()  # sdk_version equals the repository's gradio pin


def _space_venv(path, requirements):
    """A fresh venv that installs ``requirements`` with no network: pip resolves every pin against the project
    venv's packages (seen through a .pth file) and must find each one already satisfied; returns its python."""
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    python = path / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "project_venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index", "--dry-run",
                           "--disable-pip-version-check", "-r", str(requirements)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Would install" not in done.stdout, done.stdout[-2000:]  # nothing missing, nothing at another version
    return python


@pytest.mark.slow
def test_space_bundle_is_assembled_and_its_app_answers_run_through_gradio_client(tmp_path):
    from gradio_client import Client

    sys.path.insert(0, str(ROOT / "spaces"))
    try:
        import build as space_build
    finally:
        sys.path.remove(str(ROOT / "spaces"))
    out = tmp_path / "space"
    built = subprocess.run([sys.executable, "spaces/build.py", str(out)], cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    assert {p.name for p in out.iterdir()} == {"app.py", "README.md", "requirements.txt", "tools", "assistant"}
    assert not list(out.rglob("__pycache__"))
    bundle_pins = space_build.pins((out / "requirements.txt").read_text())
    assert bundle_pins == space_build.pins((ROOT / "requirements.txt").read_text())  # the project's pins, all
    assert {"torch", "gradio", "datasets"} <= set(bundle_pins)
    python = _space_venv(tmp_path / "venv", out / "requirements.txt")
    again = subprocess.run([sys.executable, "spaces/build.py", str(out)], cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 2 and "is not empty" in again.stderr
    port = free_port()
    server = Server([str(python), "app.py"], out, offline_env(GRADIO_SERVER_PORT=str(port)), port)
    try:
        server.wait(server.answers, "page")
        client = Client(server.url, verbose=False)
        data = client.predict("compare A cat sat on the mat. | A kitten sat on the rug.", "", api_name="/run")
        assert data["ok"] is True and data["model"] == "minilm"
        assert data["tables"][0]["rows"]
        assert client.predict("compare only one", "", api_name="/run")["ok"] is False
    finally:
        server.stop()


@pytest.mark.slow
def test_share_without_network_says_so_and_mcp_serves_the_command_tools():
    port = free_port()
    server = Server([sys.executable, "-m", "assistant", "serve", "--port", str(port), "--share", "--mcp"], ROOT,
                    offline_env(PYTHONPATH=str(ROOT)), port)
    try:
        server.wait(lambda: "No public link could be made" in server.log, "word about the public link")
        server.wait(lambda: "MCP server" in server.log, "word about the MCP server")
        assert server.answers()  # and it keeps serving
        assert f"MCP server (streamable HTTP): {server.url}mcp" in server.log  # no share link: the local address
        listed = mcp_session(f"{server.url}mcp", lambda session: session.list_tools()).tools
    finally:
        server.stop()
    tools = {tool.name: tool for tool in listed}
    assert {"compare", "attend", "benchmark", "run"} <= set(tools) and "export" not in tools
    run_tool = tools["run"]
    assert "command line" in run_tool.description
    properties = run_tool.inputSchema["properties"]
    assert properties["command"]["type"] == "string" and "question" in properties["command"]["description"]
    assert properties["model"]["type"] == "string" and "minilm" in properties["model"]["description"]


# --- in the browser ------------------------------------------------------------------------

def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@pytest.mark.browser
def test_permalink_runs_on_load_and_its_copy_link_reproduces_the_command(live_app, browser, tmp_path):
    browser.grant_permissions(["clipboard-read", "clipboard-write"], origin=_origin(live_app))
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_app}?q={quote(COMPARE)}&model=minilm")
    page.wait_for_selector(".answer-link a", timeout=120_000)  # nobody typed anything
    page.wait_for_selector(".vega-embed canvas, .vega-embed svg", timeout=60_000)
    bot = page.locator("#conversation .log").inner_text()
    assert "Similarity matrix of 3 texts" in bot and "0.6752" in bot
    assert page.locator("#command-box textarea").input_value() == ""
    href = page.locator(".answer-link a").first.get_attribute("href")
    assert href.startswith(live_app)
    assert parse_qs(urlsplit(href).query) == {"q": [COMPARE], "model": ["minilm"]}
    button = page.locator("button.copy-link").first
    assert button.get_attribute("data-link") == href
    button.click()
    page.wait_for_function("document.querySelector('button.copy-link').textContent === 'Copied'", timeout=10_000)
    assert page.evaluate("navigator.clipboard.readText()") == href
    # the conversation export buttons give files
    page.locator("#export-html").click()
    page.wait_for_function("document.querySelector('#export-files').innerText.replace(/\\s+/g, '')"
                           ".includes('conversation.html')", timeout=60_000)
    page.screenshot(path=str(tmp_path / "permalink.png"), full_page=True)
    assert not errors, errors
    page.close()


@pytest.mark.browser
def test_exported_html_opens_offline_with_chart_image_and_table(run, hub, browser, tmp_path):
    session = Session()
    assert run(COMPARE, session).ok
    path = tmp_path / "conversation.html"
    path.write_text(html_page(full_turns(Context(session, hub, hub.settings, commands=TABLE), session.turns)),
                    encoding="utf-8")
    page = browser.new_page()
    outside: list[str] = []

    def only_files(route):
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_files)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    images = page.evaluate("[...document.images].map(i => [i.src.slice(0, 22), i.complete && i.naturalWidth])")
    assert images and all(src == "data:image/png;base64," and width > 200 for src, width in images), images
    cells = page.locator("table.data td").all_inner_texts()
    assert "1: A man plays guitar." in cells and "0.675189" in cells  # guitar vs instrument, 6 decimals
    assert outside == []
    page.screenshot(path=str(tmp_path / "export.png"), full_page=True)
    page.close()
