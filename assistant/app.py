"""The Gradio page: conversation log, command box, side panel, downloads, the ``run`` API, and (``--mcp``)
the agent face at ``/mcp`` on the same server."""

from __future__ import annotations

import contextlib
import dataclasses
import html
import logging
import os
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # the app must not phone home

from typing import Any

import gradio as gr

from assistant import understanding
from assistant.commands.base import Context, Invocation
from assistant.commands.registry import COMMANDS, TABLE
from assistant.conversations import Conversations
from assistant.corpora import Jobs
from assistant.dispatch import Reply, execute, run_limited
from assistant.maps import Maps
from assistant.maps import lifespan as map_routes
from assistant.mcp_server import PATH as MCP_PATH
from assistant.mcp_server import AgentFace, guarded
from assistant.mcp_server import tools as agent_tools
from assistant.memory import limit_arenas
from assistant.panel import EMPTY, TABLE_LABEL, Panel, restored_panel, side_panel
from assistant.render.html import reply_payload
from assistant.render.starters import starters_html
from assistant.render.vega import bundle_path
from assistant.session import Session
from assistant.sharing.links import META, link_html, page_address, permalink
from assistant.store import ResultStore
from assistant.visitors import Visitors
from tools.core.config import Settings
from tools.core.errors import UserError
from tools.models.hub import ModelHub
from tools.models.mlm_head import masked_lm_head
from tools.models.names import ALIASES, EMBEDDED

STATIC = Path(__file__).resolve().parent / "static"

log = logging.getLogger("assistant")

#: Where the page keeps its conversation's id (the browser's localStorage; never in a link).
CONVERSATION_KEY = "assistant-conversation"


