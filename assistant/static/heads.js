// Attention heads drawn by the page (no Vega-Lite: 6 x 12 heads of 32 x 32 weights are far past its row limit).
// Every drawn layer x head is a raster heatmap on its own canvas, and below them the head view people know from
// bertviz: each token on the left (a query) joined by lines to the tokens on the right (the keys) it attends to,
// a line's opacity its weight; hover a token to see only its lines; pick a layer and a head (or all heads), or
// click a heatmap to open it. Fed the compact payload of tools/attention/heads.py: uint8 weights (w * 255),
// deflated and base64-encoded. Every text shown is set with textContent.
const HEAD_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
  "#bcbd22", "#17becf", "#393b79", "#ad494a", "#637939", "#8c6d31", "#843c39", "#7b4173"];
const ROW = 18;      // px per token in the head view
const LABEL = 26;    // px of the grid's layer labels
const GAP = 3;       // px between heatmaps
const FAINT = 0.01;  // lines under this weight are not drawn (0.05 when every head of a layer is drawn)

const STYLE = `
.heads-title { font-weight: 600; font-size: 0.95em; margin: 4px 0 6px; }
.heads-grid { display: grid; gap: ${GAP}px; align-items: center; margin-bottom: 4px; }
.heads-grid .heads-col, .heads-grid .heads-row { font-size: 10px; color: #57606a; text-align: center; }
.heads-grid canvas { display: block; cursor: pointer; outline: 1px solid #e5e7eb; }
.heads-grid canvas:hover { outline: 2px solid #f59e0b; }
.heads-grid canvas.picked { outline: 2px solid #111827; }
.heads-key { display: flex; align-items: center; gap: 6px; font-size: 11px; color: #57606a; margin: 2px 0 8px; }
.heads-key canvas { height: 10px; width: 120px; }
.head-view { border-top: 1px solid #e5e7eb; padding-top: 6px; max-width: 100%; overflow-x: auto; }
.head-view .hv-controls { display: flex; flex-wrap: wrap; gap: 10px; align-items: center; font-size: 0.85em; }
.head-view select { font-size: 1em; padding: 1px 6px; appearance: auto; background-image: none; width: auto; }
.head-view .hv-swatches { display: flex; gap: 3px; }
.head-view .hv-swatches i { display: inline-block; width: 11px; height: 11px; border-radius: 2px; }
.head-view .hv-body { display: flex; align-items: flex-start; margin-top: 6px; }
.head-view .hv-side { display: flex; flex-direction: column; font: 12px monospace; }
.head-view .hv-side span { height: ${ROW}px; line-height: ${ROW}px; padding: 0 5px; white-space: pre;
  border-radius: 3px; cursor: default; }
.head-view .hv-left span { text-align: right; }
.head-view .hv-side span.hovered { outline: 1px solid #111827; }
.head-view .hv-hint { font-size: 0.8em; color: #57606a; margin: 4px 0 0; }
`;

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

// viridis (a polynomial fit of matplotlib's table), the scale of every heatmap of the page
const VIRIDIS = [[0.2777273272234177, 0.1050930431085774, -0.3308618287255563, -4.634230498983486,
  6.228269936347081, 4.776384997670288, -5.435455855934631], [0.005407344544966578, 1.404613529898575,
  0.214847559468213, -5.799100973351585, 14.17993336680509, -13.74514537774601, 4.645852612178535],
[0.3340998053353061, 1.384590162594685, 0.09509516302823659, -19.33244095627987, 56.69055260068105,
  -65.35303263337234, 26.3124352495832]];
const LUT = new Uint8ClampedArray(256 * 3);
for (let v = 0; v < 256; v++) {
  const t = v / 255;
  VIRIDIS.forEach((c, k) => {
    let x = 0;
    for (let p = c.length - 1; p >= 0; p--) x = x * t + c[p];
    LUT[v * 3 + k] = Math.round(Math.min(1, Math.max(0, x)) * 255);
  });
}

