// GraphCanvas: pan, zoom, click and keys over an SVG that the kernel laid out once.
//
// The kernel sends the picture once (`svg`) and, per step, a small scoped style block
// (`css`) and the id of the node to keep in view (`focus`). Everything here is view
// state: the scale and offset live in the browser, so panning and zooming never go
// back to the kernel. A view opens fitted: the whole picture, or, when that would shrink
// its labels below `min_font_px`, the readable scale around the focused node or else the
// graph's output, with a note saying how much is in view. A click on a node (or Enter
// on the node the keyboard cursor is on) sets `selected`; a key the stepper knows is
// sent as a message {event: "key", key}.
//
// For a learner who does not use a mouse or does not see the picture: one tab stop
// into the picture; ↑ and ↓ move a keyboard cursor along the graph's edges (↑ to what
// a node reads, ↓ to what reads it), Shift+← and Shift+→ to its neighbours on the same
// level; Enter opens the inspector (`detail`, a panel over the picture's right side)
// on it, Escape closes it and comes back. T shows the graph as a table (`table`,
// filled by the kernel while `table_open`). Each step's one-sentence account
// (`announcement`) is read out by a live region and is the picture's description.

const MAX_SCALE = 8;
const STEP_KEYS = new Set(["ArrowLeft", "ArrowRight", "Home", "End", "p", "P"]);
const DRAG_SLOP = 4; // px a pointer may move and still count as a click

function button(label, title, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "ag-canvas-button";
  b.textContent = label;
  b.title = title;
  b.setAttribute("aria-label", title);
  b.addEventListener("click", (e) => {
    e.stopPropagation();
    onClick();
  });
  return b;
}

// The size the smallest label is drawn at, in CSS px at scale 1 (its font size times
// the SVG's px-per-user-unit): "fit" keeps every label, ids and edge labels included,
// at or above the readable floor.
function smallestFontPx(svg) {
  const sizes = [...svg.querySelectorAll("text")]
    .map((t) => parseFloat(t.getAttribute("font-size")))
    .filter((s) => s > 0);
  const size = sizes.length ? Math.min(...sizes) : 14;
  const box = svg.viewBox && svg.viewBox.baseVal;
  const perUnit = box && box.width ? svg.width.baseVal.value / box.width : 1;
  return size * perUnit;
}

// The graph's edges read from the picture: Graphviz titles each edge "a->b" (ports,
// "a:p", dropped). Returns {up: id -> [ids it reads], down: id -> [ids reading it]}.
function edgesOf(stage) {
  const up = new Map(), down = new Map();
  const add = (map, key, value) => {
    if (!map.has(key)) map.set(key, []);
    if (!map.get(key).includes(value)) map.get(key).push(value);
  };
  for (const title of stage.querySelectorAll("g.edge > title")) {
    const [from, to] = title.textContent.split("->").map((s) => s.split(":")[0].trim());
    if (!from || !to) continue;
    add(up, to, from);
    add(down, from, to);
  }
  return { up, down };
}

// What a node is, in words, from its tooltip: the first two lines ("op3: matmul",
// "t2 (4, 3) float64" and its kind).
function nodeWords(node) {
  const title = node.querySelector(":scope > title");
  const lines = title ? title.textContent.split("\n").map((l) => l.trim()).filter(Boolean) : [];
  return lines.slice(0, 2).join(", ") || node.id;
}

function download(name, blob) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