def build(hub: ModelHub | None = None, settings: Settings | None = None) -> gr.Blocks:
    """The whole page. One ``hub`` (models) is shared; each visitor gets their own Session.

    The conversation lives on the server (the visitor's Session) and in the page's log; each
    command sends only its line and receives only its own reply (``reply``, a hidden JSON value
    that the page's script appends to the log and draws), so a command costs the same at turn 50
    as at turn 1.
    """
    settings = settings or Settings.from_env()
    limit_arenas(settings.malloc_arenas)  # before the server's threads start: they share these arenas
    hub = hub or ModelHub(settings)
    model_choices = list(dict.fromkeys([settings.model, *EMBEDDED, *ALIASES]))

    conversations = Conversations(settings)  # each conversation on disk, for reloads and restarts
    visitors = Visitors(settings, conversations)
    store = ResultStore(settings.results_mb * 2**20)  # the latest full results of every visitor, one byte cap
    jobs = Jobs()  # corpora being encoded in the background, shared by every visitor's commands
    maps = Maps()  # corpus maps the page may fetch, each by its conversation's token (assistant.maps)

    def respond(line: str, session: Session, model_name: str, mlm_name: str,
                request: gr.Request, progress: gr.Progress = gr.Progress()):
        session.mlm_model = mlm_name or ""
        visitors.back(getattr(request, "session_hash", None))
        if request is not None:
            session.base_url = page_address(dict(request.headers)) or session.base_url
        answered = session.answered
        switch_error = _switch_model(session, model_name)
        if switch_error is not None:
            reply = Reply(line or "", error=switch_error)
        else:
            reply = execute(line or "", session, hub, settings,
                            progress=lambda fraction, message: progress(fraction, desc=message), store=store,
                            jobs=jobs, maps=maps)
        turn = session.turns[-1] if reply.ok and session.turns else None
        link = ""
        if turn is not None and turn.command not in META:  # every answer carries its permalink
            link = link_html(permalink(session.base_url, turn.line, turn.model))
        payload = reply_payload(reply, link)
        conversations.save(session, line or "", payload, session.turns[-1] if session.answered > answered else None)
        # the box is the page's: emptied as the line left, given back on an error (page.js)
        return (gr.update(), payload, session, *_shown(side_panel(reply, session, conversations)),
                gr.update(value=session.model or settings.model))

    def _switch_model(session: Session, model_name: str) -> str | None:
        """Take the picker's model only once it loads, so a bad pick leaves the conversation's model working."""
        if not model_name or model_name == session.model:
            return None
        try:
            hub.get(model_name)
        except UserError as exc:
            return f"{exc} This conversation keeps `{session.model or settings.model}`."
        session.model = model_name  # named, so permalinks and history carry the model
        return None

    def on_load(session: Session, model_name: str, mlm_name: str, kept_id: str, request: gr.Request,
                progress: gr.Progress = gr.Progress()):
        """The page opens: its kept conversation comes back (the id its browser holds), then a permalink
        (``?q=<command>&model=<name>``) runs its command."""
        params = dict(request.query_params) if request is not None else {}
        line, wanted = str(params.get("q") or "").strip(), str(params.get("model") or "").strip()
        if request is not None:
            session.base_url = page_address(dict(request.headers))
        restored = conversations.restore(str(kept_id or ""), session)
        back = restored.to_page() if restored is not None else {"id": session.key, "replies": [], "dropped": 0}
        if not conversations.kept:
            back["id"] = ""  # nothing is kept here: the browser keeps no id
        picked = gr.update(value=session.model) if restored is not None and session.model else gr.update()
        panel = _shown(restored_panel(session, conversations) if restored is not None else None)
        if not line:
            return (gr.update(), gr.update(), session, *panel, picked, back)
        return (*respond(line, session, wanted or session.model or model_name, mlm_name, request, progress), back)

    def new_conversation(session: Session):
        """The page's "New conversation": the old one is deleted here and a fresh one begins."""
        conversations.forget(session.key)
        session.close()
        fresh = Session(base_url=session.base_url)
        back = {"id": fresh.key if conversations.kept else "", "replies": [], "dropped": 0}
        return fresh, back, gr.update(value=settings.model)

    def run(command: str, model: str = "") -> dict[str, Any]:
        """Run one assistant command line and return its JSON (ok, text, tables, charts, error).

        Args:
            command: a command line such as "compare A cat. | A kitten." or "help".
            model: the model to use (default: the server's default model).
        """
        session = Session(model=model or "")
        try:
            return execute(command, session, hub, settings, store=store, jobs=jobs, maps=maps).to_json()
        finally:
            session.close()  # one call, one conversation: nothing of it stays on the server

    run.__doc__ = RUN_DOC.format(verbs=", ".join(spec.name for spec in COMMANDS if spec.name not in META))

    with gr.Blocks(title="Embedding assistant", delete_cache=(600, int(settings.session_idle_s))) as demo:
        # deep-copied per visitor (a callable would add a public load API: an MCP tool); freed after
        # ASSISTANT_SESSION_IDLE_S without a command, and soon after its page closes (Visitors)
        session = gr.State(Session(), time_to_live=settings.session_idle_s, delete_callback=Session.close)
        with gr.Row(equal_height=False):
            with gr.Column(scale=3, min_width=560):
                gr.HTML(starters_html(_can_mask(hub, settings)), elem_id="conversation", container=False, padding=False,
                        js_on_load=None)
                with gr.Row(elem_id="command-row"):
                    box = gr.Textbox(placeholder="compare A cat sat on the mat. | A kitten sat on the rug.",
                                     show_label=False, scale=8, lines=1, max_lines=6, autofocus=True,
                                     elem_id="command-box")
                    send = gr.Button("Run", variant="primary", scale=1, min_width=80, elem_id="run-button")
                reply = gr.JSON(visible=False, elem_id="reply-carrier")
                kept_id = gr.Textbox(visible=False, elem_id="conversation-id")  # filled from the browser on load
                restored = gr.JSON(visible=False, elem_id="restore-carrier")
            with gr.Column(scale=1, min_width=320, elem_id="side-panel"):
                model = gr.Dropdown(model_choices, value=settings.model, label="Model", allow_custom_value=True,
                                    info="an alias, a Hugging Face id, or a folder under ASSISTANT_MODEL_ROOTS")
                mlm = gr.Dropdown(list(dict.fromkeys([settings.mlm_model, *ALIASES])), value=settings.mlm_model,
                                  label="Masked-LM model for `mask`", allow_custom_value=True,
                                  info="used when the model above has no masked-LM head")
                table = gr.Dataframe(label=TABLE_LABEL, interactive=False, max_height=360, elem_id="full-table",
                                     value=EMPTY)
                files = gr.File(label="Downloads of the latest reply (CSV, JSON)", file_count="multiple",
                                interactive=False, elem_id="downloads")
                upload = gr.File(label="Benchmark data (TSV, CSV or JSONL), then `benchmark --data <file name>`",
                                 file_types=[".tsv", ".csv", ".jsonl", ".txt"], file_count="single",
                                 elem_id="upload")
                corpus_upload = gr.File(label="Your texts (CSV, TSV, JSONL, Parquet or TXT, one text per line), "
                                        "then `corpus load <file name>`",
                                        file_types=[".csv", ".tsv", ".jsonl", ".parquet", ".txt"],
                                        file_count="single", elem_id="corpus-upload")
                new = gr.Button("New conversation", size="sm", elem_id="new-conversation")
                with gr.Row():
                    export_md = gr.Button("Export: Markdown (.zip)", size="sm", elem_id="export-markdown")
                    export_html = gr.Button("Export: HTML (offline)", size="sm", elem_id="export-html")
                exported = gr.File(label="Conversation export", interactive=False, elem_id="export-files")
                gr.HTML("<div id='map-selection'><p>Points you lasso on a map (shift-drag) are listed here.</p></div>",
                        label="Selected on the map", elem_id="map-selection-panel")
        outputs = [box, reply, session, table, files, model]
        inputs = [box, session, model, mlm]
        show = "(payload) => window.assistant.append(payload)"
        # One event for Run and Enter, so "once" holds across both: a page has one command in flight at a time
        # (a second Run or Enter meanwhile is dropped, and the page says so).
        gr.on([send.click, box.submit], respond, inputs, outputs, api_visibility="private", concurrency_id="commands",
              js="(...args) => window.assistant.ask(...args)", show_progress_on=[box], trigger_mode="once",
              ).then(None, [reply], None, js=show, api_visibility="private")
        def uploaded(path: str | None, s: Session, purpose: str, limit_mb: int) -> tuple[Session, Any, Any]:
            """The file is remembered and its command put in the box; the upload field is emptied, ready for the
            next file (the box names this one)."""
            kept_session, line = _remember_upload(path, s, purpose, limit_mb)
            conversations.remember(kept_session)
            return kept_session, line, gr.update(value=None)

        upload.upload(lambda path, s: uploaded(path, s, "benchmark", settings.max_upload_mb),
                      [upload, session], [session, box, upload], api_visibility="private")
        corpus_upload.upload(lambda path, s: uploaded(path, s, "corpus", settings.corpus_max_mb),
                             [corpus_upload, session], [session, box, corpus_upload], api_visibility="private")
        kept = f"{{ try {{ return localStorage.getItem({CONVERSATION_KEY!r}) || ''; }} catch (e) {{ return ''; }} }}"
        demo.load(on_load, [session, model, mlm, kept_id], [*outputs, restored], api_visibility="private",
                  concurrency_id="commands", js=f"(s, m, l, k) => [s, m, l, (() => {kept})()]",
                  ).then(None, [restored, reply], None, api_visibility="private",
                         js=f"async (c, p) => {{ await window.assistant.restore(c, {CONVERSATION_KEY!r}); "
                            "return window.assistant.append(p, true); }")
        new.click(new_conversation, [session], [session, restored, model], api_visibility="private",
                  concurrency_id="commands").then(None, [restored], None, api_visibility="private",
                                                   js="(c) => { window.assistant.clear(); "
                                                      f"return window.assistant.restore(c, {CONVERSATION_KEY!r}); }}")
        export_md.click(lambda s: _export(s, "markdown", hub, settings), [session], [exported],
                        api_visibility="private")
        export_html.click(lambda s: _export(s, "html", hub, settings), [session], [exported],
                          api_visibility="private")
        demo.unload(_leaving(visitors))
        gr.api(run, api_name="run", concurrency_id="commands")  # one limit for page and API
        # Gradio's own share of a request, measured by bench/http_overhead.py
        gr.api(_noop, api_name="noop", concurrency_id="commands", api_visibility="undocumented")
    demo.queue(max_size=settings.queue_size, default_concurrency_limit=settings.concurrency)
    demo.state_session_capacity = max(demo.state_session_capacity, 2 * settings.max_sessions)  # Visitors caps first
    visitors.attach(demo)
    demo.visitors = visitors  # for tests and bench/visitors.py
    demo.conversations = conversations  # for tests
    demo.maps = maps  # served by assistant.maps.lifespan (launch_options mounts it)
    return demo


