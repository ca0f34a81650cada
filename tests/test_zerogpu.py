"""Issue 20: the GPU boundary holds on a ZeroGPU Space, where every call crosses a process by pickle.

``spaces.GPU`` (0.51) runs a decorated function in a forked worker and passes its
arguments and result through queues by pickle. Here a stand-in does exactly that
to every function ``tools.models.gpu`` decorated: each call forks a worker, sends the
arguments through a ``multiprocessing`` queue and reads the result back through
another. Every command must give the same reply through it as without it, and the
bytes that cross are recorded: token ids and a model's key go in, states come out,
never weights.
"""

from __future__ import annotations

import dataclasses
import functools
import multiprocessing
import pickle
import sys
import traceback
from dataclasses import dataclass

import pandas as pd
import pytest
import torch

from tests.conftest import STSB_DIR
from tools.encoding.cache import clear_cache
from tools.encoding.encode import encode
from tools.models import gpu
from tools.models import threads as threads_module

#: The most a call's arguments may weigh: ids, masks and a key (MiniLM's weights are about 90 MB).
MAX_ARGUMENT_BYTES = 64 * 1024
#: The most an attention-heavy call (one sentence's states and attentions) may send back.
MAX_ATTENTION_RESULT_BYTES = 512 * 1024
#: A benchmark call returns the last layer only: 256 short sentences x 384 floats per token, never every layer.
MAX_BENCHMARK_RESULT_BYTES = 2 * 1024 * 1024


@dataclass
class Crossing:
    """One call through the stand-in: the function, and the bytes pickled each way."""

    name: str
    argument_bytes: int
    result_bytes: int
    seconds: int


def _worker(fn, args_queue, results_queue) -> None:
    args, kwargs = args_queue.get()
    try:
        value = fn(*args, **kwargs)
        data = pickle.dumps(("ok", value), protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException as exc:  # the parent raises it again, as ZeroGPU reports a worker error
        data = pickle.dumps(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))
    results_queue.put(len(data))
    results_queue.put(pickle.loads(data))


class ForkedGPU:
    """A stand-in for ``spaces.GPU`` that does to arguments and results what ZeroGPU does."""

    def __init__(self) -> None:
        self.crossings: list[Crossing] = []
        self.replies: list[dict] = []
        self.context = multiprocessing.get_context("fork")

    def __call__(self, fn, duration=None):
        @functools.wraps(fn)
        def on_gpu(*args, **kwargs):
            seconds = duration(*args, **kwargs) if callable(duration) else int(duration or gpu.DEFAULT_DURATION)
            assert isinstance(seconds, int) and 0 < seconds <= 120
            sent = len(pickle.dumps((args, kwargs), protocol=pickle.HIGHEST_PROTOCOL))  # fails on a model or lock
            args_queue, results_queue = self.context.SimpleQueue(), self.context.SimpleQueue()
            worker = self.context.Process(target=_worker, args=(fn, args_queue, results_queue))
            worker.start()
            try:
                args_queue.put((args, kwargs))
                received = results_queue.get()
                status, value = results_queue.get()
            finally:
                worker.join(timeout=60)
            self.crossings.append(Crossing(fn.__name__, sent, received, seconds))
            if status != "ok":
                raise RuntimeError(f"ZeroGPU worker error: {value}")
            return value

        return on_gpu


@pytest.fixture()
def one_thread(monkeypatch):
    """One torch thread for every pass, so that a pass gives the same bits in any process."""
    monkeypatch.setattr(threads_module, "max_threads", lambda: 1)


def _install(monkeypatch) -> ForkedGPU:
    """Every ``@gpu`` function replaced, wherever it was imported, by the forked-worker stand-in."""
    stand_in = ForkedGPU()
    assert gpu.BOUNDARY, "no function is decorated with tools.models.gpu.gpu"
    for fn in gpu.BOUNDARY:
        wrapped = stand_in(fn, duration=_duration_of(fn))
        for module in list(sys.modules.values()):
            if getattr(module, fn.__name__, None) is fn:
                monkeypatch.setattr(module, fn.__name__, wrapped)
    return stand_in


