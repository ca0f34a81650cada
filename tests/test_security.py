"""Safe models, faults and hardening.

Pickle checkpoints load only through transformers' weights-only loader (a pickle that
would run code is refused and runs nothing); remote code, URLs, `..` and folders
outside ASSISTANT_MODEL_ROOTS are refused; a broken model leaves the previous one
working; an unexpected exception is one sentence with a reference id; the server
serves no file but its own.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import torch

from assistant.commands.base import Command as CommandSpec
from assistant.commands.registry import registered
from assistant.dispatch import execute
from assistant.session import Session
from tests.conftest import ROOT, free_port
from tools.core.config import Settings
from tools.models.hub import ModelHub

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "a", "dog"]


class RunsCode:
    """Pickles to a call of os.system: what a hostile pytorch_model.bin carries."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    """A model root holding tiny BERTs: pickle-only, hostile pickle, remote code, broken; plus an outside folder."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    root = tmp_path_factory.mktemp("models")
    outside = tmp_path_factory.mktemp("outside")
    vocab = root / "vocab.txt"
    vocab.write_text("\n".join(WORDS) + "\n")
    config = BertConfig(vocab_size=len(WORDS), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32)
    torch.manual_seed(0)
    model = BertModel(config)

    def folder(name: str, base: Path = root) -> Path:
        path = base / name
        path.mkdir()
        config.save_pretrained(path)
        BertTokenizerFast(vocab_file=str(vocab)).save_pretrained(path)
        return path

    pickled = folder("pickled")  # save_pretrained writes safetensors in transformers 5: write the pickle ourselves
    torch.save(model.state_dict(), pickled / "pytorch_model.bin")
    hostile = folder("hostile")
    torch.save({**model.state_dict(), "payload": RunsCode(root / "PWNED")}, hostile / "pytorch_model.bin")
    remote = folder("remote")
    model.save_pretrained(remote)
    cfg = json.loads((remote / "config.json").read_text())
    cfg["auto_map"] = {"AutoConfig": "configuration_evil.EvilConfig", "AutoModel": "modeling_evil.EvilModel"}
    (remote / "config.json").write_text(json.dumps(cfg))
    for module in ("configuration_evil.py", "modeling_evil.py"):
        (remote / module).write_text(f"open({str(root / 'REMOTE')!r}, 'w').write('ran')\n")
    broken = folder("broken")  # a config and a tokenizer but no weights at all
    (broken / "config.json").write_text('{"model_type": "bert", "hidden_size": ')  # cut short
    folder("elsewhere", outside)
    model.save_pretrained(outside / "elsewhere")
    (root / "escape").symlink_to(outside / "elsewhere")
    return {"root": root, "outside": outside, "model": model}


@pytest.fixture(scope="module")
def safe_hub(roots):
    return ModelHub(Settings(model_roots=str(roots["root"])))


def run_in(hub: ModelHub, line: str, session: Session | None = None):
    return execute(line, session or Session(), hub, hub.settings)


def test_a_pickle_only_checkpoint_loads_only_through_the_weights_only_loader(safe_hub, roots, monkeypatch):
    seen: list[object] = []
    real_load = torch.load

    def spy(*args, **kwargs):
        seen.append(kwargs.get("weights_only"))
        return real_load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", spy)
    lm = safe_hub.get("pickled")
    assert seen and all(flag is True for flag in seen)  # every unpickling went through weights_only=True
    assert torch.equal(lm.encoder.embeddings.word_embeddings.weight, roots["model"].embeddings.word_embeddings.weight)
    reply = run_in(safe_hub, "compare the cat sat | a dog sat", Session(model="pickled"))
    assert reply.ok, reply.error
    assert reply.result.model == "pickled"


def test_a_pickle_that_would_run_code_is_refused_and_runs_nothing(safe_hub, roots):
    reply = run_in(safe_hub, "model hostile")
    assert not reply.ok
    assert "pickle checkpoint that holds more than plain tensors" in reply.error
    assert not (roots["root"] / "PWNED").exists()


def test_a_config_asking_for_remote_code_is_refused_before_any_of_it_runs(safe_hub, roots):
    reply = run_in(safe_hub, "model remote")
    assert not reply.ok
    assert "asks to run its own code (auto_map in config.json)" in reply.error
    assert not (roots["root"] / "REMOTE").exists()


@pytest.mark.parametrize("name, sentence", [
    ("https://huggingface.co/bert-base-uncased", "looks like a URL"),
    ("http://127.0.0.1:9/model", "looks like a URL"),
    ("file:///etc", "looks like a URL"),
    ("../../etc", "may not contain `..`"),
    ("pickled/../../outside", "may not contain `..`"),
    ("/etc", "outside the allowed model folders"),
    ("~/.cache", "outside the allowed model folders"),
])
def test_urls_dot_dot_and_folders_outside_the_roots_are_refused(safe_hub, name, sentence):
    reply = run_in(safe_hub, f"model {name}")
    assert not reply.ok and sentence in reply.error, reply.error


def test_a_folder_outside_the_roots_is_refused_by_path_and_through_a_symlink(safe_hub, roots):
    reply = run_in(safe_hub, f"model {roots['outside'] / 'elsewhere'}")
    assert not reply.ok and "outside the allowed model folders" in reply.error
    reply = run_in(safe_hub, f"model {roots['root'] / 'escape'}")  # a link inside the root pointing out
    assert not reply.ok and "outside the allowed model folders" in reply.error
    reply = run_in(safe_hub, "model escape")  # as a name under the root: the link is not followed out
    assert not reply.ok and "`escape`" in reply.error
    assert not any(m.source.location.startswith(str(roots["outside"])) for m in safe_hub.loaded())