RUN_DOC = """Run one embedding-assistant command line on a BERT-family model and return its reply as JSON.

The reply: ok (bool), command, model, elapsed_ms, text (markdown summary), warnings, settings,
tables (name, columns, rows), charts (name, vega_lite spec) and error (one sentence when ok is false).

Args:
    command: one command line: a verb ({verbs}), then texts separated by "|", then --options; for example
        "compare A cat sat. | A kitten sat. --pool all" or "help compare". A question in plain English also works
        ("How similar are 'A cat sat.' and 'A kitten sat.'?"): the reply's interpreted_as holds the command line
        it ran, and suggestions the command lines offered when the question was unclear.
    model: the model to run it on: an alias such as "minilm", a Hugging Face id, or "" for the server's default.
"""


def _can_mask(hub: ModelHub, settings: Settings) -> bool:
    """Whether `mask` answers here: the default model has a masked-LM head, or the fallback model loads."""
    try:
        if masked_lm_head(hub.get(settings.model)).usable:
            return True
    except UserError:
        pass
    return hub.can_load(settings.mlm_model)


def _export(session: Session, fmt: str, hub: ModelHub, settings: Settings) -> str | None:
    """The side panel's download: the `export` command's file, written into the conversation's downloads folder
    (it is not a turn of the conversation)."""
    ctx = Context(session, hub, settings, commands=TABLE)
    command = TABLE["export"]
    try:
        result = run_limited(command.run, ctx, Invocation("export", [], {"format": fmt}), settings.time_limit_s)
    except UserError as exc:
        gr.Warning(str(exc))
        return None
    artifact = result.artifacts[0]
    path = session.downloads_dir() / artifact.filename
    path.write_bytes(artifact.data)
    return str(path)


