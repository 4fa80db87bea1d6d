// Entry point bundled by esbuild into static/dist/app.js (see package.json).
// The page is fully usable without it: every link and form works as plain
// HTML; this file only makes it quicker.
import htmx from './htmx.js';
import 'htmx-ext-sse';
import { install } from './behaviours.js';
import './live.js';
import './csr-queue.js';
import './list-ticks.js';
import { installShortcuts } from './shortcuts.js';
import { installSearch } from './search.js';

install(document, htmx);
installShortcuts(document);
installSearch(document);
