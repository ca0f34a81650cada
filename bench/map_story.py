"""A person's session with the corpus map, in headless Chromium against the real app, with screenshots.

1. A CSV of ``--rows`` synthetic reviews (one in six about refunds, every text distinct) is uploaded through
   the page's "Your texts" box and the line it puts in the command box (``corpus load ...``) is sent; the
   progress shown on the box is read every second while the corpus encodes.
2. ``map``: every point drawn (the page's own reply -> drawn time); a drag pans the map; the mouse rests on
   a refund review (its text in the tooltip); a shift-drag lasso around it lists the texts in the side panel;
   ``search refunds --in selection`` answers from the lassoed rows only.
3. The server process is stopped and started again on the same folders; the reloaded page shows the
   conversation, each map with a "Draw this map again" button, which draws it from the layout stored with the
   corpus (not fitted again).

``--map-rows`` (optional) adds a second corpus of that many rows for step 2, made in the store's format from
the encoded one (each made row is an encoded review's vector plus a little noise, with that review's text and a
row number): the map at 100,000 points without encoding 100,000 texts on 2 cores. Screenshots and
``story.json`` go to ``--out``.

    .venv/bin/python bench/map_story.py --rows 100000 [--map-rows 0] [--out /tmp/map-story]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from common import free_port, machine, start_app

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.browsing import DONE, REPLIES, Reply, Watch, ask, launch, log_text, ready  # noqa: E402
from tools.corpus.files import save_npy  # noqa: E402
from tools.corpus.folder import NORMS, ROWS, VECTORS, Corpus, Manifest  # noqa: E402
from tools.corpus.store import CorpusStore  # noqa: E402

TOPICS = {
    "refund": ("I asked for a refund for order {n} and the money has still not come back.",
               "Refund for order {n} arrived on my card after {d} days, thank you.",
               "They refused to refund the {item} I returned (order {n}).",
               "Still waiting on my refund for the {item}, order {n}, after {d} emails."),
    "delivery": ("The {item} from order {n} arrived {d} days late.",
                 "Parcel {n} was left at the wrong door and the {item} got wet.",
                 "Delivery of order {n} was quick, the {item} came in {d} days."),
    "quality": ("The {item} (order {n}) broke after {d} days of use.",
                "Great {item}, solid build, order {n} was worth it.",
                "The {item} from order {n} feels cheap and the paint chipped."),
    "service": ("Support answered my question about order {n} within {d} minutes.",
                "Nobody at customer service could tell me where order {n} is.",
                "The staff were friendly when I picked up the {item} (order {n})."),
    "price": ("The {item} cost {d} euros more than in the shop down the road (order {n}).",
              "A fair price for the {item}; order {n} came with a discount.",
              "Shipping on order {n} cost more than the {item} itself."),
    "app": ("The app crashed {d} times while I paid for order {n}.",
            "Tracking order {n} in the app works well.",
            "I could not log in to the app to change order {n}."),
}
ITEMS = ("kettle", "phone case", "lamp", "chair", "blender", "headset", "backpack", "jacket", "router", "toaster")
WAIT_DRAWN = "n => document.querySelectorAll('.corpus-map[data-drawn=\"1\"]').length >= n"


def reviews(rows: int, seed: int = 0) -> pd.DataFrame:
    """``rows`` distinct short reviews (the order number is the row's own), with topic and stars."""
    rng = np.random.default_rng(seed)
    names = list(TOPICS)
    topic = rng.choice(len(names), rows)
    texts, stars = [], rng.integers(1, 6, rows)
    for i, t in enumerate(topic):
        options = TOPICS[names[t]]
        template = options[int(rng.integers(len(options)))]
        texts.append(template.format(n=100000 + i, d=int(rng.integers(2, 40)), item=ITEMS[int(rng.integers(10))]))
    return pd.DataFrame({"text": texts, "topic": [names[t] for t in topic], "stars": stars})


def made_corpus(root: Path, source: Corpus, rows: int, name: str) -> Corpus:
    """A complete corpus of ``rows`` rows made from ``source``'s encoded ones: vector plus noise, text plus number."""
    rng = np.random.default_rng(1)
    base = source.rows()
    unit = np.asarray(source.unit_vectors(), dtype=np.float32)
    pick = rng.integers(0, len(base), rows)
    vectors = unit[pick] + 0.02 * rng.standard_normal((rows, unit.shape[1]), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    folder = root / name
    folder.mkdir(parents=True)
    save_npy(folder / VECTORS, vectors)
    save_npy(folder / NORMS, np.ones(rows, np.float32))
    columns = [c for c in base.columns if c not in ("id", "text")]
    frame = pd.DataFrame({"id": np.arange(rows), "text": [f"{t} (copy {i})" for i, t in
                                                          enumerate(base["text"].to_numpy()[pick])]})
    for c in columns:
        frame[c] = base[c].to_numpy()[pick]
    frame.to_parquet(folder / ROWS, index=False)
    m = source.manifest
    manifest = Manifest(key=name, name=name, model=m.model, pooling=m.pooling, source=f"{name}.csv", sha256="0",
                        text_column="text", rows=rows, dims=unit.shape[1], chunk_rows=rows, metadata_columns=columns,
                        created=dt.datetime.now(dt.UTC).isoformat(), complete=True, index_kind="exact")
    corpus = Corpus(folder, manifest)
    corpus.write_manifest()
    return corpus


def send(page, line: str, timeout_s: float, every_s: float = 1.0) -> tuple[Reply, list[tuple[float, str]]]:
    """Type ``line``, press Enter and read the progress shown on the box every ``every_s`` until the reply is done."""
    ready(page)
    before = page.locator(REPLIES).count()
    box = page.locator("#command-box textarea")
    box.fill(line)
    start = time.perf_counter()
    box.press("Enter")
    seen: list[tuple[float, str]] = []
    while page.locator(DONE).count() <= before:
        if time.perf_counter() - start > timeout_s:
            raise TimeoutError(f"{line!r} gave no reply within {timeout_s:g} s")
        shown = page.evaluate("""() => Array.from(document.querySelectorAll(
            '#command-box [class*=progress], #command-box [class*=eta]')).map(e => e.innerText.trim())
            .filter(Boolean).join(' | ')""")
        if shown and (not seen or seen[-1][1] != shown):
            seen.append((round(time.perf_counter() - start, 1), shown))
        page.wait_for_timeout(every_s * 1000)
    return Reply(page, before), seen


def map_steps(page, corpus: str, out: Path, tag: str, refund_ids: list[int], facts: dict) -> None:
    """`map`, pan, hover a refund review, lasso around it, search the selection; screenshots of hover and lasso."""
    drawn_before = page.locator(".corpus-map[data-drawn='1']").count()
    reply = ask(page, f"map --corpus {corpus}", timeout=600_000)
    assert reply.ok, reply.inner_text()[:300]
    page.wait_for_function(WAIT_DRAWN, arg=drawn_before + 1, timeout=600_000)
    holder = page.locator(".corpus-map").nth(drawn_before)
    token = holder.get_attribute("data-map")
    state = f"window.assistantMap.states.get({token!r})"
    facts[f"{tag}_reply"] = reply.inner_text().split("\n")[0][:400]
    facts[f"{tag}_points"] = page.evaluate(f"{state}.plot.get('points').length")
    facts[f"{tag}_reply_to_drawn_ms"] = float(holder.get_attribute("data-ms"))
    holder.scroll_into_view_if_needed()
    box = holder.locator(".map-canvas").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(cx, cy)  # pan: drag right and back
    page.mouse.down()
    page.mouse.move(cx + 120, cy + 40, steps=20)
    page.mouse.up()
    page.wait_for_timeout(300)
    target = next(i for i in refund_ids if _inside(page.evaluate(f"{state}.plot.getScreenPosition({i})"), box, 90))
    at = page.evaluate(f"{state}.plot.getScreenPosition({target})")
    page.mouse.move(box["x"] + at[0], box["y"] + at[1])
    page.wait_for_selector(".map-tip:not([hidden])", timeout=20_000)
    facts[f"{tag}_hover_row"] = target
    facts[f"{tag}_tooltip"] = page.inner_text(".map-tip")
    page.screenshot(path=str(out / f"{tag}-hover.png"))
    x, y = box["x"] + at[0], box["y"] + at[1]
    # ends away from its start (a lasso closes itself; a mouse-up beside the start would count as a click)
    corners = [(x - 60, y - 60), (x + 60, y - 60), (x + 60, y + 60), (x - 60, y + 60), (x - 60, y - 20)]
    page.keyboard.down("Shift")
    page.mouse.move(*corners[0])
    page.mouse.down()
    for cx2, cy2 in corners[1:]:
        page.mouse.move(cx2, cy2, steps=12)
    page.mouse.up()
    page.keyboard.up("Shift")
    page.wait_for_function("() => document.querySelectorAll('#map-selection li').length > 0", timeout=60_000)
    facts[f"{tag}_lassoed"] = len(page.evaluate(f"{state}.plot.get('selectedPoints')"))
    facts[f"{tag}_panel"] = page.inner_text("#map-selection")[:600]
    page.mouse.move(5, 5)
    page.screenshot(path=str(out / f"{tag}-lasso.png"))
    page.locator("#map-selection").screenshot(path=str(out / f"{tag}-lasso-panel.png"))
    page.wait_for_timeout(500)
    found = ask(page, f"search refunds --in selection --k 5 --corpus {corpus}", timeout=300_000)
    assert found.ok, found.inner_text()[:300]
    facts[f"{tag}_search"] = found.inner_text()[:800]
    page.screenshot(path=str(out / f"{tag}-search.png"))


def _inside(at, box, margin: float) -> bool:
    return bool(at) and margin < at[0] < box["width"] - margin and margin < at[1] < box["height"] - margin


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the uploaded, encoded CSV")
    parser.add_argument("--map-rows", type=int, default=0, help="rows of a made corpus mapped as well (0: none)")
    parser.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "map-story"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="map-story-"))
    data = reviews(args.rows)
    csv = work / f"reviews-{args.rows}.csv"
    data.to_csv(csv, index=False)
    refunds = [int(i) for i in np.flatnonzero(data["topic"].to_numpy() == "refund")[:2000]]
    env = {"ASSISTANT_CORPUS_DIR": str(work / "corpora"), "ASSISTANT_CONVERSATION_DIR": str(work / "conversations"),
           "ASSISTANT_TIME_LIMIT_S": "3600", "GRADIO_TEMP_DIR": str(work / "gradio")}
    facts: dict[str, object] = {"machine": machine(), "rows": args.rows, "csv_bytes": csv.stat().st_size}
    port = free_port()
    proc = start_app(port, env)
    url = f"http://127.0.0.1:{port}/"
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            watch = Watch.on(page)
            page.goto(url)
            ready(page)
            page.locator("#corpus-upload input[type=file]").set_input_files(str(csv))
            page.wait_for_function("document.querySelector('#command-box textarea').value.startsWith('corpus load')",
                                   timeout=120_000)
            line = page.locator("#command-box textarea").input_value()
            start = time.perf_counter()
            loaded, progress = send(page, line, 3 * 3600)
            facts["load_line"] = line
            facts["load_s"] = round(time.perf_counter() - start, 1)
            facts["load_reply"] = loaded.inner_text()[:500]
            facts["progress_seen"] = progress[:: max(1, len(progress) // 12)] + progress[-1:]
            facts["progress_updates"] = len(progress)
            assert loaded.ok, loaded.inner_text()[:300]
            name = Path(csv).stem
            print("loaded", facts["load_s"], "s;", len(progress), "progress updates", flush=True)
            map_steps(page, name, out, f"map-{args.rows}", refunds, facts)
            print({k: v for k, v in facts.items() if k.startswith("map-")}, flush=True)
            if args.map_rows:
                source = CorpusStore(work / "corpora").open(name)
                made = made_corpus(work / "corpora", source, args.map_rows, f"made-{args.map_rows}")
                topics = made.rows()["topic"].to_numpy()
                made_refunds = [int(i) for i in np.flatnonzero(topics == "refund")[:2000]]
                map_steps(page, made.manifest.name, out, f"map-{args.map_rows}", made_refunds, facts)
            facts["page_errors_before_restart"] = list(watch.page_errors)
            before = log_text(page)
            proc.terminate()
            proc.wait(60)
            proc = start_app(port, env)
            page.reload()
            ready(page)
            page.wait_for_function("n => document.querySelectorAll('#conversation .reply').length >= n",
                                   arg=page.locator(REPLIES).count() or 1, timeout=120_000)
            after = log_text(page)
            facts["conversation_kept"] = all(line in after for line in ("corpus load", "map --corpus",
                                                                        "search refunds --in selection"))
            facts["log_chars_before_after"] = [len(before), len(after)]
            page.screenshot(path=str(out / "after-restart.png"))
            buttons = page.locator(".corpus-map button.line")
            facts["restored_maps_with_a_draw_again_button"] = buttons.count()
            replies = page.locator(DONE).count()
            buttons.first.click()  # "Draw this map again": the map's line, run again
            page.wait_for_function("n => document.querySelectorAll(\"" + DONE + "\").length > n", arg=replies,
                                   timeout=600_000)
            facts["map_after_restart"] = Reply(page, replies).inner_text().split("\n")[0][:400]
            page.wait_for_function(WAIT_DRAWN, arg=1, timeout=600_000)
            facts["page_errors"] = watch.page_errors
            page.screenshot(path=str(out / "after-restart-map.png"))
            browser.close()
    finally:
        proc.terminate()
        proc.wait(60)
    (out / "story.json").write_text(json.dumps(facts, indent=1, default=str) + "\n")
    print(json.dumps(facts, indent=1, default=str))
    print("screenshots and story.json in", out, "; work folder", work, file=sys.stderr)


if __name__ == "__main__":
    os.environ.setdefault("ASSISTANT_SESSION_IDLE_S", "3600")
    main()
