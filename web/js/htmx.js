// Loads htmx and publishes it as window.htmx before anything else runs.
// ES imports are hoisted, so this must be its own module imported first by
// main.js: the SSE extension (and any later extension built for the browser
// global) expects window.htmx to exist when it is evaluated.
import htmx from 'htmx.org';

window.htmx = htmx;

export default htmx;
