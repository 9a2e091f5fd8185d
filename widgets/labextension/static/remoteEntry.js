/*
 * The lessons' JupyterLab extension, written by hand: no build step, no dependency.
 *
 * Opening a notebook starts its kernel, and JupyterLab writes the kernel's
 * `language_info` into the notebook's metadata. A lesson stored on Python 3.11 and
 * opened on 3.13 differs only in `language_info.version`, and that alone marked the
 * lesson modified before the learner did anything (and asked to save it on close).
 *
 * For a lesson (a notebook whose metadata has an `autograd_lessons` entry) that is
 * still unchanged, a `language_info` that differs from the stored one only in its
 * `version` is held back, and written the moment the lesson changes for any other
 * reason (a cell run, an edit). So an opened lesson stays as it was on disk, and a
 * saved one records the Python that made its outputs. Any other difference (another
 * language, another kernel) is written at once, as JupyterLab does.
 *
 * Pictures, in every notebook: JupyterLab draws an output's image/png, image/jpeg,
 * image/gif or image/svg+xml as an <img> without `alt`. An output whose metadata
 * gives the picture a text alternative, `{"image/png": {"alt": "..."}}` (the key
 * nbconvert's HTML export reads; the project's pictures carry it, see
 * widgets/alt_text.py), gets it as the <img>'s `alt`, and is shrunk to its column's
 * width when it is wider (as JupyterLab already does for a PNG). And a picture wider or taller
 * than its output (a large graph drawn at full size) makes the output scroll: such
 * an output is put in the tab order, so the keyboard can scroll it too. In JupyterLab's
 * dark theme, the project's pictures (those with a text alternative, and the widgets'
 * DescribedImage) are shown through widgets/theme.py's PICTURE_DARK_FILTER: their white
 * card turns dark and their dark text light, each colour keeping its hue.
 *
 * JupyterLab loads an extension as a module-federation container: an object on
 * `window._JUPYTERLAB[name]` whose `get('./extension')` resolves to a factory of the
 * module; the module's default export is the plugins. This one shares no modules, so
 * `init` has nothing to do.
 */
(function () {
  'use strict';

  const NAME = 'autograd-lessons';
  const MARK = 'autograd_lessons';

  /** JSON values equal, object keys in any order. */
  function same(a, b) {
    if (a === b) return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
      return false;
    }
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every(k => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]));
  }

  /** Two language_info records that differ in their version at most. */
  function sameButVersion(stored, reported) {
    if (!stored || !reported) return false;
    const strip = info => Object.fromEntries(
      Object.entries(info).filter(([key]) => key !== 'version'));
    return same(strip(stored), strip(reported));
  }

  /** Hold back a version-only language_info on an unchanged lesson (see above). */
  function keepUnchangedLesson(model) {
    const setMetadata = model.setMetadata.bind(model);
    let heldBack = null;
    model.setMetadata = (key, value) => {
      if (key === 'language_info') {
        const stored = model.getMetadata('language_info');
        if (!model.dirty && model.getMetadata(MARK) !== undefined
            && !same(stored, value) && sameButVersion(stored, value)) {
          heldBack = value;
          return;
        }
        heldBack = null;
      }
      setMetadata(key, value);
    };
    model.stateChanged.connect((_, change) => {
      if (change.name === 'dirty' && change.newValue && heldBack !== null) {
        const value = heldBack;
        heldBack = null;
        setMetadata('language_info', value);
      }
    });
  }

  const plugin = {
    id: `${NAME}:unchanged-on-open`,
    description: 'An opened lesson stays unmodified until the learner changes it.',
    autoStart: true,
    activate: app => {
      app.docRegistry.addWidgetExtension('Notebook', {
        createNew: (panel, context) => keepUnchangedLesson(context.model)
      });
    }
  };

  const PICTURES = ['image/png', 'image/jpeg', 'image/gif', 'image/svg+xml'];
  // widgets/theme.py's PICTURE_DARK_FILTER, for the project's pictures in a dark theme
  const DARK_PICTURES = 'body[data-jp-theme-light="false"] img.ag-picture, '
    + 'body[data-jp-theme-light="false"] img.ag-described-image '
    + '{ filter: invert(0.93) hue-rotate(180deg); }';
  const described = new WeakSet(); // renderer factories already wrapped
  const watched = new WeakSet(); // outputs whose scrolling is already watched

  /** The text alternative an output's metadata gives its `mimeType` picture, or null. */
  function altText(model, mimeType) {
    const meta = model.metadata && model.metadata[mimeType];
    return meta && typeof meta.alt === 'string' ? meta.alt : null;
  }

  /** In the tab order while the output scrolls (its picture is larger than it). */
  function scrollableByKeyboard(renderer) {
    if (watched.has(renderer)) return;
    watched.add(renderer);
    const node = renderer.node;
    const update = () => {
      const scrolls = node.scrollWidth > node.clientWidth + 1
        || node.scrollHeight > node.clientHeight + 1;
      if (scrolls) {
        node.tabIndex = 0;
      } else {
        node.removeAttribute('tabindex');
      }
    };
    const observer = new ResizeObserver(update);
    observer.observe(node);
    node.querySelectorAll('img').forEach(img => observer.observe(img));
    renderer.disposed.connect(() => observer.disconnect());
  }

  /** `factory` (JupyterLab's image or SVG renderer) with the two additions above. */
  function describedFactory(factory) {
    const wrapped = {
      ...factory,
      createRenderer: options => {
        const renderer = factory.createRenderer(options);
        const renderModel = renderer.renderModel.bind(renderer);
        renderer.renderModel = async model => {
          await renderModel(model);
          const alt = altText(model, options.mimeType);
          if (alt !== null) {
            // the project's picture: its text alternative, and never wider than its
            // column (JupyterLab leaves an SVG at full size; a big graph, which the
            // lesson also shows on the pan-and-zoom canvas, shrinks to fit)
            renderer.node.querySelectorAll('img').forEach(img => {
              img.alt = alt;
              img.classList.add('ag-picture');
              img.style.maxWidth = '100%';
              img.style.height = 'auto';
            });
          }
          scrollableByKeyboard(renderer);
        };
        return renderer;
      }
    };
    described.add(wrapped);
    return wrapped;
  }

  /** Wrap the picture renderers of a notebook's own registry (a clone per notebook). */
  function describePictures(rendermime) {
    for (const mimeType of PICTURES) {
      const factory = rendermime.getFactory(mimeType);
      if (factory && !described.has(factory)) {
        rendermime.addFactory(describedFactory(factory), rendermime.getRank(mimeType));
      }
    }
  }

  const pictures = {
    id: `${NAME}:picture-alt`,
    description: 'Pictures get the text alternative their output gives them; a picture '
      + 'that makes its output scroll can be scrolled from the keyboard.',
    autoStart: true,
    activate: app => {
      const style = document.createElement('style');
      style.textContent = DARK_PICTURES;
      document.head.appendChild(style);
      app.docRegistry.addWidgetExtension('Notebook', {
        createNew: panel => describePictures(panel.content.rendermime)
      });
    }
  };

  const modules = {
    './extension': () => () => ({ __esModule: true, default: [plugin, pictures] })
  };

  window._JUPYTERLAB = window._JUPYTERLAB || {};
  window._JUPYTERLAB[NAME] = {
    init: () => Promise.resolve(),
    get: module => modules[module]
      ? Promise.resolve(modules[module]())
      : Promise.reject(new Error(`${NAME} has no module ${module}`))
  };
})();
