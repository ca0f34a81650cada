"""The corpus map at scale: layout fit time, bytes per point, and reply -> every point drawn in headless Chromium.

Builds complete synthetic corpora directly in the store's format (vectors made, not encoded), then:
- fits the PCA layout of 100,000 rows x 384 dims, and UMAP (fitted on a sample, the rest placed by
  ``transform``) when umap-learn is importable, ``--fit-repeats`` times each, every repeat recorded;
- serves them with `python -m assistant` and, per size (default 100,000 and 1,000,000 points), types `map`
  and reads the page's own timing: the reply shown -> meta and binary points fetched, decoded, every point drawn
  (``data-ms`` on the map), the bytes the points response carried and those of every response that finished
  during the command (Chromium's count, headers included; the reply's own event stream is not among them),
  the page's JavaScript heap before and after (Chromium's ``Performance.getMetrics``), and the frame time
  while panning: mouse drags and wheel zooms over the map with every ``requestAnimationFrame`` interval
  recorded (median and p95), and those of the frames in which the scatter redrew;
- draws the same points (the 100,000-row layout, its colours) as the Vega-Lite scatter the other charts use
  (circles, colour by category, a tooltip, scales bound so that a drag pans) in the same page, at
  ``--vega-sizes`` rows, timing the embed to the view drawn (the spec already in the page), the spec's bytes
  and the same panning; a size that does not draw within ``--vega-timeout`` seconds says so.

    PYTHONPATH=.:/work/umap-site .venv/bin/python bench/map.py [--sizes 100000,1000000] [--dims 32]
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from common import free_port, machine, median, percentile, start_app, write

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.browsing import ask, launch  # noqa: E402
from tools.corpus import layout  # noqa: E402
from tools.corpus.files import save_npy  # noqa: E402
from tools.corpus.folder import NORMS, ROWS, VECTORS, Corpus, Manifest  # noqa: E402


def synthetic(root: Path, name: str, rows: int, dims: int, seed: int = 0) -> Corpus:
    """A complete corpus folder of ``rows`` clustered unit vectors, written directly in the store's format."""
    rng = np.random.default_rng(seed)
    folder = root / name
    folder.mkdir(parents=True)
    centres = rng.standard_normal((12, dims)).astype(np.float32) * 2
    groups = rng.integers(0, 12, rows)
    unit = centres[groups] + rng.standard_normal((rows, dims), dtype=np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    save_npy(folder / VECTORS, unit)
    save_npy(folder / NORMS, np.ones(rows, np.float32))
    pd.DataFrame({"id": np.arange(rows), "text": [f"synthetic text {i} of group {g}" for i, g in enumerate(groups)],
                  "group": groups}).to_parquet(folder / ROWS, index=False)
    manifest = Manifest(key=name, name=name, model="minilm", pooling="sbert", source=f"{name}.txt", sha256="0",
                        text_column="text", rows=rows, dims=dims, chunk_rows=rows, metadata_columns=["group"],
                        created=dt.datetime.now(dt.UTC).isoformat(), complete=True, index_kind="exact")
    corpus = Corpus(folder, manifest)
    corpus.write_manifest()
    return corpus


def fit_times(root: Path, repeats: int) -> dict[str, object]:
    """Seconds to fit (and store) each layout of 100,000 rows x 384 dims, every repeat on a fresh copy."""
    corpus = synthetic(root, "fit100k", 100_000, 384)
    methods = [layout.Method.PCA] + ([layout.Method.UMAP] if layout.umap_installed() else [])
    out: dict[str, object] = {}
    for method in methods:
        runs: list[float] = []
        meta: dict = {}
        for _ in range(repeats):
            for stored in layout.paths(corpus, method):
                stored.unlink(missing_ok=True)
            start = time.perf_counter()
            _, meta = layout.load_or_fit(corpus, method)
            runs.append(round(time.perf_counter() - start, 2))
        out[f"{method.value}_100k_384d_s"] = runs
        out[f"{method.value}_fit_rows"] = meta.get("fit_rows")
        print(method.value, runs, flush=True)
    if not layout.umap_installed():
        out["umap_100k_384d_s"] = "umap-learn not installed"
    return out


#: Every requestAnimationFrame interval, and whether the map redrew in it (``window.__frames.draws`` is
#: counted by the scatter's own ``draw`` event; a chart without one leaves it at zero).
RECORD_FRAMES = """() => { const A = window.__frames = { gaps: [], drew: [], draws: 0, on: true };
    let last = performance.now(), seen = 0;
    const tick = (t) => { A.gaps.push(t - last); A.drew.push(A.draws !== seen); seen = A.draws; last = t;
        if (A.on) requestAnimationFrame(tick); };
    requestAnimationFrame(tick); }"""


def heap_mb(cdp) -> float:
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return round(metrics["JSHeapUsedSize"] / 2**20, 1)


def panning(page, canvas: str, subscribe: str = "") -> dict[str, object]:
    """Frame intervals while a person drags the view about and zooms with the wheel over ``canvas``: every
    frame's, and those of the frames in which the view was redrawn (when ``subscribe`` counts redraws)."""
    box = page.locator(canvas).first.bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(cx, cy)
    page.evaluate(RECORD_FRAMES)
    if subscribe:
        page.evaluate(subscribe)
    start = time.perf_counter()
    for dx, dy in ((200, 0), (-150, 120), (0, -150), (-50, 30)):
        page.mouse.move(cx, cy)
        page.mouse.down()
        page.mouse.move(cx + dx, cy + dy, steps=30)
        page.mouse.up()
    for delta in (-300, -300, 300, 300):
        page.mouse.wheel(0, delta)
        page.wait_for_timeout(250)
    seconds = time.perf_counter() - start
    frames = page.evaluate("() => { window.__frames.on = false; return window.__frames; }")
    gaps, drew = frames["gaps"][1:], frames["drew"][1:]
    redrawn = [g for g, d in zip(gaps, drew, strict=True) if d]
    out = {"frame_ms_median": round(median(gaps), 1), "frame_ms_p95": round(percentile(gaps, 95), 1),
           "frames": len(gaps), "seconds": round(seconds, 2)}
    if subscribe:
        out.update({"redraws": frames["draws"], "redrawn_frame_ms_median": round(median(redrawn), 1),
                    "redrawn_frame_ms_p95": round(percentile(redrawn, 95), 1)})
    return out


def drawn(url: str, corpus: str, timeout_ms: float) -> dict[str, object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        sizes: list[int] = []
        page.on("response", lambda r: sizes.append(len(r.body())) if r.url.endswith("/points") else None)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")
        cdp.send("Network.enable")
        received = [0]
        cdp.on("Network.loadingFinished", lambda e: received.__setitem__(0, received[0] + e["encodedDataLength"]))
        page.goto(url)
        page.wait_for_function("() => window.assistant && window.assistant.loaded === true", timeout=timeout_ms)
        heap_before = heap_mb(cdp)
        received[0] = 0
        reply = ask(page, f"map --corpus {corpus}", timeout=timeout_ms)
        page.wait_for_function("() => !!document.querySelector('.corpus-map[data-drawn=\"1\"]')", timeout=timeout_ms)
        ms = float(page.get_attribute(".corpus-map", "data-ms"))
        page.wait_for_timeout(500)
        bytes_received = received[0]
        heap_after = heap_mb(cdp)
        footer = reply.node.locator(".reply-footer").inner_text()
        server = float(re.search(r"([\d,.]+) ms", footer).group(1).replace(",", ""))
        token = page.get_attribute(".corpus-map", "data-map")
        state = f"window.assistantMap.states.get({token!r})"
        count = page.evaluate(f"{state}.plot.get('points').length")
        page.locator(".corpus-map").scroll_into_view_if_needed()
        pan = panning(page, ".map-canvas",
                      f"() => {state}.plot.subscribe('draw', () => {{ window.__frames.draws++; }})")
        reply2 = ask(page, f"map --corpus {corpus}", timeout=timeout_ms)  # the stored layout, reused
        page.wait_for_function("() => document.querySelectorAll('.corpus-map[data-drawn=\"1\"]').length > 1",
                               timeout=timeout_ms)
        ms2 = float(page.locator(".corpus-map").nth(1).get_attribute("data-ms"))
        footer2 = reply2.node.locator(".reply-footer").inner_text()
        server2 = float(re.search(r"([\d,.]+) ms", footer2).group(1).replace(",", ""))
        browser.close()
    return {"points_drawn": count, "reply_to_drawn_ms": ms, "command_ms_first": server,
            "reply_to_drawn_ms_again": ms2, "command_ms_reused_layout": server2,
            "points_bytes": sizes[0] if sizes else None, "bytes_received_for_the_command": bytes_received,
            "js_heap_mb_before": heap_before, "js_heap_mb_after": heap_after, "panning": pan, "page_errors": errors}


VEGA = """async ([spec, limit]) => {
    const holder = document.createElement('div');
    holder.id = 'vega-bench';  // on top of the page, where the mouse can reach it
    holder.style.cssText = 'position:fixed;left:20px;top:20px;z-index:9999;background:#fff';
    document.body.append(holder);
    const start = performance.now();
    const drawn = window.vegaEmbed(holder, spec, { renderer: 'canvas', actions: false })
        .then(async (result) => { await result.view.runAsync(); return performance.now() - start; });
    const late = new Promise((resolve) => setTimeout(() => resolve(null), limit));
    return await Promise.race([drawn, late]);
}"""


def vega_lite(url: str, xy: np.ndarray, codes: np.ndarray, sizes: list[int], limit_s: float) -> list[dict]:
    """The same points as a Vega-Lite scatter (the kind the other charts draw) in the app's page, per size."""
    import json

    import altair as alt
    from playwright.sync_api import sync_playwright

    alt.data_transformers.disable_max_rows()
    out = []
    with sync_playwright() as p:
        browser = launch(p)
        for n in sizes:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
            page.goto(url)
            page.wait_for_function("() => !!window.vegaEmbed", timeout=120_000)
            frame = pd.DataFrame({"x": xy[:n, 0], "y": xy[:n, 1], "group": codes[:n].astype(str),
                                  "id": np.arange(n)})
            spec = alt.Chart(frame).mark_circle(size=18, opacity=0.6).encode(
                x="x:Q", y="y:Q", color="group:N", tooltip=["id", "group"]
            ).properties(width=600, height=600).interactive().to_dict()  # scales bound: drag pans, wheel zooms
            start = time.perf_counter()
            try:
                ms = page.evaluate(VEGA, [spec, limit_s * 1000])
            except Exception as exc:  # the page gave up (out of memory, crashed): say so
                ms, errors = None, [*errors, f"{type(exc).__name__}: {str(exc)[:200]}"]
            row = {"rows": n, "embed_to_drawn_ms": round(ms, 1) if ms is not None else None,
                   "wall_s": round(time.perf_counter() - start, 1), "spec_bytes": len(json.dumps(spec)),
                   "drawn": ms is not None, "page_errors": errors}
            if ms is None:
                row["note"] = f"not drawn within {limit_s:g} s"
            else:
                row["panning"] = panning(page, "#vega-bench canvas")
            out.append(row)
            print("vega-lite", row, flush=True)
            page.close()
        browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--dims", type=int, default=32, help="vector size of the drawn corpora")
    parser.add_argument("--fit-repeats", type=int, default=2)
    parser.add_argument("--vega-sizes", default="5000,20000,100000")
    parser.add_argument("--vega-timeout", type=float, default=120.0)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    root = Path(tempfile.mkdtemp(prefix="bench-map-"))
    results: dict[str, object] = {"machine": machine(), "fit": fit_times(root / "fit", args.fit_repeats)}
    print("fit", results["fit"], flush=True)
    corpora = root / "corpora"
    made = {n: synthetic(corpora, f"n{n}", n, args.dims, seed=n) for n in sizes}
    port = free_port()
    proc = start_app(port, {"ASSISTANT_CORPUS_DIR": str(corpora), "ASSISTANT_TIME_LIMIT_S": "600"})
    try:
        for n in sizes:
            try:
                row = drawn(f"http://127.0.0.1:{port}/", f"n{n}", 600_000)
                row["bytes_per_point"] = round(row["points_bytes"] / n, 3) if row["points_bytes"] else None
            except Exception as exc:  # report the stretch either way
                row = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            results[str(n)] = row
            print(n, row, flush=True)
        vega_sizes = [int(s) for s in args.vega_sizes.split(",") if s]
        if vega_sizes:
            same = made[100_000 if 100_000 in made else sizes[0]]  # the points the map drew
            xy = layout.normalized(layout.load_or_fit(same)[0])
            codes = pd.read_parquet(same.folder / ROWS, columns=["group"])["group"].to_numpy()
            results["vega_lite"] = vega_lite(f"http://127.0.0.1:{port}/", xy, codes, vega_sizes, args.vega_timeout)
        results["machine_after"] = machine()
    finally:
        proc.terminate()
        proc.wait(30)
    print(write("map", results))


if __name__ == "__main__":
    main()
