// StepPlayer: play / stop buttons and a step slider, all native and named.
//
// A <button> "play" (it reads "pause" while playing), a <button> "stop" and an
// <input type="range"> named after what it steps. They stand where ipywidgets' Play
// and IntSlider stood, whose buttons were nameless icons and whose handle had no name.
// Playing works as Play's did: the timer runs in the browser and steps `value` by one
// every `interval` ms up to `max`; pressed at `max`, play starts again from 0; stop
// pauses and goes back to 0. The timer lives with the model (initialize), not with a
// view, so two views of one player do not step twice.

function initialize({ model }) {
  let timer;
  const halt = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  const schedule = () => {
    timer = setTimeout(tick, model.get("interval"));
  };
  function tick() {
    timer = undefined;
    if (!model.get("playing")) return;
    const next = model.get("value") + 1;
    if (next <= model.get("max")) {
      model.set("value", next);
      schedule();
    } else {
      model.set("playing", false); // at the end: stop there
    }
    model.save_changes();
  }
  function onPlaying() {
    halt();
    if (!model.get("playing")) return;
    if (model.get("value") >= model.get("max")) {
      model.set("value", 0); // pressed at the end: from the start again
      model.save_changes();
      schedule();
    } else {
      tick();
    }
  }
  model.on("change:playing", onPlaying);
  if (model.get("playing")) onPlaying();
  return () => {
    halt();
    model.off("change:playing", onPlaying);
  };
}

// A button that looks like ipywidgets' own (its jupyter-button class), its name the
// word after the symbol (the symbol is hidden from screen readers).
function button(className) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = `jupyter-widgets jupyter-button widget-button ${className}`;
  const symbol = document.createElement("span");
  symbol.setAttribute("aria-hidden", "true");
  const word = document.createElement("span");
  b.append(symbol, " ", word);
  b.show = (sign, text) => {
    symbol.textContent = sign;
    word.textContent = text;
  };
  return b;
}

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "ag-step-player";
  const play = button("ag-step-play");
  const stop = button("ag-step-stop");
  stop.show("■", "stop");
  const label = document.createElement("label");
  label.className = "ag-step-slider";
  const name = document.createElement("span");
  const range = document.createElement("input");
  range.type = "range";
  range.min = "0";
  range.step = "1";
  label.append(name, range);
  root.append(play, stop, label);
  el.appendChild(root);
  // JupyterLab's own shortcuts must not take the keys these use (arrows, Home, End,
  // Enter, Space). The mark goes on each focusable element itself: JupyterLab
  // matches its notebook shortcuts on the focused element (":focus") before it
  // looks at the element's ancestors for the mark.
  for (const control of [play, stop, range]) control.dataset.lmSuppressShortcuts = "true";

  play.addEventListener("click", () => {
    model.set("playing", !model.get("playing"));
    model.save_changes();
  });
  stop.addEventListener("click", () => {
    model.set("playing", false);
    model.set("value", 0);
    model.save_changes();
  });
  range.addEventListener("input", () => {
    model.set("value", Number(range.value));
    model.save_changes();
  });

  function update() {
    const what = model.get("what");
    const value = model.get("value");
    const max = model.get("max");
    const playing = model.get("playing");
    play.show(playing ? "❚❚" : "▶", playing ? "pause" : "play");
    play.title = playing ? "pause here" : `play: one ${what} every ${model.get("interval")} ms`;
    stop.title = `stop and go back to ${what} 0`;
    name.textContent = what;
    range.setAttribute("aria-label", what);
    range.max = String(max);
    range.value = String(value);
    range.setAttribute("aria-valuetext", `${what} ${value} of ${max}`);
    play.disabled = stop.disabled = range.disabled = max === 0;
  }
  const events = ["value", "max", "playing", "what", "interval"].map((n) => `change:${n}`);
  for (const event of events) model.on(event, update);
  update();
  return () => {
    for (const event of events) model.off(event, update);
  };
}

export default { initialize, render };
