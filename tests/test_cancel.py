"""A runaway command is stopped at its time limit and never holds up another visitor's command."""

from __future__ import annotations

import statistics
import threading
import time

import pytest

from assistant.dispatch import execute
from assistant.session import Session
from tools.core import cancel
from tools.core.config import Settings

COMPARE = "compare A cat sat on the mat. | A kitten sat on the rug."


def test_check_does_nothing_outside_a_cancellable_run_and_stops_a_cancelled_one():
    cancel.check()  # no token: a tool called from a script is never interrupted
    token = cancel.CancelToken()
    with cancel.scope(token):
        cancel.check()
        token.cancel("`vocab` gave up after 2 seconds.")
        with pytest.raises(cancel.Cancelled, match="gave up after 2 seconds"):
            cancel.check()
    cancel.check()  # the token belonged to that run only


def _pairs_file(folder, n: int) -> str:
    """``n`` distinct sentence pairs (nothing cached), far more work than a two-second limit allows."""
    lines = ["sentence1,sentence2,score"]
    for i in range(n):
        words = " ".join(f"w{(i * 7 + k) % 997}" for k in range(40))
        lines.append(f"Pair {i} says {words}.,The other side of pair {i} reads {words[::-1]}.,{i % 5}")
    (folder / "many.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return "many.csv"


def _timed(run) -> float:
    start = time.perf_counter()
    reply = run()
    assert reply.ok, reply.error
    return time.perf_counter() - start


@pytest.mark.slow
def test_a_runaway_gives_up_stops_and_leaves_the_model_to_others(hub, tmp_path):
    settings = Settings(data_dir=str(tmp_path), time_limit_s=2.0)
    name = _pairs_file(tmp_path, 10_000)
    def compare():
        return execute(COMPARE, Session(), hub, settings)

    hub.get("minilm")
    for line in (COMPARE, COMPARE.replace("cat", "dog")):  # warm: model loaded, thread choice made
        assert execute(line, Session(), hub, Settings(time_limit_s=0)).ok
    # bulk work may switch the model to ONNX Runtime, exported once on first use: done before timing
    assert execute(f"benchmark --data {name} --sample 64 --pool mean", Session(), hub,
                   Settings(data_dir=str(tmp_path), time_limit_s=0)).ok
    compare()
    solo = [_timed(lambda i=i: execute(COMPARE.replace("mat", f"mat {i}"), Session(), hub, settings))
            for i in range(5)]

    box: dict = {}
    runaway = threading.Thread(target=lambda: box.setdefault(
        "reply", execute(f"benchmark --data {name} --pool mean", Session(), hub, settings)))
    start = time.perf_counter()
    runaway.start()
    time.sleep(0.5)
    unlimited = Settings(time_limit_s=0)
    meanwhile = [_timed(lambda i=i: execute(COMPARE.replace("rug", f"rug {i}"), Session(), hub, unlimited))
                 for i in range(3)]  # answered while the runaway runs: each waits at most one of its batches
    runaway.join(30)
    gave_up_after = time.perf_counter() - start
    reply = box["reply"]
    assert not reply.ok and "gave up after 2 seconds" in reply.error and "stopped" in reply.error
    assert gave_up_after < 2.0 + 5.0  # the reply came at the limit, not when 10,000 pairs were done

    after = [_timed(lambda i=i: execute(COMPARE.replace("cat", f"cat {i}"), Session(), hub, settings))
             for i in range(5)]
    worker_gone = time.perf_counter()
    while any(t.name == "command-benchmark" for t in threading.enumerate()) and time.perf_counter() - worker_gone < 5:
        time.sleep(0.05)
    assert not any(t.name == "command-benchmark" for t in threading.enumerate()), "the runaway kept running"
    base = statistics.median(solo)
    # relative to compare's own solo time: an abandoned worker would hold the lock batch after batch
    assert statistics.median(after) < 3 * base + 0.05, (solo, meanwhile, after)
    assert sum(meanwhile) < gave_up_after + 5.0, (meanwhile, gave_up_after)  # not behind all 10,000 pairs