function render({ model, el }) {
  const uid = model.get("container_id"); // unique on the page: ids below build on it
  const root = document.createElement("div");
  root.className = "ag-canvas";
  root.tabIndex = 0;
  root.setAttribute("role", "application");
  root.setAttribute("aria-roledescription", "computational graph");
  root.setAttribute(
    "aria-label",
    "Computational graph. Left and right arrows step, up and down arrows move along " +
      "the edges, Shift with left or right to a neighbour, Enter inspects the node, " +
      "T shows the graph as a table, plus and minus zoom.",
  );
  // JupyterLab's own shortcuts must not take the keys the picture uses.
  root.dataset.lmSuppressShortcuts = "true";
  const toolbar = document.createElement("div");
  toolbar.className = "ag-canvas-toolbar";
  const view = document.createElement("div");
  view.className = "ag-canvas-view";
  const stage = document.createElement("div");
  stage.className = "ag-canvas-stage ag-graph";
  const style = document.createElement("style");
  const mini = document.createElement("div");
  mini.className = "ag-canvas-mini";
  mini.title = "overview: click to move the view there";
  const miniFrame = document.createElement("div");
  miniFrame.className = "ag-canvas-mini-frame";
  const readout = document.createElement("span");
  readout.className = "ag-canvas-readout";
  readout.title = "zoom";
  // What "fit" left out of view, when the whole picture would not be readable.
  const note = document.createElement("span");
  note.className = "ag-canvas-note";
  // The keyboard cursor's ring: drawn over the picture, so it shows on any node shape.
  const ring = document.createElement("div");
  ring.className = "ag-canvas-cursor";
  ring.hidden = true;
  // The inspector: a panel over the right of the picture, where the learner looks.
  const detail = document.createElement("div");
  detail.className = "ag-canvas-detail";
  detail.setAttribute("role", "region");
  detail.setAttribute("aria-label", "inspector");
  detail.tabIndex = -1;
  detail.hidden = true;
  const detailBody = document.createElement("div");
  detailBody.className = "ag-canvas-detail-body";
  // The graph as a table: the long description, one keypress (T) away.
  const table = document.createElement("div");
  table.className = "ag-canvas-table";
  table.setAttribute("role", "region");
  table.setAttribute("aria-label", "the graph as a table");
  table.tabIndex = 0;
  table.hidden = true;
  // One sentence per step, read out, and the picture's description.
  const live = document.createElement("div");
  live.className = "ag-canvas-live";
  live.id = `${uid}-live`;
  live.setAttribute("aria-live", "polite");
  live.setAttribute("aria-atomic", "true");
  const said = document.createElement("div"); // what the cursor is on, read out at once
  said.className = "ag-canvas-live";
  said.setAttribute("aria-live", "assertive");
  root.setAttribute("aria-describedby", live.id);
  view.append(stage, ring, mini, detail);
  root.append(style, toolbar, view, table, live, said);
  el.appendChild(root);

  let scale = 1, tx = 0, ty = 0;
  let natural = { w: 1, h: 1 }; // the picture's size in CSS px at scale 1
  let minFitScale = 0; // below this, labels would be smaller than min_font_px
  let fitted = false; // the view is where fit() put it (no pan or zoom since)

  const viewSize = () => ({ w: view.clientWidth || 1, h: view.clientHeight || 1 });

  function apply() {
    fitted = false; // fit() sets it again, and its note, once it has placed the view
    note.textContent = "";
    delete root.dataset.fit;
    stage.style.transform = `translate(${tx}px, ${ty}px) scale(${scale})`;
    root.dataset.scale = scale.toFixed(4);
    root.dataset.tx = tx.toFixed(1);
    root.dataset.ty = ty.toFixed(1);
    readout.textContent = `${Math.round(scale * 100)}%`;
    updateMini();
    placeRing();
  }

  function zoomAt(factor, cx, cy) {
    const lowest = Math.min(minFitScale, fitScale()) / 2;
    const next = Math.min(MAX_SCALE, Math.max(lowest, scale * factor));
    tx = cx - ((cx - tx) * next) / scale;
    ty = cy - ((cy - ty) * next) / scale;
    scale = next;
    apply();
  }

  function zoomCentre(factor) {
    const v = viewSize();
    zoomAt(factor, v.w / 2, v.h / 2);
  }

  // The scale that shows the whole picture, before the readability floor.
  const fitScale = () => {
    const v = viewSize();
    return Math.min(v.w / natural.w, v.h / natural.h, 1.5);
  };

  // The node a view opens on and "fit" centres when the whole picture cannot be shown
  // readably: the focused node (the stepper's current op), else the graph's output.
  const homeNode = () => nodeById(model.get("focus")) || stage.querySelector("g.node.output");

  // How many nodes lie wholly inside the visible part of the view.
  function nodesInView() {
    const b = visibleBox();
    const nodes = [...stage.querySelectorAll("g.node")];
    const inside = nodes.filter((n) => {
      const r = n.getBoundingClientRect();
      return r.left >= b.left - 1 && r.right <= b.right + 1 && r.top >= b.top - 1 &&
        r.bottom <= b.bottom + 1;
    });
    return { inside: inside.length, all: nodes.length };
  }

  // Fit: the whole picture if its labels stay readable. Else the readable scale, centred
  // on the home node (kept inside the picture's bounds, so no empty margin is shown),
  // and a sentence says how much is in view and where the rest is.
  function fit() {
    const v = viewSize();
    const whole = fitScale();
    scale = Math.max(whole, minFitScale);
    tx = (v.w - natural.w * scale) / 2;
    ty = (v.h - natural.h * scale) / 2;
    const home = homeNode();
    const larger = natural.w * scale > v.w + 1 || natural.h * scale > v.h + 1;
    if (home && larger) {
      const r = home.getBoundingClientRect();
      const s = stage.querySelector("svg").getBoundingClientRect();
      const b = visibleBox(), box = view.getBoundingClientRect();
      // the node's centre in picture px at scale 1 (the stage's own transform undone)
      const cx = (r.left + r.width / 2 - s.left) / (s.width / natural.w);
      const cy = (r.top + r.height / 2 - s.top) / (s.height / natural.h);
      tx = b.left - box.left + b.width / 2 - cx * scale;
      ty = v.h / 2 - cy * scale;
    }
    // never past the picture's edges on an axis where it is larger than the view
    if (natural.w * scale > v.w) tx = Math.min(0, Math.max(v.w - natural.w * scale, tx));
    if (natural.h * scale > v.h) ty = Math.min(0, Math.max(v.h - natural.h * scale, ty));
    apply();
    if (home && larger) clearOfOverview(home);
    fitted = true;
    if (scale > whole + 1e-6) {
      const { inside, all } = nodesInView();
      note.textContent =
        `${inside} of ${all} nodes in view: all of them would make the labels too small ` +
        "to read. Drag, or use the overview, for the rest.";
    }
    root.dataset.fit = note.textContent ? "partial" : "whole";
  }
  // Move the picture the least needed (left or up) for `node` not to sit under the
  // overview in the view's corner, even if that shows a margin past the picture's edge.
  function clearOfOverview(node) {
    if (mini.style.display === "none") return;
    const r = node.getBoundingClientRect(), m = mini.getBoundingClientRect();
    const overlapX = r.right - m.left + 8, overlapY = r.bottom - m.top + 8;
    if (r.right <= m.left || r.bottom <= m.top || r.left >= m.right || r.top >= m.bottom) return;
    if (overlapX <= overlapY) tx -= overlapX;
    else ty -= overlapY;
    apply();
  }
  // "fit" pressed: fit, and say the outcome even when the view was already fitted.
  function fitPressed() {
    fit();
    say(note.textContent || `The whole graph is in view, at ${Math.round(scale * 100)}%.`);
  }

  // The part of the view the picture shows: left of the inspector when it is open
  // (the panel covers the rest), so the current op never hides under it.
  function visibleBox() {
    const v = view.getBoundingClientRect();
    if (detail.hidden) return v;
    const right = Math.max(v.left + 80, detail.getBoundingClientRect().left - 8);
    return { left: v.left, top: v.top, bottom: v.bottom, height: v.height, right,
             width: right - v.left };
  }

  // Pan the least needed for node `id` to be inside the view on both axes (centred
  // on an axis where it is out of view).
  function reveal(id, onlyIfHidden = true) {
    const node = stage.querySelector(`[id="${CSS.escape(id)}"]`);
    if (!node) return;
    const r = node.getBoundingClientRect();
    const b = visibleBox();
    const margin = 24;
    const outX = r.left < b.left + 0 || r.right > b.right;
    const outY = r.top < b.top || r.bottom > b.bottom;
    if (onlyIfHidden && !outX && !outY) return;
    if (outX || !onlyIfHidden) {
      const want = b.left + Math.max(margin, (b.width - r.width) / 2);
      tx += want - r.left;
    }
    if (outY || !onlyIfHidden) {
      const want = b.top + Math.max(margin, (b.height - r.height) / 2);
      ty += want - r.top;
    }
    if (!onlyIfHidden) {
      // fit() placed a picture that fits the view: keep it where fit put it.
      const v = viewSize();
      if (natural.w * scale <= v.w) tx = (v.w - natural.w * scale) / 2;
      if (natural.h * scale <= v.h) ty = (v.h - natural.h * scale) / 2;
    }
    apply();
  }

  // -- overview (minimap) ------------------------------------------------------------
  let miniScale = 1;
  function buildMini() {
    mini.replaceChildren();
    const svg = stage.querySelector("svg");
    if (!svg) return;
    const copy = svg.cloneNode(true);
    copy.removeAttribute("id");
    copy.querySelectorAll("[id]").forEach((e) => e.removeAttribute("id"));
    // at most 30% of the view's width, so it never hides much of a narrow picture
    const width = Math.max(60, Math.min(160, 0.3 * viewSize().w));
    miniScale = width / natural.w;
    copy.style.width = `${width}px`; // the clone carries the picture's own inline size
    copy.style.height = `${natural.h * miniScale}px`;
    mini.append(copy, miniFrame);
    mini.style.width = `${width}px`;
    mini.style.height = `${Math.min(natural.h * miniScale, width)}px`;
  }
  function updateMini() {
    const v = viewSize();
    const larger = natural.w * scale > v.w + 1 || natural.h * scale > v.h + 1;
    mini.style.display = larger ? "block" : "none";
    root.dataset.overview = larger ? "shown" : "hidden";
    if (!larger) return;
    const s = miniScale / scale;
    miniFrame.style.left = `${-tx * s}px`;
    miniFrame.style.top = `${-ty * s}px`;
    miniFrame.style.width = `${v.w * s}px`;
    miniFrame.style.height = `${v.h * s}px`;
  }
  mini.addEventListener("pointerdown", (e) => {
    e.stopPropagation();
    const r = mini.getBoundingClientRect();
    const v = viewSize();
    const x = (e.clientX - r.left) / miniScale; // picture px at scale 1
    const y = (e.clientY - r.top) / miniScale;
    tx = v.w / 2 - x * scale;
    ty = v.h / 2 - y * scale;
    apply();
  });

  // -- the picture and its styles -----------------------------------------------------
  function setSvg() {
    stage.id = model.get("container_id");
    stage.innerHTML = model.get("svg");
    const svg = stage.querySelector("svg");
    if (svg) {
      natural = { w: svg.width.baseVal.value || 1, h: svg.height.baseVal.value || 1 };
      minFitScale = model.get("min_font_px") / smallestFontPx(svg);
      svg.style.width = `${natural.w}px`;
      svg.style.height = `${natural.h}px`;
    }
    view.style.height = model.get("max_height");
    table.style.maxHeight = model.get("max_height");
    edges = edgesOf(stage);
    if (!nodeById(cursor)) cursor = "";
    const selected = nodeById(model.get("selected"));
    if (selected) selected.classList.add("ag-canvas-selected");
    buildMini();
    requestAnimationFrame(() => (model.get("fit") ? fit() : reveal(model.get("focus"))));
  }
  const setCss = () => (style.textContent = model.get("css"));

  // -- pointer: drag to pan, pinch to zoom, click to select ---------------------------
  const pointers = new Map();
  let start = null; // {x, y, tx, ty, moved}
  let pinch = null; // {d, scale}
  const distance = () => {
    const [a, b] = [...pointers.values()];
    return Math.hypot(a.x - b.x, a.y - b.y);
  };
  view.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    view.setPointerCapture(e.pointerId);
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (pointers.size === 1) {
      start = { x: e.clientX, y: e.clientY, tx, ty, moved: false, target: e.target };
    } else if (pointers.size === 2) {
      pinch = { d: distance(), scale };
      start = null;
    }
    root.focus({ preventScroll: true });
  });
  view.addEventListener("pointermove", (e) => {
    if (!pointers.has(e.pointerId)) return;
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (pinch && pointers.size === 2) {
      const r = view.getBoundingClientRect();
      const [a, b] = [...pointers.values()];
      const factor = (pinch.scale * distance()) / pinch.d / scale;
      zoomAt(factor, (a.x + b.x) / 2 - r.left, (a.y + b.y) / 2 - r.top);
    } else if (start) {
      const dx = e.clientX - start.x, dy = e.clientY - start.y;
      if (Math.hypot(dx, dy) > DRAG_SLOP) start.moved = true;
      if (start.moved) {
        tx = start.tx + dx;
        ty = start.ty + dy;
        root.classList.add("ag-canvas-dragging");
        apply();
      }
    }
  });
  const release = (e) => {
    pointers.delete(e.pointerId);
    root.classList.remove("ag-canvas-dragging");
    if (start && !start.moved && e.type === "pointerup") {
      const node = start.target.closest && start.target.closest("g.node");
      if (node && stage.contains(node)) select(node.id);
    }
    if (pointers.size < 2) pinch = null;
    start = null;
  };
  view.addEventListener("pointerup", release);
  view.addEventListener("pointercancel", release);
  view.addEventListener(
    "wheel",
    (e) => {
      e.preventDefault();
      const r = view.getBoundingClientRect();
      const pixels = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY;
      zoomAt(Math.exp(-pixels * 0.0015), e.clientX - r.left, e.clientY - r.top);
    },
    { passive: false },
  );

  function select(id) {
    root.dataset.selected = id;
    stage.querySelectorAll(".ag-canvas-selected").forEach((n) =>
      n.classList.remove("ag-canvas-selected"));
    const node = id && stage.querySelector(`[id="${CSS.escape(id)}"]`);
    if (node) node.classList.add("ag-canvas-selected");
    model.set("selected", id);
    model.save_changes();
  }

  // -- the inspector panel ----------------------------------------------------------
  let focusDetail = false; // opened from the keyboard: take the focus there when it comes
  const closeDetail = button("✕", "close the inspector (Escape)", () => {
    select("");
    showDetail();
    root.focus({ preventScroll: true });
  });
  closeDetail.classList.add("ag-canvas-detail-close");
  detail.append(closeDetail, detailBody);
  function showDetail() {
    const html = model.get("selected") ? model.get("detail") : "";
    detailBody.innerHTML = html;
    detail.hidden = !html;
    root.dataset.detail = html ? "shown" : "hidden";
    if (!html) return;
    // keep the node inspected in sight: pan it out from under the panel
    const node = stage.querySelector(`[id="${CSS.escape(model.get("selected"))}"]`);
    if (node) {
      const r = node.getBoundingClientRect(), d = detail.getBoundingClientRect();
      const b = view.getBoundingClientRect();
      if (r.right > d.left && d.left - b.left > r.width + 16) {
        tx -= r.right - d.left + 16;
        apply();
      }
    }
    if (focusDetail) detail.focus({ preventScroll: true });
    focusDetail = false;
  }
  detail.addEventListener("keydown", (e) => {
    e.stopPropagation(); // keys in the panel are the panel's (text selection, scrolling)
    if (e.key === "Escape") {
      e.preventDefault();
      closeDetail.click();
    }
  });
  detail.addEventListener("pointerdown", (e) => e.stopPropagation());
  detail.addEventListener("wheel", (e) => e.stopPropagation());

  // -- the keyboard cursor: along the edges, and across a level -------------------------
  let cursor = ""; // node id, or "" before the first arrow key
  let edges = { up: new Map(), down: new Map() };
  const nodeById = (id) => id && stage.querySelector(`[id="${CSS.escape(id)}"]`);
  const centre = (node) => {
    const r = node.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
  };
  function placeRing() {
    const node = nodeById(cursor);
    ring.hidden = !node;
    if (!node) return;
    const r = node.getBoundingClientRect(), b = view.getBoundingClientRect();
    ring.style.left = `${r.left - b.left - 4}px`;
    ring.style.top = `${r.top - b.top - 4}px`;
    ring.style.width = `${r.width + 8}px`;
    ring.style.height = `${r.height + 8}px`;
  }
  function say(text) {
    said.textContent = "";
    // a new text node, even for the same words, so the screen reader reads it again
    requestAnimationFrame(() => (said.textContent = text));
  }
  function moveCursor(id) {
    const node = nodeById(id);
    if (!node) return;
    cursor = id;
    root.dataset.cursor = id;
    reveal(id);
    placeRing();
    const ups = (edges.up.get(id) || []).length, downs = (edges.down.get(id) || []).length;
    say(`${nodeWords(node)}. Reads ${ups}, read by ${downs}. Enter to inspect.`);
  }
  // The nearest of `ids` across from `from` (by horizontal distance, then vertical).
  function nearest(ids, from) {
    const here = centre(nodeById(from));
    let best = null, bestD = Infinity;
    for (const id of ids) {
      const node = nodeById(id);
      if (!node) continue;
      const c = centre(node);
      const d = Math.abs(c.x - here.x) * 4 + Math.abs(c.y - here.y);
      if (d < bestD) [best, bestD] = [id, d];
    }
    return best;
  }
  function startCursor() {
    const start = [model.get("selected"), model.get("focus")].find((id) => nodeById(id));
    const first = stage.querySelector("g.node");
    return start || (first ? first.id : "");
  }
  function alongEdges(direction) {
    if (!nodeById(cursor)) return moveCursor(startCursor());
    const next = (direction === "up" ? edges.up : edges.down).get(cursor) || [];
    const to = nearest(next, cursor);
    if (to) moveCursor(to);
    else say(direction === "up" ? "Nothing feeds this node." : "Nothing reads this node.");
  }
  // The nearest node to the left or right whose centre is within its height of the
  // cursor's level.
  function acrossLevel(sign) {
    if (!nodeById(cursor)) return moveCursor(startCursor());
    const here = nodeById(cursor).getBoundingClientRect();
    const y = here.top + here.height / 2, x = here.left + here.width / 2;
    let best = null, bestD = Infinity;
    for (const node of stage.querySelectorAll("g.node")) {
      if (node.id === cursor) continue;
      const c = centre(node);
      const dx = (c.x - x) * sign;
      if (dx <= 1 || Math.abs(c.y - y) > here.height) continue;
      if (dx < bestD) [best, bestD] = [node.id, dx];
    }
    if (best) moveCursor(best);
    else say(sign < 0 ? "No node further left on this level." : "No node further right on this level.");
  }

  // -- the table view --------------------------------------------------------------------
  const tableButton = button("table", "show the graph as a table (T)", () => toggleTable());
  tableButton.setAttribute("aria-pressed", "false");
  function toggleTable(open = !model.get("table_open")) {
    model.set("table_open", open);
    model.save_changes();
    showTable();
    (open ? table : root).focus({ preventScroll: true });
  }
  function showTable() {
    const open = model.get("table_open");
    table.innerHTML = open ? model.get("table") : "";
    table.hidden = !open;
    view.hidden = open;
    tableButton.setAttribute("aria-pressed", String(open));
    tableButton.textContent = open ? "picture" : "table";
    root.dataset.table = open ? "shown" : "hidden";
  }
  table.addEventListener("keydown", (e) => {
    if (e.key === "t" || e.key === "T" || e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      toggleTable(false);
    }
  });

  // -- keys -------------------------------------------------------------------------
  root.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.target !== root) return; // a toolbar button's own Enter or Space
    if (e.shiftKey && (e.key === "ArrowLeft" || e.key === "ArrowRight")) {
      acrossLevel(e.key === "ArrowLeft" ? -1 : 1);
    } else if (STEP_KEYS.has(e.key)) {
      model.send({ event: "key", key: e.key.length === 1 ? e.key.toLowerCase() : e.key });
    } else if (e.key === "ArrowUp" || e.key === "ArrowDown") {
      alongEdges(e.key === "ArrowUp" ? "up" : "down");
    } else if ((e.key === "Enter" || e.key === " ") && nodeById(cursor)) {
      focusDetail = true;
      select(cursor);
      if (model.get("detail")) showDetail();
    } else if (e.key === "Escape" && (model.get("selected") || cursor)) {
      if (model.get("selected")) closeDetail.click();
      else {
        cursor = "";
        delete root.dataset.cursor;
        placeRing();
        say("Cursor off the graph.");
      }
    } else if (e.key === "t" || e.key === "T") {
      toggleTable();
    } else if (e.key === "+" || e.key === "=") {
      zoomCentre(1.25);
    } else if (e.key === "-") {
      zoomCentre(0.8);
    } else if (e.key === "0") {
      fitPressed();
    } else {
      return;
    }
    e.preventDefault();
    e.stopPropagation(); // JupyterLab would otherwise move between cells
  });

  // -- export -------------------------------------------------------------------------
  // The picture with the current step's highlights inlined, standalone.
  function standaloneSvg() {
    const svg = stage.querySelector("svg").cloneNode(true);
    svg.style.removeProperty("width");
    svg.style.removeProperty("height");
    const id = model.get("container_id");
    const css = model.get("css").split(`#${id} `).join("");
    const inline = document.createElementNS("http://www.w3.org/2000/svg", "style");
    inline.textContent = css;
    svg.insertBefore(inline, svg.firstChild);
    return new XMLSerializer().serializeToString(svg);
  }
  function exportSvg() {
    download("graph.svg", new Blob([standaloneSvg()], { type: "image/svg+xml" }));
  }
  function exportPng() {
    const image = new Image();
    const url = URL.createObjectURL(new Blob([standaloneSvg()], { type: "image/svg+xml" }));
    image.onload = () => {
      const ratio = 2;
      const canvas = document.createElement("canvas");
      canvas.width = natural.w * ratio;
      canvas.height = natural.h * ratio;
      const ctx = canvas.getContext("2d");
      ctx.fillStyle = "#ffffff";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(image, 0, 0, canvas.width, canvas.height);
      URL.revokeObjectURL(url);
      canvas.toBlob((blob) => download("graph.png", blob), "image/png");
    };
    image.src = url;
  }

  toolbar.append(
    button("−", "zoom out (-)", () => zoomCentre(0.8)),
    button("+", "zoom in (+)", () => zoomCentre(1.25)),
    button("fit", "fit the picture, never below readable text (0)", fitPressed),
    button("1:1", "actual size", () => zoomCentre(1 / scale)),
    readout,
    button("SVG", "save this picture as SVG", exportSvg),
    button("PNG", "save this picture as PNG", exportPng),
    tableButton,
    note,
  );

  model.on("change:svg", setSvg);
  model.on("change:css", setCss);
  model.on("change:focus", () => reveal(model.get("focus")));
  model.on("change:fit", () => model.get("fit") && fit());
  model.on("change:max_height", setSvg);
  model.on("change:detail", showDetail);
  model.on("change:selected", showDetail);
  model.on("change:table", showTable);
  model.on("change:table_open", showTable);
  const announce = () => (live.textContent = model.get("announcement"));
  model.on("change:announcement", announce);
  setCss();
  setSvg();
  showDetail();
  showTable();
  announce();
  const resize = new ResizeObserver(() => {
    buildMini();
    updateMini();
    // A view still as fit() left it is fitted again to its new size; else a narrower
    // view must not leave the current op outside.
    if (fitted) fit();
    else if (model.get("focus")) reveal(model.get("focus"));
  });
  resize.observe(view);
  return () => resize.disconnect();
}

export default { render };
