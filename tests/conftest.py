"""Shared fixtures: the real packaged model, loaded once per test session, and no network."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

#: A Ray cluster started by a test listens on 127.0.0.1 only (Ray's loopback mode, read when ray is imported).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

#: Fixtures shared by several test files (the tiny masked-LM model).
pytest_plugins = ["tests.layers_models"]

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
#: STS-B lives beside the project, never inside it.
STSB_DIR = ROOT.parent / "shared" / "data" / "stsb"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files marked ``long`` first, each file's tests kept together and in order: `make test` hands whole files
    to its workers in this order (``--no-loadscope-reorder``), so the short files fill the end of the run."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.fixture(scope="session")
def stsb_dir() -> Path:
    """The STS-B folder beside the project; a test that needs it fails with this sentence when it is missing
    (a skip would hide that the benchmark was never checked). Tests that need no data do not ask for it."""
    if not (STSB_DIR / "sts-dev.tsv").is_file():
        pytest.fail(f"STS-B is not at {STSB_DIR}: the tests read it from ../shared/data/stsb beside the project")
    return STSB_DIR

from tools.core.config import Settings
from tools.models.hub import ModelHub


@pytest.fixture(scope="session")
def hub(tmp_path_factory) -> ModelHub:
    """One hub for the whole run, as in the app: models are shared. Its data folders hold STS-B and a small
    file of reviews, and its corpus folder the `reviews` corpus made from it, so every example of every
    command (`search late delivery`, `probe`) answers as it would for a person who loaded their texts."""
    from assistant.dispatch import execute
    from assistant.session import Session
    from tests.test_corpus_commands import write_reviews

    folder = tmp_path_factory.mktemp("examples")
    # the references a model's verdicts read (computed once from STS-B dev for a model with none shipped) are kept
    # where every worker of the run finds them, as the processes of one machine share them
    workers = tmp_path_factory.getbasetemp().parent if os.environ.get("PYTEST_XDIST_WORKER") else folder
    write_reviews(folder / "reviews.csv")
    settings = Settings(data_dir=f"{STSB_DIR}:{folder}", corpus_dir=str(folder / "corpora"),
                        conversation_dir=str(folder / "conversations"), reference_dir=str(workers / "references"))
    models = ModelHub(settings)
    loaded = execute("corpus load reviews.csv --name reviews", Session(), models, settings)
    assert loaded.ok, loaded.error
    return models


@pytest.fixture(scope="session")
def lm(hub):
    """The embedded default model (all-MiniLM-L6-v2 from its pip package)."""
    return hub.get("minilm")


@pytest.fixture(scope="session")
def tiny_folder(tmp_path_factory, lm):
    """A random 2-layer BERT saved with MiniLM's tokenizer (its weights do not matter to the backends' tests)."""
    import torch
    from transformers import BertConfig, BertModel

    folder = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=lm.tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=128)
    BertModel(config).save_pretrained(folder)
    lm.tokenizer.save_pretrained(folder)
    return folder


def load_tiny(folder):
    """The tiny BERT of :func:`tiny_folder`, loaded afresh (a test may quantise it in place)."""
    import torch

    from tools.models.hub import load
    from tools.models.names import ModelSource

    return load(ModelSource("tiny", str(folder), "local"), torch.device("cpu"))


@pytest.fixture()
def tiny(tiny_folder):
    """The tiny BERT, loaded for this test alone."""
    return load_tiny(tiny_folder)


@pytest.fixture()
def run(hub):
    """Run a command line in a fresh conversation and return the Reply."""
    from assistant.dispatch import execute
    from assistant.session import Session

    def _run(line: str, session: Session | None = None):
        return execute(line, session or Session(), hub, hub.settings)

    return _run


def free_port() -> int:
    """A port nobody listens on, picked by the OS, for servers the tests start."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def live_app(hub):
    """The real app on a free 127.0.0.1 port for the whole run; closed by this fixture."""
    from assistant.app import build, launch_options

    demo = build(hub, hub.settings)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **launch_options(hub.settings))
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


@pytest.fixture()
def serve(hub, tmp_path):
    """Start the real page with the given settings on a free port; every server is closed after the test."""
    started = []

    def _serve(**overrides):
        from assistant.app import build, launch_options
        from tools.core.config import Settings

        settings = Settings(**{"conversation_dir": str(tmp_path / "conversations"), **overrides})
        demo = build(hub, settings)
        port = free_port()
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                    **launch_options(settings))
        started.append(demo)
        return demo, f"http://127.0.0.1:{port}/"

    yield _serve
    for demo in started:
        demo.close()


CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


#: Each tab a test opens is a new visitor: the page's kept conversation id (localStorage, shared by a browser's
#: tabs) is dropped when a tab first opens, and kept across its reloads (sessionStorage lives as long as the tab).
#: tests/test_conversations.py opens its own context, without this, to reopen a closed tab.
NEW_VISITOR = """(() => { try { if (!sessionStorage.getItem('new-visitor')) {
  sessionStorage.setItem('new-visitor', '1'); localStorage.removeItem('assistant-conversation'); }
} catch (e) {} })();"""


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """Debian's chromium, headless, driven by Playwright, with a fresh profile; each tab a new visitor."""
    import shutil

    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("chromium is not installed: run `make test`, which installs Debian's chromium")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=executable, headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000})
        context.add_init_script(NEW_VISITOR)
        try:
            yield context
        finally:
            context.close()
