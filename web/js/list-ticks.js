// "Delete selected…" on a list (views/components/table.templ TicksForm): with
// nothing ticked it says so beside the button instead of sending the form,
// which the server would refuse with a 400 page (handlers/cleanup.go
// errNothingTicked). Without JavaScript that page is the answer.

const FORM = 'form#list-ticks';

function onSubmit(e) {
  const form = e.target;
  if (!(form instanceof HTMLFormElement) || !form.matches(FORM)) return;
  const ticked = document.querySelectorAll(`input[type=checkbox][form="${form.id}"]:checked`);
  const out = form.querySelector('[data-ticks-note]');
  if (ticked.length) {
    if (out) out.textContent = '';
    return;
  }
  e.preventDefault();
  e.stopImmediatePropagation();
  if (out) out.textContent = 'Tick the rows to delete first.';
}

// Capture phase: before behaviours.js disables the button against double submits.
document.addEventListener('submit', onSubmit, true);
