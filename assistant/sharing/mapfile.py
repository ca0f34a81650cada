"""One corpus map as a standalone offline HTML file: the scatter bundle and the drawing code inlined, the
binary map (:func:`tools.corpus.layout.points_bytes`) embedded as base64; it opens from disk with no server.
Hovering shows a point's id and colour category (the texts stay on the server)."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

from tools.core.results import Artifact
from tools.corpus.facts import CorpusMap
from tools.corpus.layout import points_bytes

STATIC = Path(__file__).resolve().parent.parent / "static"
SCATTER, DRAWING = STATIC / "scatter.js", STATIC / "map.js"

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;margin:16px}}{css}</style></head>
<body><h1>{title}</h1><p>{subtitle}</p><div id="map"></div>
<script id="data" type="application/json">{data}</script>
<script type="module">
const data = JSON.parse(document.getElementById("data").textContent);
const load = (b64) => import(URL.createObjectURL(new Blob([atob(b64)], {{ type: "text/javascript" }})));
const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
const [scatter, drawing] = await Promise.all([load(data.scatter), load(data.drawing)]);
const rows = async (ids) => ids.map((id) => ({{ id, text: "", meta: {{}} }}));
window.mapState = await drawing.drawMap(scatter.createScatterplot, document.getElementById("map"),
  {{ buffer: bytes(data.points), meta: data.meta, rows, select: null, panel: null }});
</script></body></html>
"""


def offline_html(facts: CorpusMap) -> str:
    """The map as one HTML page that needs nothing but a browser with WebGL."""
    css = (STATIC / "page.css").read_text(encoding="utf-8")
    css = css[css.index("/* Corpus maps"):] if "/* Corpus maps" in css else ""
    meta = {"rows": facts.rows, "categories": list(facts.categories), "counts": list(facts.counts),
            "anchors": [{"id": i, "label": label} for i, label in facts.anchors]}
    data = {"meta": meta, "points": base64.b64encode(points_bytes(facts.xy, facts.codes)).decode("ascii"),
            "scatter": base64.b64encode(SCATTER.read_bytes()).decode("ascii"),
            "drawing": base64.b64encode(DRAWING.read_bytes()).decode("ascii")}
    title = f"{facts.corpus.name}: {facts.rows:,} points ({facts.method.upper()})"
    subtitle = (f"Coloured by {facts.color}. Scroll to zoom, drag to pan, hover a point for its id. "
                "regl-scatterplot 1.16.0 (MIT) is inlined.")
    # JSON inside <script>: "</" is escaped so no text can close the element
    return PAGE.format(title=html.escape(title), subtitle=html.escape(subtitle), css=css,
                       data=json.dumps(data).replace("</", "<\\/"))


def offline_artifact(facts: CorpusMap) -> Artifact:
    return Artifact(f"map_{facts.method}.html", offline_html(facts).encode("utf-8"), "text/html")