@pytest.fixture()
def through_worker(monkeypatch, one_thread):
    """The stand-in installed for one test."""
    return _install(monkeypatch)


def _duration_of(fn):
    from tools.encoding import forward
    from tools.inspection import masking

    return {"forward_batches": forward.seconds_for, "_forward_on_gpu": masking._seconds_for}.get(fn.__name__)


def _fresh(hub) -> None:
    for lm in hub.loaded():
        clear_cache(lm)


def _reply_json(hub, lines: list[str]) -> list[dict]:
    """Each line's reply as JSON (without its time), run in one conversation with every cache empty."""
    from assistant.dispatch import execute
    from assistant.session import Session

    settings = dataclasses.replace(hub.settings, data_dir=str(STSB_DIR))
    _fresh(hub)
    session = Session()
    out = []
    for line in lines:
        data = execute(line, session, hub, settings).to_json()
        data.pop("elapsed_ms", None)
        if data.get("command") == "map":  # a map's address is a fresh unguessable token each time
            data["settings"].pop("map", None)
        if data.get("command") == "export":  # the files hold each earlier reply's time: their sizes move
            data["tables"] = [{**t, "rows": [row[:2] for row in t["rows"]]} for t in data.get("tables", [])]
        out.append(data)
    return out


def _same_replies(hub, lines, monkeypatch) -> ForkedGPU:
    plain = _reply_json(hub, lines)
    stand_in = _install(monkeypatch)
    crossed = _reply_json(hub, lines)
    stand_in.replies = crossed
    for line, a, b in zip(lines, plain, crossed):
        assert a == b, f"`{line}` answered differently through the ZeroGPU boundary"
    return stand_in


def _examples() -> list[str]:
    from assistant.commands.registry import TABLE

    specs = list({id(s): s for s in TABLE.values()}.values())
    return [e for s in specs for e in s.examples]


def test_every_boundary_function_takes_small_picklable_arguments(lm, through_worker):
    with pytest.raises((TypeError, AttributeError, pickle.PicklingError)):
        pickle.dumps(lm)  # a loaded model cannot cross (its lock), which is why only its key does
    assert {fn.__name__ for fn in gpu.BOUNDARY} >= {"forward_batches", "_forward_on_gpu"}
    clear_cache(lm)
    encode(lm, ["The cat sat on the mat.", "A dog barked."], attentions=True)
    assert through_worker.crossings and all(c.argument_bytes < MAX_ARGUMENT_BYTES for c in through_worker.crossings)


def test_forward_passes_give_the_same_vectors_through_the_boundary(lm, monkeypatch, one_thread):
    texts = ["We sat on the river bank.", "I deposited money at the bank.", "Hi"]
    clear_cache(lm)
    plain = encode(lm, texts, attentions=True) + encode(lm, texts)
    stand_in = ForkedGPU()
    (forward_batches,) = [fn for fn in gpu.BOUNDARY if fn.__name__ == "forward_batches"]
    from tools.encoding import encode as encode_module

    monkeypatch.setattr(encode_module, "forward_batches",
                        stand_in(forward_batches, duration=_duration_of(forward_batches)))
    clear_cache(lm)
    crossed = encode(lm, texts, attentions=True) + encode(lm, texts)
    assert len(stand_in.crossings) == 2  # one batch with attentions, one without
    for a, b in zip(plain, crossed):
        assert a.tokens == b.tokens
        torch.testing.assert_close(b.hidden_states, a.hidden_states, rtol=1e-6, atol=0)
        if a.attentions is not None:
            torch.testing.assert_close(b.attentions, a.attentions, rtol=1e-6, atol=0)


def _first_examples() -> list[str]:
    """The default tier: the first example of every command of the table (a new command is covered by its
    row), after a `compare` so that `again` has something to re-run; `benchmark` crosses in the bytes test."""
    from assistant.commands.registry import COMMANDS

    return ["compare A cat. | A kitten."] + [s.examples[0] for s in COMMANDS if s.name != "benchmark"]