def _leaving(visitors: Visitors):
    """The page's unload handler: the visitor closed or reloaded the tab."""

    def leaving(request: gr.Request) -> None:
        visitors.left(getattr(request, "session_hash", None))

    return leaving


def _noop(command: str, model: str = "") -> dict[str, Any]:
    """The `run` endpoint's shape with no work: Gradio's own share of a request (bench/http_overhead.py)."""
    return {"ok": True, "command": "noop", "model": model, "text": command[:0]}


def _remember_upload(path: str | None, session: Session, purpose: str, limit_mb: int) -> tuple[Session, Any]:
    """Only files this visitor uploaded (in Gradio's upload folder) may be named by `benchmark --data` and
    `corpus load`; each kind of upload has its own size limit. The box gets the command that uses the file."""
    if not path:
        return session, gr.update()
    size = os.path.getsize(path)
    if size > limit_mb * 2**20:
        setting = "ASSISTANT_MAX_UPLOAD_MB" if purpose == "benchmark" else "ASSISTANT_CORPUS_MAX_MB"
        gr.Warning(f"That file is {size / 2**20:.1f} MB; {purpose} files may be at most {limit_mb} MB ({setting}).")
        return session, gr.update()
    session.uploads = (*session.uploads, path)
    name = os.path.basename(path)
    quoted = f'"{name}"' if '"' not in name else f"'{name}'"
    line = f"benchmark --data {quoted} --sample 200" if purpose == "benchmark" else f"corpus load {quoted}"
    return session, gr.update(value=line)


def _shown(panel: Panel | None) -> tuple[Any, Any]:
    """The side panel's table and downloads as Gradio updates (None: both stay as they are)."""
    if panel is None:
        return gr.update(), gr.update()
    return gr.update(value=panel.table, label=panel.label), gr.update(value=panel.files or None)


