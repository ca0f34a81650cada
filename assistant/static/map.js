// A corpus map: regl-scatterplot (scatter.js) fed the binary map of tools/corpus/layout.py.
// Used by the page (window.assistantMap, texts fetched from the map endpoints) and by the offline
// HTML export (the same buffer embedded, no server). Every text shown is set with textContent.
const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                 "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#8c564b"];

// header: "MAP1", rows, bytes per colour code, 0 (uint32 LE); then x,y float32 pairs; then the codes
export function decode(buffer) {
  const head = new DataView(buffer, 0, 16);
  const magic = String.fromCharCode(...new Uint8Array(buffer, 0, 4));
  if (magic !== "MAP1") throw new Error("not a map buffer");
  const rows = head.getUint32(4, true), codeBytes = head.getUint32(8, true);
  const xy = new Float32Array(buffer, 16, rows * 2);
  const codes = codeBytes === 1 ? new Uint8Array(buffer, 16 + rows * 8, rows)
    : new Uint16Array(buffer.slice(16 + rows * 8, 16 + rows * 8 + rows * 2));
  const x = new Float32Array(rows), y = new Float32Array(rows), z = new Float32Array(rows);
  for (let i = 0; i < rows; i++) { x[i] = xy[2 * i]; y[i] = xy[2 * i + 1]; z[i] = codes[i]; }
  return { rows, x, y, z };
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

// source: { buffer: ArrayBuffer, meta, rows(ids) -> Promise<[{id, text, meta}]>, select(ids), panel: Element|null }
export async function drawMap(createScatterplot, holder, source) {
  const { meta } = source;
  const data = decode(source.buffer);
  holder.textContent = "";
  const frame = el("div", "map-frame");
  const canvas = el("canvas", "map-canvas");
  const tip = el("div", "map-tip");
  tip.hidden = true;
  const labels = el("div", "map-labels");
  frame.append(canvas, labels, tip);
  const legend = el("div", "map-legend");
  meta.categories.forEach((name, i) => {
    const item = el("span", "map-key");
    const swatch = el("i");
    swatch.style.background = PALETTE[i % PALETTE.length];
    item.append(swatch, document.createTextNode(`${name} (${meta.counts[i].toLocaleString()})`));
    legend.append(item);
  });
  holder.append(frame, legend);
  const { width, height } = frame.getBoundingClientRect();
  const plot = createScatterplot({
    canvas, width: Math.max(200, width), height: Math.max(200, height),
    pointSize: data.rows > 200000 ? 1.5 : data.rows > 20000 ? 2.5 : 4,
    pointColor: meta.categories.map((_, i) => PALETTE[i % PALETTE.length]),
    colorBy: "valueA", opacity: data.rows > 200000 ? 0.5 : 0.8,
    opacityInactiveScale: 0.25,  // while points are selected the others fade, so a lassoed region stands out
    lassoColor: [0.1, 0.1, 0.1, 0.8], backgroundColor: [1, 1, 1, 1],
  });
  const state = { plot, rows: data.rows, drawn: false, hovered: -1, selected: [], cache: new Map() };
  const started = performance.now();
  await plot.draw({ x: data.x, y: data.y, valueA: data.z }, { zDataType: "categorical" });
  state.drawn = true;
  state.drawMs = performance.now() - started;
  holder.dataset.points = String(data.rows);

  const texts = async (ids) => {
    const need = ids.filter((i) => !state.cache.has(i));
    for (let i = 0; i < need.length; i += 200) {
      for (const row of await source.rows(need.slice(i, i + 200))) state.cache.set(row.id, row);
    }
    return ids.map((i) => state.cache.get(i)).filter(Boolean);
  };
  const describe = (row) => {
    const bits = Object.entries(row.meta || {}).map(([k, v]) => `${k}: ${v}`);
    return { head: `#${row.id}  ${meta.categories[data.z[row.id]] ?? ""}`, text: row.text, meta: bits.join(" · ") };
  };
  const placeLabels = () => {
    labels.textContent = "";
    for (const anchor of meta.anchors || []) {
      const at = plot.getScreenPosition(anchor.id);
      if (!at) continue;
      const label = el("span", "map-label", anchor.label);
      label.style.left = `${at[0]}px`;
      label.style.top = `${at[1]}px`;
      labels.append(label);
    }
  };
  placeLabels();
  plot.subscribe("view", placeLabels);

  plot.subscribe("pointOver", async (i) => {
    state.hovered = i;
    const [row] = await texts([i]);
    if (state.hovered !== i || !row) return;
    const d = describe(row);
    tip.textContent = "";
    tip.append(el("b", "", d.head), el("div", "map-tip-text", d.text));
    if (d.meta) tip.append(el("div", "map-tip-meta", d.meta));
    const at = plot.getScreenPosition(i) || [0, 0];
    tip.style.left = `${Math.min(at[0] + 12, frame.clientWidth - 260)}px`;
    tip.style.top = `${at[1] + 12}px`;
    tip.hidden = false;
  });
  plot.subscribe("pointOut", () => { state.hovered = -1; tip.hidden = true; });

  const showSelection = async (ids) => {
    state.selected = ids;
    if (source.select) await source.select(ids);
    const panel = source.panel;
    if (!panel) return;
    const rows = await texts(ids.slice(0, 50));
    if (state.selected !== ids) return;  // a newer selection (a click right after a lasso) has the panel
    panel.textContent = "";
    if (!ids.length) { panel.append(el("p", "", "No points selected.")); return; }
    panel.append(el("p", "map-selection-head",
      `${ids.length.toLocaleString()} selected on the map${ids.length > 50 ? " (the first 50 listed)" : ""}; ` +
      "`search QUERY --in selection` and `clusters --in selection` use them."));
    const list = el("ol", "map-selection-list");
    for (const row of rows) {
      const item = el("li");
      item.append(el("b", "", `#${row.id} `), document.createTextNode(row.text));
      list.append(item);
    }
    panel.append(list);
    state.listed = true;
  };
  plot.subscribe("select", ({ points }) => { showSelection(Array.from(points)); });
  plot.subscribe("deselect", () => { showSelection([]); });
  state.showSelection = showSelection;
  return state;
}
