"""What reading a question costs: routing alone, and a question against the command it is read as.

For a sample of the tuning set (``assistant/understanding/asked/questions.jsonl``; commands that need no
extra model or data), three runs are interleaved per question: ``route`` (``understand`` alone: the question's
embedding, the semantic search, slot filling), ``question`` (``execute`` of the question)
and its peer ``command`` (``execute`` of the expected command line), each in a fresh
conversation, with the model's encoding cache cleared before every run so that no
question or text is answered from an earlier repeat. One untimed round per question comes first: whatever
the first run of a line loads (a chart's schema, a second model's weights) would otherwise be paid by the
question alone, which runs before its command. Each question's ratio is the median of its question runs over
the median of its command runs; prints every repeat's milliseconds, each question's medians and ratio, the
median ratio over the questions, how many are within ``--within`` (1.3x), the ratio of all questions' time to
all commands' time and the load average; writes bench/results/routing.json (routing-int8.json for an int8 model).

    .venv/bin/python bench/routing.py [--repeats 5] [--model minilm] [--questions 40] [--http | --page]

With ``--http`` the question and its command are each one call of the app's ``run`` endpoint over HTTP (the app
served in this process on a free 127.0.0.1 port, called as curl calls it, the encoding cache cleared before
every call as before): the time a caller waits, queue and JSON included; ``route`` stays in process. Writes
bench/results/routing-http.json. With ``--page`` each is typed in the app's page in headless Chromium, each in a
new conversation, and timed by the page itself from Enter to the reply drawn, charts included: the time a person
waits. Writes bench/results/routing-page.json.

With ``--rates`` it times nothing and prints instead how many questions of each committed set are read
as the right command, and with the right texts and options too (the tests' ``question_sets.score``, in a
conversation whose data folders hold STS-B and a ``reviews`` corpus, as the tests' hub); ``--misses``
also prints every set's misses as Markdown (``docs/routing-misses.md`` is that output). Reading a set's misses
makes it a set that changes were chosen on: the README says which sets were read before which change.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable

from common import ROOT, STSB_TEST, machine, median, quiet_libraries, serve_in_process, write  # noqa: I001 - bench scripts import their sibling after sys.path is set

#: How each face is named in the report.
FACES = {"python": "", "http": " over HTTP", "page": " in the page (Enter to reply drawn)"}
#: Commands left out: they need a masked-LM model or STS-B data, or their work dwarfs any question.
SKIP = ("mask", "benchmark", "vocab", "export", "history", "why")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--questions", type=int, default=40, help="every n-th question up to this many")
    parser.add_argument("--within", type=float, default=1.3, help="the ratio each question is counted against")
    parser.add_argument("--http", action="store_true", help="time the question and its command over HTTP")
    parser.add_argument("--page", action="store_true", help="time them in the page, Enter to reply drawn")
    parser.add_argument("--rates", action="store_true", help="the question sets' routing rates instead of times")
    parser.add_argument("--misses", action="store_true", help="with --rates: every set's misses too (Markdown)")
    parser.add_argument("--out", help="the result's name in bench/results/ (default: routing, with -int8, -http or "
                        "-page as run)")
    args = parser.parse_args(argv)
    quiet_libraries()
    if args.rates:
        return rates(args.model, args.misses)
    from assistant.commands.registry import TABLE
    from assistant.session import Session
    from assistant.understanding import understand
    from tools.core.config import Settings
    from tools.encoding.cache import clear_cache
    from tools.models.hub import ModelHub

    hub = ModelHub(Settings())
    lm = hub.get(args.model)
    rows = [json.loads(line) for line in (ROOT / "assistant" / "understanding" / "asked" / "questions.jsonl")
            .read_text().splitlines()]
    rows = [r for r in rows if r["line"].split()[0] not in SKIP]
    rows = rows[:: max(1, len(rows) // args.questions)][: args.questions]
    understand("warm up the routing index", Session(model=args.model), hub, TABLE, hub.settings)
    per: dict[str, list[float]] = {"route": [], "question": [], "command": []}
    each = []
    face = "page" if args.page else "http" if args.http else "python"
    waited, close = {"page": paged, "http": served, "python": in_process}[face](hub, args.model)
    for row in rows:
        runs = {
            "route": lambda row=row: clocked(lambda: understand(row["q"], Session(model=args.model), hub, TABLE,
                                                                hub.settings)),
            "question": lambda row=row: waited(row["q"]),
            "command": lambda row=row: waited(row["line"]),
        }
        times: dict[str, list[float]] = {name: [] for name in runs}
        for repeat in range(args.repeats + 1):  # the first round untimed: first-use costs land on neither
            for name, run in runs.items():  # interleaved: a noisy neighbour slows all three alike
                clear_cache(lm)
                ms = run()
                if repeat:
                    times[name].append(ms)
        for name, values in times.items():
            per[name].extend(values)
        medians = {name: median(values) for name, values in times.items()}
        read_as = understand(row["q"], Session(model=args.model), hub, TABLE, hub.settings).line
        each.append({"q": row["q"], "line": row["line"], "read_as": read_as,
                     **{f"{n}_ms": round(v, 2) for n, v in medians.items()},
                     "ratio": round(medians["question"] / medians["command"], 3)})
    close()
    ratios = [e["ratio"] for e in each]
    within = [e for e in each if e["ratio"] <= args.within]
    total = sum(e["question_ms"] for e in each) / sum(e["command_ms"] for e in each)
    pooled = median(per["question"]) / median(per["command"])
    print(f"{len(rows)} questions x {args.repeats} repeats on {args.model}{FACES[face]}; load {os.getloadavg()}")
    for name, values in per.items():
        print(f"{name:>9}: median {median(values):7.1f} ms; all: {' '.join(f'{v:.0f}' for v in values)}")
    print("each question: route, question, command (medians, ms), question / command")
    for e in sorted(each, key=lambda e: -e["ratio"]):
        read = "" if e["read_as"] == e["line"] else f"  (read as: {e['read_as']})"
        print(f"  {e['route_ms']:6.1f} {e['question_ms']:7.1f} {e['command_ms']:7.1f}  {e['ratio']:5.2f}x  "
              f"{e['line']}{read}")
    print(f"question / command (the command itself, the peer): median over the questions {median(ratios):.2f}x; "
          f"{len(within)} of {len(each)} within {args.within}x; all questions' time over all commands' "
          f"{total:.2f}x; median of all runs over median of all runs {pooled:.2f}x; routing adds "
          f"{median(per['route']):.1f} ms per question (median)")
    name = args.out or ("routing" + ("-int8" if args.model.endswith(":int8") else "")
                        + ("" if face == "python" else f"-{face}"))
    write(name, {"machine": machine(), "model": args.model, "face": face,
                 "questions": len(rows), "repeats": args.repeats,
                 "runs": result_of(per), "each": each, "question_over_command": round(median(ratios), 3),
                 "within": args.within, "questions_within": len(within), "total_over_total": round(total, 3),
                 "pooled_over_pooled": round(pooled, 3)})
    return 0


def clocked(work: Callable[[], object]) -> float:
    """Milliseconds ``work`` took."""
    start = time.perf_counter()
    work()
    return (time.perf_counter() - start) * 1000


def in_process(hub, model: str):
    """A function that runs one line in a fresh conversation in this process and returns its milliseconds, and one
    that stops nothing."""
    from assistant.dispatch import execute
    from assistant.session import Session

    return (lambda line: clocked(lambda: execute(line, Session(model=model), hub))), (lambda: None)


def served(hub, model: str):
    """The app served in this process on a free 127.0.0.1 port: a function that runs one line through its ``run``
    endpoint as a curl user calls it (POST ``/gradio_api/call/run``, then read the event stream until ``complete``;
    a fresh conversation each call, as the endpoint makes one), and one that stops the server. Not through
    ``gradio_client``: it polls its messages every 50 ms, a step larger than what is measured here."""
    import logging

    import httpx

    logging.getLogger("assistant").setLevel(logging.CRITICAL)
    demo, port = serve_in_process(hub, hub.settings)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}/gradio_api/call/run", timeout=600)

    def answer(line: str) -> dict:
        event = client.post("", json={"data": [line, model]}).json()["event_id"]
        with client.stream("GET", f"/{event}") as stream:
            lines = iter(stream.iter_lines())
            for text in lines:
                if text.startswith("event: "):
                    kind, data = text[7:], next(lines)
                    if kind in ("complete", "error"):
                        return {"event": kind, "data": data}
        raise RuntimeError(f"the stream of {line!r} ended without a result")

    for _ in range(3):  # the connection and the endpoint warmed
        answer("help")
    return (lambda line: clocked(lambda: answer(line))), lambda: (client.close(), demo.close())


def paged(hub, model: str):
    """The app served in this process, its page in headless Chromium: a function that starts a new conversation
    (untimed), types one line, presses Enter and returns the page's own milliseconds from Enter to the reply
    drawn (``data-ms``, charts included: what a person waits), and one that closes browser and server. The page
    runs on the server's model, so ``model`` must be it."""
    import logging

    from playwright.sync_api import sync_playwright

    from tests.browsing import REPLIES, Watch, ask, launch, ready

    if model != hub.settings.model:
        raise SystemExit(f"--page times the server's model {hub.settings.model}; drop --model {model}")
    logging.getLogger("assistant").setLevel(logging.CRITICAL)
    demo, port = serve_in_process(hub, hub.settings)
    playwright = sync_playwright().start()
    browser = launch(playwright)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    watch = Watch.on(page)
    page.goto(f"http://127.0.0.1:{port}/")
    ready(page)

    def waited(line: str) -> float:
        if page.locator(REPLIES).count():
            page.locator("#new-conversation").click()
            page.wait_for_function(f"() => document.querySelectorAll({REPLIES!r}).length === 0")
        reply = ask(page, line)
        return float(reply.node.get_attribute("data-ms"))

    for line in ("help", "compare a warm | start", "help"):  # the chart library and the endpoint warmed
        waited(line)

    def close() -> None:
        browser.close()
        playwright.stop()
        demo.close()
        if watch.page_errors or watch.console_errors:
            print(f"page errors: {watch.page_errors[:3]}; console errors: {watch.console_errors[:3]}")

    return waited, close


