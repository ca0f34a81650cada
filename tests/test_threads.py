"""Issue 16/20: a forward pass's torch thread choice is its own, even while another command runs.

The thread count is chosen per pass (one thread for a short input, every core for
a large batch) and set, used and restored under one process-wide lock. Two
commands on two different models run at once (the page's concurrency is 2); every
encoder layer records the thread count it ran with and when. Each pass must run
every layer with the count chosen for it, no two passes may overlap (two passes
at once would share the cores and each thread chooser would time a pass slowed by
the other), and the process keeps the count it had before.
"""

from __future__ import annotations

import threading
import time

import pytest
import torch

from assistant.session import Session
from tools.encoding.cache import clear_cache
from tools.encoding.encode import encode
from tools.models import threads as threads_module
from tools.models.backends.torch_fp32 import TorchBackend
from tools.models.hub import LoadedModel
from tools.models.names import ModelSource
from tools.models.threads import SINGLE_THREAD_TOKENS

LONG = ("In the early morning the fishermen pushed their boats into the grey water, counting the nets and "
        "calling to each other across the harbour while the gulls circled overhead")


def tiny_model(lm: LoadedModel) -> LoadedModel:
    """A second model: a random 2-layer BERT with MiniLM's tokenizer (the weights do not matter here)."""
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=lm.tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=512,
                        attn_implementation="eager")
    return LoadedModel(ModelSource("tiny-random-bert", "", "local"), lm.tokenizer, BertModel(config).eval(),
                       torch.device("cpu"))


def _record(model: LoadedModel, passes: list[dict], monkeypatch) -> list:
    monkeypatch.setattr(model.state.threads, "pick", lambda: 2)  # large passes choose every core
    current = threading.local()

    def start(module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        current.record = {"model": model.name, "tokens": int(ids.numel()), "threads": [torch.get_num_threads()],
                          "start": time.perf_counter()}

    def layer(module, args, output):
        time.sleep(0.003)  # long enough for the other command's pass to start, were it allowed to
        current.record["threads"].append(torch.get_num_threads())
        current.record["end"] = time.perf_counter()

    def end(module, args, output):
        passes.append(current.record)

    return ([model.encoder.register_forward_pre_hook(start, with_kwargs=True),
             model.encoder.register_forward_hook(end)]
            + [block.register_forward_hook(layer) for block in model.encoder.encoder.layer])


@pytest.fixture()
def recorded_passes(lm, monkeypatch):
    """Each pass of either model: its tokens, the thread count at its start and after every layer, its interval."""
    monkeypatch.setattr(threads_module, "max_threads", lambda: 2)
    # The torch passes are the subject: once an earlier bulk batch has moved the default model to ONNX
    # Runtime (its own thread pool, sized per session), its passes would not reach these hooks.
    monkeypatch.setattr(lm.state, "backend", TorchBackend())
    other = tiny_model(lm)
    passes: list[dict] = []
    handles = _record(lm, passes, monkeypatch) + _record(other, passes, monkeypatch)
    try:
        yield other, passes
    finally:
        for handle in handles:
            handle.remove()


def test_two_commands_at_once_each_pass_keeps_its_own_thread_count(lm, run, recorded_passes):
    other, passes = recorded_passes
    clear_cache(lm)
    before = torch.get_num_threads()
    errors: list[str] = []

    def small_commands() -> None:
        session = Session()
        for i in range(8):
            reply = run(f"compare A cat {i}. | A kitten {i}.", session)
            if not reply.ok:
                errors.append(reply.error)

    def large_batches() -> None:
        for i in range(8):
            encode(other, [f"{LONG} {i}.", f"{LONG} again {i}.", f"{LONG}, once more {i}."])

    workers = [threading.Thread(target=small_commands), threading.Thread(target=large_batches)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors
    assert {p["tokens"] <= SINGLE_THREAD_TOKENS for p in passes} == {True, False}  # both kinds ran
    assert {p["model"] for p in passes} == {lm.name, other.name}
    for p in passes:
        wanted = 1 if p["tokens"] <= SINGLE_THREAD_TOKENS else 2
        assert p["threads"] == [wanted] * (len(p["threads"])), p  # every layer ran with the pass's own choice
    ordered = sorted(passes, key=lambda p: p["start"])
    for first, second in zip(ordered, ordered[1:]):
        assert first["end"] <= second["start"], (first, second)  # one pass at a time
    assert torch.get_num_threads() == before  # no choice outlived its pass


#: A fresh process that imports ``assistant.app`` and stops the moment anything starts importing torch, printing
#: the OpenMP setting torch would read then (an import past torch costs seconds the check does not need).
AT_TORCH = """import os, sys
class AtTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch":
            print(os.environ.get("OMP_WAIT_POLICY"), flush=True)
            os._exit(0)
sys.meta_path.insert(0, AtTorch())
import assistant.app
print("torch never imported")"""


def test_openmp_threads_sleep_when_idle_on_two_cores_and_the_setting_comes_before_torch():
    """On 2 cores torch's OpenMP threads sleep once their work is done (spinning ones slowed the ONNX Runtime pass
    after them): the toolkit sets it before torch reads it, in every face's process, and leaves a setting alone."""
    import os
    import subprocess
    import sys

    import tools

    show = "import os, tools; print(os.environ.get('OMP_WAIT_POLICY'))"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    one_core = "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); " + show
    assert subprocess.run([sys.executable, "-c", one_core], capture_output=True, text=True, env=env,
                          check=True).stdout.strip() == "PASSIVE"
    assert subprocess.run([sys.executable, "-c", show], capture_output=True, text=True,
                          env={**env, "OMP_WAIT_POLICY": "ACTIVE"}, check=True).stdout.strip() == "ACTIVE"
    assert tools.PASSIVE_OPENMP_CORES == 2
    # the page (and the MCP and HTTP faces it serves) reaches the toolkit before torch: a face that reached torch
    # first would leave OpenMP's default (the command line's run of `help` does too: 16 s more, checked by hand)
    at_torch = subprocess.run([sys.executable, "-c", AT_TORCH], capture_output=True, text=True, env=env, check=True)
    assert at_torch.stdout.strip() == "PASSIVE", at_torch.stdout
