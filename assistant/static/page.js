() => {
  // The conversation log of the page. The server sends only each new reply (its HTML and its
  // charts' Vega-Lite specs); this script appends it to the log, draws its charts with the
  // offline vega-embed bundle, scrolls so the new reply's first line is at the top of the view,
  // and turns the charts of old replies into "Show chart" buttons so a long conversation stays light.
  if (window.assistant) return;
  const A = (window.assistant = {
    seen: new Set(),  // payload ids already shown (a re-sent payload is never shown twice)
    specs: new Map(), // chart id -> Vega-Lite spec, kept so an old chart can be drawn again
    views: new Map(), // chart id -> live Vega view
    errors: [],       // charts that could not be drawn (tests read this)
    keepLive: 12,     // replies whose charts stay drawn
    turns: 0,
  });

  const log = () => document.querySelector("#conversation .log");
  const box = () => document.querySelector("#command-box textarea");

  function scrollToTop(el) {
    const container = log();
    if (!container || !el) return;
    container.scrollTop = el.offsetTop - container.offsetTop - 8;
  }

  // A one-sentence status under the command box (shown once, removed when its moment passes).
  function statusNote(id, text) {
    return (show) => {
      let note = document.getElementById(id);
      if (show && !note) {
        note = document.createElement("div");
        note.id = id;
        note.setAttribute("role", "status");
        note.textContent = text;
        const row = document.querySelector("#command-row");
        if (row) row.after(note);
      } else if (!show && note) {
        note.remove();
      }
    };
  }
  // One command per page at a time: while one is unanswered, the page framework drops another Run or Enter
  // (its events run "once"). Say so in one sentence instead of doing nothing; the note goes with the reply.
  const waitingNote = statusNote("waiting-note",
    "This page's command is still running: send the next one when its reply arrives.");
  // A line entered before the page has finished opening (its open event has not run: on a busy server it waits
  // its turn) would be dropped by the page framework: keep it, say so, and send it once the page is ready.
  const openingNote = statusNote("opening-note",
    "The page is still opening; your line will be sent as soon as it is ready.");
  const unanswered = () => !!(log() && log().querySelector(".pending"));

  // Enter in the command box or a Run click: held while the page opens, noted while a command runs.
  function sending(event, runs) {
    if (!A.loaded && runs) {
      event.preventDefault();
      event.stopImmediatePropagation();
      A.queued = true;
      openingNote(true);
    } else if (unanswered()) {
      waitingNote(true);
    }
  }
  document.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && event.target.closest("#command-box")) sending(event, true);
  }, true);
  document.addEventListener("click", (event) => {
    if (event.target.closest("#run-button, [data-run]")) sending(event, !!event.target.closest("#run-button"));
  }, true);

  // Called by the command event before the request leaves: the question shows at once.
  A.ask = (...args) => {
    const container = log();
    const line = String(args[0] ?? "");
    A.askedAt = performance.now();
    A.asked = line;
    // The box is emptied as the line leaves, so what is typed while it runs stays (an error puts it back).
    setTimeout(() => { if (box() && box().value === line) fill("", false); }, 0);
    if (container) {
      const ask = document.createElement("div");
      ask.className = "ask";
      ask.textContent = line || "(empty)";
      const pending = document.createElement("div");
      pending.className = "pending";
      pending.textContent = "Working…";
      container.append(ask, pending);
      scrollToTop(ask);
    }
    return args;
  };

  // The chart library is a module in the page's head: on a busy machine a conversation restored at load can reach its
  // charts before that module has run, so a chart waits for it (a while) before it says it cannot be drawn.
  async function chartLibrary(waitMs = 20000) {
    const start = performance.now();
    while (!window.vegaEmbed && performance.now() - start < waitMs) await new Promise((done) => setTimeout(done, 50));
    return window.vegaEmbed;
  }

  async function draw(el, id) {
    const spec = A.specs.get(id);
    if (!spec || !(await chartLibrary())) {
      A.errors.push(`${id}: ${window.vegaEmbed ? "no spec" : "the chart library did not load"}`);
      el.textContent = "This chart could not be drawn here; its table and the JSON download hold every number.";
      return;
    }
    try {
      const result = await window.vegaEmbed(el, spec, {
        actions: { export: true, source: false, compiler: false, editor: false },
        renderer: "canvas",
      });
      A.views.set(id, result.view);
      markWide(el);
    } catch (err) {
      A.errors.push(`${id}: ${err && err.message ? err.message : err}`);
      el.textContent = "This chart could not be drawn here; its table and the JSON download hold every number.";
    }
  }

  // A chart or table wider than its reply scrolls sideways; say so where it is cut, so nothing is hidden silently.
  function markWide(el, what = "chart") {
    const wide = el.scrollWidth > el.clientWidth + 2;
    el.classList.toggle("wide", wide);
    const next = el.nextElementSibling;
    const cue = next && next.classList.contains("wide-cue") ? next : null;
    if (wide && !cue) {
      const note = document.createElement("div");
      note.className = "wide-cue";
      note.textContent = `This ${what} is wider than the reply: scroll it sideways for the rest →`;
      el.after(note);
    } else if (!wide && cue) {
      cue.remove();
    }
  }

  const TABLES = ".table-block, details.more-table";
  function markWideTables(reply) {
    for (const el of reply.querySelectorAll(TABLES)) markWide(el, "table");
  }
  // A folded table opened: its rows may be wider than the reply.
  document.addEventListener("toggle", (event) => {
    const el = event.target.closest && event.target.closest(TABLES);
    if (el) markWide(el, "table");
  }, true);

  // A reply's drawings that are not Vega-Lite (every attention head as a raster: heads.js, loaded as a module).
  async function drawDrawings(reply) {
    const held = [...reply.querySelectorAll(".drawing[data-drawing]")];
    for (let i = 0; held.length && i < 100 && !window.assistantHeads; i++) await new Promise((r) => setTimeout(r, 100));
    await Promise.all(held.map(async (el) => {
      try {
        if (!window.assistantHeads) throw new Error("the drawing library did not load");
        await window.assistantHeads.draw(el, (A.drawings || new Map()).get(el.dataset.drawing));
      } catch (err) {
        A.errors.push(`${el.dataset.drawing}: ${err && err.message ? err.message : err}`);
        el.textContent = "This drawing could not be made here; its table and the .npy download hold every number.";
      }
    }));
  }

  // A corpus map (map.js, loaded as a module with the WebGL scatter): wait for it, then draw from the endpoints.
  async function drawMap(holder) {
    for (let i = 0; i < 100 && !window.assistantMap; i++) await new Promise((r) => setTimeout(r, 100));
    try {
      if (!window.assistantMap) throw new Error("the map library did not load");
      await window.assistantMap.draw(holder);
    } catch (err) {
      A.errors.push(`map: ${err && err.message ? err.message : err}`);
      holder.textContent = "This map could not be drawn here (it needs WebGL); its table and downloads hold every point.";
    }
  }

  function rest(reply) {
    // Old replies keep their text and tables; their charts become buttons that draw them again.
    for (const el of reply.querySelectorAll(".chart[data-chart]")) {
      const id = el.dataset.chart;
      const view = A.views.get(id);
      if (view) { view.finalize(); A.views.delete(id); }
      el.innerHTML = "";
      const button = document.createElement("button");
      button.type = "button";
      button.className = "redraw";
      button.dataset.chart = id;
      button.textContent = "Show chart";
      el.append(button);
    }
  }

  // A command the server never took (its queue is full: HTTP 503) or lost (the connection broke) ends in the
  // page framework's error toast, and no reply follows: answer the waiting question in one sentence instead.
  const FAILED = [
    ["busy", "The server is busy: its queue of waiting commands is full, so this one was not run; try again in a minute."],
    ["connection", "The connection to the server broke before this one was answered; your conversation is kept, try again."],
  ];
  new MutationObserver(() => {
    for (const toast of document.querySelectorAll(".toast-body:not([data-seen])")) {
      toast.dataset.seen = "1";
      const text = toast.textContent.toLowerCase();
      const known = FAILED.find(([word]) => text.includes(word));
      const pending = log() && log().querySelector(".pending:last-child");
      if (!known || !pending) continue;
      pending.className = "reply error";
      pending.textContent = known[1];
      pending.dataset.done = "1";
      if (!unanswered()) waitingNote(false);
    }
  }).observe(document.body, { childList: true, subtree: true });

  // Called after the command event: append the new reply, draw its charts, scroll to it.
  // `onLoad`: the page-open event (a permalink's command, or nothing); having nothing to show is not
  // a failure there, and must not mark a question the visitor already sent as unanswered.
  A.append = async (payload, onLoad = false) => {
    // The value arrives as the page framework's reactive proxy: take a plain copy first.
    payload = payload ? JSON.parse(JSON.stringify(payload)) : payload;
    if (onLoad) {
      A.loaded = true;  // the page-open event has run: every event listener is in place
      if (A.queued) {  // a line entered while the page was opening goes now
        A.queued = false;
        openingNote(false);
        setTimeout(() => document.querySelector("#run-button").click(), 0);
      }
    }
    if (!payload || !payload.id || A.seen.has(payload.id)) {
      if (onLoad) return [];
      // The event failed before a new reply arrived: say so where the question waits.
      const pending = log() && log().querySelector(".pending:last-child");
      if (pending) {
        pending.className = "reply error";
        pending.textContent = "The server did not answer this one; your conversation is kept, try again.";
        pending.dataset.done = "1";
      }
      if (!unanswered()) waitingNote(false);
      return [];
    }
    const container = log();
    if (!container) return [];
    const pending = container.querySelector(".pending");
    const reply = replyElement(payload);
    if (pending) pending.replaceWith(reply); else container.append(reply);
    markWideTables(reply);
    if (!payload.ok && !onLoad && box() && box().value === "" && A.asked) fill(A.asked, false);  // edit and retry
    const ask = reply.previousElementSibling;
    scrollToTop(ask && ask.classList.contains("ask") ? ask : reply);
    const draws = (payload.charts || []).map((chart) => {
      const el = reply.querySelector(`.chart[data-chart="${chart.id}"]`);
      return el ? draw(el, chart.id) : null;
    });
    for (const holder of reply.querySelectorAll(".corpus-map[data-map]")) draws.push(drawMap(holder));
    draws.push(drawDrawings(reply));
    await Promise.all(draws);
    scrollToTop(ask && ask.classList.contains("ask") ? ask : reply);
    reply.dataset.ms = (performance.now() - (A.askedAt ?? performance.now())).toFixed(1); // Enter -> drawn
    reply.dataset.done = "1";
    if (!unanswered()) waitingNote(false);
    restOld(container);
    return [];
  };

  // One reply's element, its charts' specs remembered (they are drawn by the caller, or on "Show chart").
  function replyElement(payload) {
    A.seen.add(payload.id);
    const reply = document.createElement("div");
    reply.className = "reply" + (payload.ok ? "" : " error");
    reply.dataset.turn = String(++A.turns);
    reply.innerHTML = payload.html;
    for (const chart of payload.charts || []) A.specs.set(chart.id, chart.spec);
    for (const drawing of payload.drawings || []) (A.drawings ||= new Map()).set(drawing.id, drawing);
    return reply;
  }

  function restOld(container) {
    const replies = container.querySelectorAll(".reply");
    for (let i = 0; i < replies.length - A.keepLive; i++) {
      if (replies[i].dataset.rested !== "1") { rest(replies[i]); replies[i].dataset.rested = "1"; }
    }
  }

  // "New conversation": the log goes back to its welcome and starter questions.
  A.clear = () => {
    for (const view of A.views.values()) view.finalize();
    A.views.clear();
    A.specs.clear();
    const container = log();
    if (container) for (const el of [...container.children]) if (!el.classList.contains("starters")) el.remove();
    waitingNote(false);
  };

  // Called as the page opens (and on "New conversation"): keep the conversation's id in this browser, and put
  // back every exchange the server kept, as it was shown. Only the latest replies' charts are drawn; older
  // ones wait behind "Show chart". A map's data was granted to the page that drew it: it offers to draw again.
  A.restore = async (conv, key) => {
    conv = conv ? JSON.parse(JSON.stringify(conv)) : null;
    if (!conv) return [];
    try {
      if (conv.id) localStorage.setItem(key, conv.id); else localStorage.removeItem(key);
    } catch (err) { /* storage refused (private mode): the conversation lasts as long as this page */ }
    const container = log();
    const items = (conv.replies || []).filter((item) => item.payload && item.payload.id && !A.seen.has(item.payload.id));
    if (!container || !items.length) return [];
    if (conv.dropped) {
      const note = document.createElement("p");
      note.className = "reply-note restored-note";
      note.textContent = `${conv.dropped} earlier repl${conv.dropped === 1 ? "y was" : "ies were"} not kept (each conversation keeps a few MB); history lists their lines.`;
      container.append(note);
    }
    const draws = [];
    items.forEach((item, i) => {
      const ask = document.createElement("div");
      ask.className = "ask";
      ask.textContent = item.line || "(empty)";
      const reply = replyElement(item.payload);
      reply.dataset.restored = "1";
      reply.dataset.done = "1";
      container.append(ask, reply);
      markWideTables(reply);
      for (const holder of reply.querySelectorAll(".corpus-map[data-map]")) {
        holder.removeAttribute("data-map");
        holder.textContent = "";
        const again = document.createElement("button");
        again.type = "button";
        again.className = "line";
        again.dataset.run = item.line;
        again.textContent = "Draw this map again";
        holder.append(again);
      }
      draws.push(drawDrawings(reply));
      if (i >= items.length - A.keepLive) {
        for (const el of reply.querySelectorAll(".chart[data-chart]")) draws.push(draw(el, el.dataset.chart));
      } else {
        rest(reply);
        reply.dataset.rested = "1";
      }
    });
    await Promise.all(draws);
    container.scrollTop = container.scrollHeight;
    return [];
  };

  function fill(line, run) {
    const el = box();
    if (!el) return;
    const setter = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set;
    setter.call(el, line);
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.focus();
    if (run) setTimeout(() => document.querySelector("#run-button").click(), 0);
  }

  document.addEventListener("click", (event) => {
    const target = event.target.closest("[data-fill], [data-run], button.redraw, button.copy-link");
    if (!target) return;
    if (target.matches("button.redraw")) {
      const holder = target.parentElement;
      holder.innerHTML = "";
      draw(holder, target.dataset.chart);
    } else if (target.matches("button.copy-link")) {
      const link = new URL(target.dataset.link, window.location.href).href;
      const done = () => { target.textContent = "Copied"; setTimeout(() => { target.textContent = "Copy link"; }, 1500); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(link).then(done, () => window.prompt("Copy this link", link));
      } else {
        window.prompt("Copy this link", link);
      }
    } else if (target.dataset.run !== undefined) {
      fill(target.dataset.run, true);
    } else {
      fill(target.dataset.fill, false);
    }
  });
}
