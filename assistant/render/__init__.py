"""Render: a ``Result`` as a person sees it, on each face.

Lives here: ``html`` (a reply as the page's payload: the sentence, "Read as", the
chart's spec and hint, tables as HTML, downloads, the footer), ``terminal`` (a reply
as terminal text, and its downloads written to a folder), ``tables`` (a table as escaped HTML: the
one place, for the page and the offline export) and ``vega`` (the offline
Vega/Vega-Lite/vega-embed bundle the page serves itself, so every chart's spec and
its renderer agree), ``raster`` (a drawing, such as every attention head, as a PNG for the faces that run
no page script) and ``starters`` (the empty conversation: welcome and starter questions).
The page's Gradio wiring stays in ``assistant.app``.

May import: ``tools.core``, ``assistant.dispatch`` (the ``Reply``); never gradio and
never ``assistant.commands``.
"""
