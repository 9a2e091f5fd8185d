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
 * JupyterLab loads an extension as a module-federation container: an object on
 * `window._JUPYTERLAB[name]` whose `get('./extension')` resolves to a factory of the
 * module; the module's default export is the plugin. This one shares no modules, so
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

  const modules = {
    './extension': () => () => ({ __esModule: true, default: plugin })
  };

  window._JUPYTERLAB = window._JUPYTERLAB || {};
  window._JUPYTERLAB[NAME] = {
    init: () => Promise.resolve(),
    get: module => modules[module]
      ? Promise.resolve(modules[module]())
      : Promise.reject(new Error(`${NAME} has no module ${module}`))
  };
})();
