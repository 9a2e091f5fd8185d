// DescribedImage: a PNG (or other image) from the kernel, with its text alternative.
//
// ipywidgets' Image has no `alt` (and its tooltip breaks the view: it reads a
// `description` that Image lacks), so a screen reader met a nameless picture. This
// is the same <img>, with `alt` set from the model.

function render({ model, el }) {
  const img = document.createElement("img");
  img.className = "ag-described-image";
  el.appendChild(img);
  let url = "";
  function update() {
    const value = model.get("value"); // a DataView of the bytes
    const bytes = value && value.buffer
      ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
      : new Uint8Array(value || []);
    const previous = url;
    url = URL.createObjectURL(new Blob([bytes], { type: `image/${model.get("format")}` }));
    img.src = url;
    if (previous) URL.revokeObjectURL(previous);
    img.alt = model.get("alt");
  }
  const events = ["change:value", "change:format", "change:alt"];
  for (const event of events) model.on(event, update);
  update();
  return () => {
    for (const event of events) model.off(event, update);
    if (url) URL.revokeObjectURL(url);
  };
}

export default { render };