def launch(settings: Settings, host: str | None = "127.0.0.1", port: int | None = 7860, share: bool = False,
           mcp: bool | None = None) -> None:
    """Serve the page until interrupted.

    ``host``/``port`` None: Gradio's GRADIO_SERVER_NAME / GRADIO_SERVER_PORT (a Space sets them).
    ``share``: ask Gradio for a public link; with none to be had (no network) say so and keep serving.
    ``mcp``: also serve the agent face, one MCP tool per command, at ``/mcp`` (streamable HTTP) on the same
    server (None: the GRADIO_MCP_SERVER variable decides). Gradio's own MCP layer stays off.
    """
    if mcp is None:
        mcp = os.environ.get("GRADIO_MCP_SERVER", "").strip().lower() in ("1", "true", "yes")
    if share:  # a public link: each visitor's corpora are their own
        settings = dataclasses.replace(settings, corpus_shared=True)
    hub = ModelHub(settings)
    hub.get(settings.model)  # the first visitor's command finds the default model loaded
    log.info("Loaded %s; serving.", settings.model)
    understanding.prepare(hub, TABLE, settings)  # in the background: the first question finds the router ready
    demo = build(hub, settings)
    face = AgentFace(hub, settings, guard=guarded(host, share)) if mcp else None
    options = launch_options(settings)
    if face is not None:
        options["app_kwargs"] = {"lifespan": _both(map_routes, face.lifespan)}
    demo.launch(server_name=host, server_port=port, share=share, mcp_server=False, prevent_thread_lock=True,
                **options)
    if share and not demo.share_url:
        log.warning("No public link could be made (Gradio's share service is unreachable from here); "
                    "the assistant keeps serving at %s", demo.local_url)
    if face is not None:
        where = (demo.share_url or demo.local_url).rstrip("/") + MCP_PATH
        log.info("MCP server (streamable HTTP): %s, %d tools (one per command, and run)", where,
                 len(agent_tools(settings)))
    demo.block_thread()


def _both(first: Any, second: Any) -> Any:
    """Two lifespans as one."""
    @contextlib.asynccontextmanager
    async def joined(app: Any):
        async with first(app), second(app):
            yield

    return joined


#: The corpus map's scatter (assistant/static/scatter.js, built by `make scatter`) and drawing code, as modules.
MAP_HEAD = """<script type='module'>
import {{ createScatterplot }} from './gradio_api/file={scatter}';
import {{ drawMap }} from './gradio_api/file={drawing}';
window.assistantMap = {{ states: new Map(), async draw(holder) {{
  const t0 = performance.now();
  const base = `./assistant/map/${{encodeURIComponent(holder.dataset.map)}}`;
  const get = async (url, how) => {{ const r = await fetch(url); if (!r.ok) throw new Error((await r.json()).error);
    return how === 'json' ? r.json() : r.arrayBuffer(); }};
  const [meta, buffer] = await Promise.all([get(`${{base}}/meta`, 'json'), get(`${{base}}/points`)]);
  const state = await drawMap(createScatterplot, holder, {{ meta, buffer,
    rows: async (ids) => (await get(`${{base}}/rows?ids=${{ids.join(',')}}`, 'json')).rows,
    select: (ids) => fetch(`${{base}}/selection`, {{ method: 'POST', headers: {{ 'content-type': 'application/json' }},
      body: JSON.stringify({{ ids }}) }}),
    panel: document.querySelector('#map-selection') }});
  this.states.set(holder.dataset.map, state);
  holder.dataset.ms = (performance.now() - t0).toFixed(1);  // reply shown -> every point drawn
  holder.dataset.drawn = '1';
  return state;
}} }};
</script>"""


def launch_options(settings: Settings) -> dict[str, Any]:
    """What every launch of the page needs: its script, style, chart library and map scatter (served by the
    app, no CDN), the map endpoints (:mod:`assistant.maps`), no tracebacks to visitors, uploads capped, no
    analytics."""
    bundle = bundle_path()
    gr.set_static_paths([str(bundle.parent), str(STATIC)])
    head = (f"<script type='module' src='gradio_api/file={html.escape(str(bundle), quote=True)}'></script>"
            + MAP_HEAD.format(scatter=html.escape(str(STATIC / "scatter.js"), quote=True),
                              drawing=html.escape(str(STATIC / "map.js"), quote=True))
            + f"<script type='module' src='gradio_api/file={html.escape(str(STATIC / 'heads.js'), quote=True)}'>"
            "</script>")
    return {"css": (STATIC / "page.css").read_text(encoding="utf-8"),
            "js": (STATIC / "page.js").read_text(encoding="utf-8"), "head": head,
            "show_error": False, "max_file_size": f"{max(settings.max_upload_mb, settings.corpus_max_mb)}mb",
            "enable_monitoring": False, "app_kwargs": {"lifespan": map_routes}}
