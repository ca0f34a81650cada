"""The offline Vega / Vega-Lite / vega-embed bundle the page draws charts with.

Altair writes specs for one Vega-Lite version (``alt.SCHEMA_VERSION``); Gradio's own
``gr.Plot`` bundles an older Vega-Lite that cannot draw some of them (interval
selections fail with ``Unrecognized signal name``). So the page draws every chart
itself with the Vega-Lite version its specs were written for, from a JavaScript
bundle that ``vl-convert-python`` builds offline (no CDN). The bundle is built once
per machine (about a second) and kept in the temporary folder.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import altair as alt


def vegalite_version() -> str:
    """The ``major.minor`` Vega-Lite version Altair's specs are written for (``"6.4"`` for v6.4.1)."""
    match = re.match(r"v?(\d+)\.(\d+)", alt.SCHEMA_VERSION)
    if match is None:  # pragma: no cover - Altair always has a version
        raise RuntimeError(f"unexpected Altair schema version {alt.SCHEMA_VERSION!r}")
    return f"{match.group(1)}.{match.group(2)}"


def bundle_path(folder: Path | None = None) -> Path:
    """The bundle's file, built on first use; safe when several processes build it at once."""
    import vl_convert

    version = vegalite_version()
    available = vl_convert.get_vegalite_versions()
    if version not in available:  # the newest vl-convert knows, rather than no chart at all
        version = available[-1]
    folder = folder or Path(tempfile.gettempdir()) / "assistant-vega"
    path = folder / f"vega-embed-vl{version}-vlc{vl_convert.__version__}.js"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".{path.name}.{os.getpid()}"
        partial.write_text(vl_convert.javascript_bundle(vl_version=version), encoding="utf-8")
        os.replace(partial, path)  # atomic: another process sees all of it or none
    return path