def result_of(per: dict[str, list[float]]) -> dict[str, dict]:
    """Each run's median and every repeat, in milliseconds."""
    return {name: {"median_ms": round(median(values), 2), "repeats_ms": [round(v, 2) for v in values]}
            for name, values in per.items()}


def rates(model: str, misses: bool) -> int:
    """Each question set's rates on ``model``: command, and command + texts + options."""
    import tempfile
    from pathlib import Path

    from assistant.dispatch import execute
    from assistant.session import Session
    from tests.question_sets import LEARNT, SETS, questions, score
    from tests.test_corpus_commands import write_reviews
    from tools.core.config import Settings
    from tools.models.hub import ModelHub

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_reviews(folder / "reviews.csv")
        settings = Settings(data_dir=f"{STSB_TEST.parent}:{folder}", corpus_dir=str(folder / "corpora"),
                            conversation_dir=str(folder / "conversations"), reference_dir=str(folder / "references"))
        hub = ModelHub(settings)
        execute("corpus load reviews.csv --name reviews", Session(), hub, settings)
        for name, path, part in [(n, p, "") for n, p in SETS.items()] + [
                (n, p, part) for n, p in LEARNT.items() for part in ("", "follow-ups")]:
            rows = [r for r in questions(path) if r.get("before") or not part]
            got = score(hub, model, rows)
            shown = f"{name} ({part}, never learnt)" if part else name + (" (learnt from)" if name in LEARNT else "")
            print(f"{'## ' if misses else ''}{shown}: {got.rows} questions, {got.verb_rate:.1%} command, "
                  f"{got.full_rate:.1%} command+texts+options\n")
            if misses:
                print("\n".join(f"- {m}" for m in got.misses) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