async function inflate(data) {
  const bytes = Uint8Array.from(atob(data), (ch) => ch.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function heatmap(weights, offset, n, cell) {
  const dpr = window.devicePixelRatio || 1;
  const canvas = el("canvas", "heads-cell");
  canvas.width = Math.round(cell * dpr);
  canvas.height = Math.round(cell * dpr);
  canvas.style.width = `${cell}px`;
  canvas.style.height = `${cell}px`;
  const image = new ImageData(n, n);
  for (let i = 0; i < n * n; i++) {
    const v = weights[offset + i];
    image.data.set([LUT[v * 3], LUT[v * 3 + 1], LUT[v * 3 + 2], 255], i * 4);
  }
  const raw = el("canvas");
  raw.width = n;
  raw.height = n;
  raw.getContext("2d").putImageData(image, 0, 0);
  const ctx = canvas.getContext("2d");
  ctx.imageSmoothingEnabled = canvas.width < n;  // blocks stay sharp when enlarged, averaged when shrunk
  ctx.drawImage(raw, 0, 0, canvas.width, canvas.height);
  return canvas;
}

function colourKey() {
  const key = el("div", "heads-key");
  const bar = el("canvas");
  bar.width = 256;
  bar.height = 1;
  const image = new ImageData(256, 1);
  for (let v = 0; v < 256; v++) image.data.set([LUT[v * 3], LUT[v * 3 + 1], LUT[v * 3 + 2], 255], v * 4);
  bar.getContext("2d").putImageData(image, 0, 0);
  key.append(el("span", "", "weight 0"), bar, el("span", "", "1 · rows: queries, columns: keys · click a map to open it below"));
  return key;
}

// state: { meta, weights, n, layer (index), head (index or -1: all), hover: null | ["q" | "k", index] }
function drawLines(state) {
  const { view, n, weights, meta } = state;
  const canvas = view.lines;
  const width = canvas.clientWidth || parseInt(canvas.style.width, 10);
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(n * ROW * dpr);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, n * ROW);
  ctx.lineWidth = 1.6;
  const heads = state.head >= 0 ? [state.head] : meta.heads.map((_, h) => h);
  const [side, at] = state.hover || [null, -1];
  const shade = new Float32Array(n);  // the other side's tokens: mean weight over the shown heads
  let lines = 0;
  for (const h of heads) {
    const base = (state.layer * meta.heads.length + h) * n * n;
    ctx.strokeStyle = state.head >= 0 ? "#1f77b4" : HEAD_COLOURS[h % HEAD_COLOURS.length];
    for (let i = 0; i < n; i++) {
      if (side === "q" && i !== at) continue;
      for (let j = 0; j < n; j++) {
        if (side === "k" && j !== at) continue;
        const w = weights[base + i * n + j] / 255;
        if (side === "q") shade[j] += w / heads.length;
        if (side === "k") shade[i] += w / heads.length;
        if (w < (state.head >= 0 ? FAINT : 5 * FAINT)) continue;
        ctx.globalAlpha = Math.min(1, state.head >= 0 ? w : w * 1.5);
        ctx.beginPath();
        ctx.moveTo(0, (i + 0.5) * ROW);
        ctx.lineTo(width, (j + 0.5) * ROW);
        ctx.stroke();
        lines++;
      }
    }
  }
  ctx.globalAlpha = 1;
  const lit = [];
  view.left.forEach((span, i) => {
    span.classList.toggle("hovered", side === "q" && i === at);
    span.style.background = side === "k" ? `rgba(31, 119, 180, ${Math.min(1, shade[i] * 1.2)})` : "";
    if (side === "k" && shade[i] >= 0.1) lit.push(`q${i}`);
  });
  view.right.forEach((span, j) => {
    span.classList.toggle("hovered", side === "k" && j === at);
    span.style.background = side === "q" ? `rgba(31, 119, 180, ${Math.min(1, shade[j] * 1.2)})` : "";
    if (side === "q" && shade[j] >= 0.1) lit.push(`k${j}`);
  });
  const holder = state.holder;
  holder.dataset.layer = String(meta.layers[state.layer]);
  holder.dataset.head = state.head >= 0 ? String(meta.heads[state.head]) : "all";
  holder.dataset.hover = side ? `${side}${at}` : "";
  holder.dataset.lines = String(lines);
  holder.dataset.highlighted = lit.join(",");
  state.grid.forEach((c, k) => c.classList.toggle("picked",
    Math.floor(k / meta.heads.length) === state.layer && (state.head < 0 || k % meta.heads.length === state.head)));
}

function headView(state) {
  const { meta, n } = state;
  const box = el("div", "head-view");
  const controls = el("div", "hv-controls");
  const layer = el("select");
  layer.className = "hv-layer";
  meta.layers.forEach((l, i) => { const o = el("option", "", `layer ${l}`); o.value = String(i); layer.append(o); });
  const head = el("select");
  head.className = "hv-head";
  if (meta.heads.length > 1) { const o = el("option", "", "all heads"); o.value = "-1"; head.append(o); }
  meta.heads.forEach((h, i) => { const o = el("option", "", `head ${h}`); o.value = String(i); head.append(o); });
  const swatches = el("span", "hv-swatches");
  meta.heads.forEach((h, i) => {
    const s = el("i");
    s.style.background = HEAD_COLOURS[i % HEAD_COLOURS.length];
    s.title = `head ${h}`;
    swatches.append(s);
  });
  controls.append(el("b", "", "Head view"), layer, head, swatches);
  const body = el("div", "hv-body");
  const left = el("div", "hv-side hv-left");
  const right = el("div", "hv-side hv-right");
  const lines = el("canvas", "hv-lines");
  const spanWidth = Math.min(220, Math.max(...meta.tokens.map((t) => t.length)) * 7.3 + 12);
  const room = state.holder.clientWidth - 2 * spanWidth - 8;
  lines.style.width = `${Math.max(120, Math.min(320, room))}px`;
  lines.style.height = `${n * ROW}px`;
  const spans = (side, column) => meta.tokens.map((t, i) => {
    const span = el("span", "", t);
    span.dataset.index = String(i);
    span.style.width = `${spanWidth}px`;
    span.addEventListener("mouseenter", () => { state.hover = [side, i]; drawLines(state); });
    span.addEventListener("mouseleave", () => { state.hover = null; drawLines(state); });
    column.append(span);
    return span;
  });
  body.append(left, lines, right);
  box.append(controls, body, el("p", "hv-hint",
    "Hover a token on the left for what it attends to, on the right for what attends to it."));
  state.view = { box, layer, head, swatches, lines, left: spans("q", left), right: spans("k", right) };
  const pick = () => {
    state.layer = Number(layer.value);
    state.head = Number(head.value);
    swatches.style.display = state.head >= 0 ? "none" : "";
    drawLines(state);
  };
  layer.addEventListener("change", pick);
  head.addEventListener("change", pick);
  state.pick = (li, hi) => { layer.value = String(li); head.value = String(hi); pick(); };
  return box;
}

function ensureStyle() {
  if (document.querySelector("style[data-heads]")) return;
  const style = el("style", "", STYLE);
  style.dataset.heads = "1";
  document.head.append(style);
}

export async function draw(holder, drawing) {
  if (!drawing || drawing.kind !== "attention-heads") throw new Error("no attention drawing for this reply");
  ensureStyle();
  const meta = drawing.meta;
  const weights = await inflate(drawing.data);
  const [rows, cols, n] = meta.shape;
  if (weights.length !== rows * cols * n * n) throw new Error("the attention drawing's bytes do not match its shape");
  holder.textContent = "";
  const width = holder.clientWidth || 600;
  const cell = Math.max(16, Math.min(cols === 1 ? 120 : 96, Math.floor((width - LABEL - GAP * cols - 2) / cols)));
  const state = { holder, meta, weights, n, layer: 0, head: meta.heads.length > 1 ? -1 : 0, hover: null, grid: [] };
  const grid = el("div", "heads-grid");
  grid.style.gridTemplateColumns = `${LABEL}px repeat(${cols}, ${cell}px)`;
  grid.append(el("span", "heads-col", ""));
  meta.heads.forEach((h) => grid.append(el("span", "heads-col", rows > 1 || cols > 1 ? `h${h}` : "")));
  meta.layers.forEach((l, li) => {
    grid.append(el("span", "heads-row", `L${l}`));
    meta.heads.forEach((h, hi) => {
      const canvas = heatmap(weights, (li * cols + hi) * n * n, n, cell);
      canvas.title = `layer ${l} head ${h}`;
      canvas.dataset.layer = String(l);
      canvas.dataset.head = String(h);
      canvas.addEventListener("click", () => state.pick(li, hi));
      grid.append(canvas);
      state.grid.push(canvas);
    });
  });
  holder.append(el("div", "heads-title", meta.title), grid, colourKey(), headView(state));
  drawLines(state);
  holder.dataset.drawn = "1";
  window.assistantHeads.states.set(holder.dataset.drawing, state);
  return state;
}

window.assistantHeads = { draw, states: new Map() };