def test_a_model_that_fails_to_load_leaves_the_previous_one_working(safe_hub, lm):
    session = Session()
    assert run_in(safe_hub, "model pickled", session).ok
    reply = run_in(safe_hub, "model broken", session)
    assert not reply.ok and "Could not load the model folder `broken`" in reply.error
    assert session.model == "pickled"
    after = run_in(safe_hub, "compare the cat | the dog", session)
    assert after.ok and after.result.model == "pickled"


def test_an_unexpected_exception_is_one_sentence_with_a_reference_logged_with_its_traceback(
        run, lm, monkeypatch, caplog):
    class Crash(CommandSpec):
        name, summary = "crash", "fails"

        def compute(self, ctx, texts, params):
            return {}["no such key"]

    with registered(Crash), caplog.at_level(logging.ERROR, logger="assistant"):
        reply = run("crash")
    assert not reply.ok
    ref = reply.error.split("reference ")[1][:8]
    assert reply.error.count(". ") == 0 and reply.error.endswith(".")
    assert "Traceback" not in reply.error and "KeyError" not in reply.error
    logged = [r for r in caplog.records if ref in r.getMessage()]
    assert logged and logged[0].exc_info and logged[0].exc_info[0] is KeyError
    assert run("compare A cat. | A dog.").ok


# --- the server over HTTP -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def hardened_app(hub):
    """The app launched as `python -m assistant` launches it, with a 1 MB limit on every kind of upload."""
    from assistant.app import build, launch_options

    settings = dataclasses.replace(hub.settings, max_upload_mb=1, corpus_max_mb=1)
    demo = build(hub, settings)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **launch_options(settings))
    try:
        yield demo, f"http://127.0.0.1:{port}"
    finally:
        demo.close()


def http_get(url: str) -> tuple[int, str, dict]:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(url, timeout=30) as response:
            return response.status, response.read(200_000).decode("utf-8", "replace"), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(200_000).decode("utf-8", "replace"), dict(exc.headers)


@pytest.mark.parametrize("path", [
    "/gradio_api/file=/etc/passwd",
    "/gradio_api/file/etc/passwd",
    "/gradio_api/file=/proc/self/environ",
    "/gradio_api/file=../../../../etc/passwd",
    "/gradio_api/file=%2Fetc%2Fpasswd",
    "/gradio_api/file=/tmp/gradio/../../etc/passwd",
    f"/gradio_api/file={ROOT}/assistant/app.py",
    f"/gradio_api/file={ROOT}/tools/core/config.py",
    "/file=/etc/passwd",
    "/gradio_api/file=tests/conftest.py",
])
def test_no_server_file_is_served_outside_the_apps_own(hardened_app, path):
    status, body, _ = http_get(hardened_app[1] + path)
    assert status in (400, 403, 404), (status, body[:200])
    assert "root:" not in body and "def build" not in body and "ASSISTANT" not in body


def test_the_embedded_models_own_files_are_not_served(hardened_app, lm):
    status, body, _ = http_get(f"{hardened_app[1]}/gradio_api/file={lm.source.location}/config.json")
    assert status in (403, 404) and "hidden_size" not in body


def test_file_urls_neither_redirect_nor_reach_the_loopback(hardened_app):
    status, _, headers = http_get(f"{hardened_app[1]}/gradio_api/file=http://127.0.0.1:{free_port()}/x")
    assert status == 403 and "location" not in {k.lower() for k in headers}


def test_monitoring_is_off_and_the_app_itself_is_served(hardened_app):
    assert http_get(hardened_app[1] + "/monitoring")[0] in (403, 404)
    status, body, _ = http_get(hardened_app[1] + "/")
    assert status == 200 and "Embedding assistant" in body
    assert hardened_app[0].show_error is False


def test_uploads_over_the_size_limit_are_refused(hardened_app):
    import httpx

    url = hardened_app[1] + "/gradio_api/upload"
    small = httpx.post(url, files={"files": ("ok.csv", b"sentence1,sentence2,score\na,b,1\n")}, timeout=30)
    assert small.status_code == 200
    big = httpx.post(url, files={"files": ("big.csv", b"x" * (1024 * 1024 + 4096))}, timeout=30)
    assert big.status_code == 413


@pytest.mark.slow
def test_the_app_sets_analytics_off_by_default():
    code = ("import os; os.environ.pop('GRADIO_ANALYTICS_ENABLED', None); import assistant.app; "
            "from gradio import analytics; "
            "print(os.environ['GRADIO_ANALYTICS_ENABLED'], analytics.analytics_enabled())")
    env = {k: v for k, v in os.environ.items() if k != "GRADIO_ANALYTICS_ENABLED"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={**env, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert out.stdout.split() == ["False", "False"], out.stderr[-2000:]


def test_gradio_is_the_pinned_release_with_the_published_advisories_fixed():
    import gradio
    from gradio import route_utils

    requirements = (ROOT / "requirements.txt").read_text()
    assert "gradio[mcp]==6.31.0" in requirements and gradio.__version__ == "6.31.0"
    major, minor = (int(x) for x in gradio.__version__.split(".")[:2])
    assert (major, minor) >= (6, 16)  # GHSA-j36p-7w88-g82j (FileExplorer path traversal) fixed in 6.16.0
    assert hasattr(route_utils, "secure_url_stream_response")  # /file=<url> open redirect (#13593) fixed
