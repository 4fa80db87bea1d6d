// The colour theme: the system's (default), light or dark, chosen with the
// top bar's toggle and kept in localStorage. Built on its own into
// static/dist/theme.js and loaded in <head> WITHOUT defer, so the chosen
// theme is on <html data-theme> before the first paint (no flash of the other
// theme). The CSP forbids inline script, hence a file. The CSS does the rest:
// data-theme sets color-scheme, and every colour is light-dark(...).
(function () {
  var KEY = 'clusterdesk-theme';
  var THEMES = ['system', 'light', 'dark'];
  var LABELS = { system: 'System', light: 'Light', dark: 'Dark' };
  var root = document.documentElement;

  function stored() {
    try {
      var t = window.localStorage.getItem(KEY);
      return THEMES.indexOf(t) >= 0 ? t : 'system';
    } catch (e) {
      return 'system'; // storage refused (privacy settings): follow the system
    }
  }

  function apply(theme) {
    if (theme === 'system') {
      root.removeAttribute('data-theme');
    } else {
      root.setAttribute('data-theme', theme);
    }
  }

  function next(theme) {
    return THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length];
  }

  // The button shows the current theme and says what a click chooses.
  function show(button, theme) {
    button.querySelectorAll('[data-theme-icon]').forEach(function (el) {
      el.hidden = el.getAttribute('data-theme-icon') !== theme;
    });
    var label = button.querySelector('[data-theme-label]');
    if (label) label.textContent = LABELS[theme];
    button.title = 'Theme: ' + LABELS[theme] + '. Click for ' + LABELS[next(theme)] + '.';
    button.setAttribute('data-theme-current', theme);
  }

  function toggle() {
    return document.querySelector('[data-theme-toggle]');
  }

  apply(stored());

  document.addEventListener('DOMContentLoaded', function () {
    var button = toggle();
    if (!button) return;
    show(button, stored());
    button.hidden = false;
    button.addEventListener('click', function () {
      var theme = next(button.getAttribute('data-theme-current') || stored());
      try {
        window.localStorage.setItem(KEY, theme);
      } catch (e) {
        // Not kept, but still applied to this page.
      }
      apply(theme);
      show(button, theme);
    });
  });

  // Another tab chose a theme: follow it.
  window.addEventListener('storage', function (e) {
    if (e.key !== KEY) return;
    apply(stored());
    var button = toggle();
    if (button) show(button, stored());
  });
})();
