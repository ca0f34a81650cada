"""The corpus map at scale: layout fit time, bytes per point, and reply -> every point drawn in headless Chromium.

Builds complete synthetic corpora directly in the store's format (vectors made, not encoded), then:
- fits the PCA layout of 100,000 rows x 384 dims (and UMAP when umap-learn is installed);
- serves them with `python -m assistant` and, per size (default 100,000 and 1,000,000 points), types `map`
  and reads the page's own timing: the reply shown -> meta and binary points fetched, decoded, every point drawn
  (``data-ms`` on the map), plus the bytes the points response carried.

    .venv/bin/python bench/map.py [--sizes 100000,1000000] [--dims 32]
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
from common import free_port, machine, start_app, write

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.browsing import ask, launch  # noqa: E402
from tools.corpus import layout  # noqa: E402
from tools.corpus.store import NORMS, ROWS, VECTORS, Corpus, Manifest, save_npy  # noqa: E402


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


def fit_times(root: Path) -> dict[str, float]:
    corpus = synthetic(root, "fit100k", 100_000, 384)
    out = {}
    start = time.perf_counter()
    layout.load_or_fit(corpus, layout.Method.PCA)
    out["pca_100k_384d_s"] = round(time.perf_counter() - start, 2)
    if layout.umap_installed():
        start = time.perf_counter()
        layout.load_or_fit(corpus, layout.Method.UMAP)
        out["umap_100k_384d_s"] = round(time.perf_counter() - start, 2)
    else:
        out["umap_100k_384d_s"] = "umap-learn not installed"
    return out


def drawn(url: str, corpus: str, timeout_ms: float) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        sizes: list[int] = []
        page.on("response", lambda r: sizes.append(len(r.body())) if r.url.endswith("/points") else None)
        page.goto(url)
        reply = ask(page, f"map --corpus {corpus}", timeout=timeout_ms)
        page.wait_for_function("() => !!document.querySelector('.corpus-map[data-drawn=\"1\"]')", timeout=timeout_ms)
        ms = float(page.get_attribute(".corpus-map", "data-ms"))
        footer = reply.node.locator(".reply-footer").inner_text()
        server = float(re.search(r"([\d,.]+) ms", footer).group(1).replace(",", ""))
        token = page.get_attribute(".corpus-map", "data-map")
        count = page.evaluate(f"window.assistantMap.states.get({token!r}).plot.get('points').length")
        reply2 = ask(page, f"map --corpus {corpus}", timeout=timeout_ms)  # the stored layout, reused
        page.wait_for_function("() => document.querySelectorAll('.corpus-map[data-drawn=\"1\"]').length > 1",
                               timeout=timeout_ms)
        ms2 = float(page.locator(".corpus-map").nth(1).get_attribute("data-ms"))
        footer2 = reply2.node.locator(".reply-footer").inner_text()
        server2 = float(re.search(r"([\d,.]+) ms", footer2).group(1).replace(",", ""))
        browser.close()
    return {"points_drawn": count, "reply_to_drawn_ms": ms, "command_ms_first": server,
            "reply_to_drawn_ms_again": ms2, "command_ms_reused_layout": server2,
            "points_bytes": sizes[0] if sizes else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--dims", type=int, default=32, help="vector size of the drawn corpora")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    root = Path(tempfile.mkdtemp(prefix="bench-map-"))
    results: dict[str, object] = {"machine": machine(), "fit": fit_times(root / "fit")}
    print("fit", results["fit"], flush=True)
    corpora = root / "corpora"
    for n in sizes:
        synthetic(corpora, f"n{n}", n, args.dims, seed=n)
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
    finally:
        proc.terminate()
        proc.wait(30)
    print(write("map", results))


if __name__ == "__main__":
    main()