@pytest.mark.slow  # the boundary itself is checked in the default tier by the bytes-per-call test below
def test_commands_answer_the_same_through_the_boundary(hub, monkeypatch, one_thread):
    stand_in = _same_replies(hub, _first_examples(), monkeypatch)
    assert stand_in.crossings and max(c.argument_bytes for c in stand_in.crossings) < MAX_ARGUMENT_BYTES


@pytest.mark.slow
def test_bytes_per_call_for_compare_attend_and_benchmark(hub, monkeypatch, one_thread, capsys, stsb_dir):
    from assistant.session import Session

    lines = ["compare A man is playing a guitar. | Someone plays an instrument.", "attend The cat sat on the mat.",
             "benchmark --data stsb-dev --sample 200 --pool mean"]
    settings = dataclasses.replace(hub.settings, data_dir=str(STSB_DIR))
    from assistant.dispatch import execute

    plain = {}
    for line in lines:
        _fresh(hub)
        plain[line] = execute(line, Session(), hub, settings).result
    through_worker = _install(monkeypatch)
    report = []
    for line in lines:
        _fresh(hub)
        through_worker.crossings.clear()
        reply = execute(line, Session(), hub, settings)
        assert reply.ok, reply.error
        assert reply.result.text == plain[line].text or line.startswith("benchmark")  # its text gives its time
        # similarities, heads, scores: the same to float32 precision (a pass may run in ONNX Runtime on one side,
        # PyTorch on the other, once an earlier bulk pass switched the model; the bits then differ by ~3e-8)
        pd.testing.assert_frame_equal(reply.result.tables[0].frame, plain[line].tables[0].frame,
                                      check_exact=False, rtol=1e-6, atol=1e-7)
        calls = list(through_worker.crossings)
        assert calls, f"`{line}` made no forward pass through the boundary"
        assert max(c.argument_bytes for c in calls) < MAX_ARGUMENT_BYTES  # ids and a key, never weights
        if line.startswith("attend"):
            assert max(c.result_bytes for c in calls) < MAX_ATTENTION_RESULT_BYTES
        if line.startswith("benchmark"):
            assert max(c.result_bytes for c in calls) < MAX_BENCHMARK_RESULT_BYTES
        report.append(f"{line.split()[0]}: {len(calls)} calls, arguments {max(c.argument_bytes for c in calls):,} B "
                      f"max, results {max(c.result_bytes for c in calls):,} B max, "
                      f"{sum(c.result_bytes for c in calls):,} B in all")
    with capsys.disabled():
        print("\nZeroGPU boundary bytes per call:\n  " + "\n  ".join(report))


@pytest.mark.slow
def test_every_example_of_every_command_answers_the_same_through_the_boundary(hub, monkeypatch, one_thread):
    # `again`, `history`, `export` need a command before them; `benchmark` replies carry their own timings
    # (its scores are compared in test_bytes_per_call_for_compare_attend_and_benchmark).
    lines = ["compare A cat. | A kitten."] + [e for e in _examples() if not e.startswith("benchmark")]
    _same_replies(hub, lines, monkeypatch)


def test_fill_mask_answers_the_same_through_the_boundary(tmp_path, monkeypatch, one_thread):
    """``mask`` crosses with its own boundary function (ids, mask positions, a key) on a tiny masked-LM model."""
    from tests.test_masking import build_tiny
    from tools.core.config import Settings
    from tools.models.hub import ModelHub

    build_tiny(tmp_path / "tiny-mlm")
    hub = ModelHub(Settings(model_roots=str(tmp_path), mlm_model="tiny-mlm"))
    lines = ["mask The [MASK] sat on the [MASK] . --top 3 --model tiny-mlm"]
    stand_in = _same_replies(hub, lines, monkeypatch)
    assert stand_in.replies[0]["ok"] and stand_in.replies[0]["model"] == "tiny-mlm"
    names = [c.name for c in stand_in.crossings]
    assert names.count("_forward_on_gpu") == 2  # the first pass, then the greedy joint filling's second
    assert max(c.argument_bytes for c in stand_in.crossings) < MAX_ARGUMENT_BYTES
