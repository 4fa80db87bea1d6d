// The YAML editor: edit, create, delete and a conflicting edit, all through the
// browser as a person would, on objects each test creates under a unique name.
import type { Page } from '@playwright/test';
import { expect, signIn, test } from './support/fixtures';
import { call } from './support/kube';

function unique(prefix: string): string {
  return `${prefix}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
}

function csiDriverYAML(name: string): string {
  return `apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  name: ${name}
spec:
  attachRequired: false
`;
}

// The form's textarea: visible without JavaScript, hidden behind CodeMirror
// with it, and holding the editor's text either way.
const editor = (page: Page) => page.getByTestId('editor-yaml');

/** Whether CodeMirror took over the textarea. editor.js is deferred, so it
 * has run by the load event when the page runs JavaScript at all. */
async function enhanced(page: Page): Promise<boolean> {
  await page.waitForLoadState('load');
  return (await page.locator('form[data-editor-ready]').count()) === 1;
}

async function readText(page: Page): Promise<string> {
  return editor(page).inputValue();
}

/** Replaces the editor's text, as typing or pasting would. */
async function setText(page: Page, text: string): Promise<void> {
  if (await enhanced(page)) {
    // Not fill(): Chromium's editing command behind it styles the replaced
    // text with a style attribute, which the page's CSP (rightly) reports.
    await page.getByTestId('editor-code').click();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(text);
  } else {
    await editor(page).fill(text);
  }
  await expect(editor(page)).toHaveValue(text);
}

/** Creates an object through the create page and waits for its detail page. */
async function createThroughConsole(page: Page, kind: string, text: string, name: string): Promise<void> {
  await page.goto(`/${kind}/new`);
  await setText(page, text);
  await page.getByTestId('editor-apply').click();
  await expect(page).toHaveURL(new RegExp(`/${kind}/${name.replace(/\./g, '\\.')}$`));
  await expect(page.getByTestId('toast-result')).toContainText('was created');
}

/** Deletes an object through its delete page, if it still exists. */
async function deleteThroughConsole(page: Page, kind: string, name: string): Promise<void> {
  const res = await page.goto(`/${kind}/${name}/delete`);
  if (res?.status() === 404) return;
  await page.getByTestId('delete-confirm').fill(name);
  await page.getByTestId('delete-submit').click();
  await expect(page).toHaveURL(new RegExp(`/${kind}$`));
}

/** Replaces the first occurrence of from in the editor's text, which must contain it. */
async function editText(page: Page, from: string, to: string): Promise<string> {
  const text = await readText(page);
  expect(text, `the editor text contains ${JSON.stringify(from)}`).toContain(from);
  const next = text.replace(from, to);
  await setText(page, next);
  return next;
}

test('edit a CSIDriver label and see it persisted', async ({ page }) => {
  const name = `${unique('e2e-edit')}.clusterdesk.test`;
  await createThroughConsole(page, 'csidrivers', csiDriverYAML(name), name);
  try {
    await page.getByTestId('edit-link').click();
    await expect(page).toHaveURL(`/csidrivers/${name}/edit`);
    expect(await enhanced(page), 'CodeMirror replaced the textarea').toBe(true);
    await expect(page.getByTestId('editor-code')).toContainText('attachRequired: false');
    await expect(editor(page)).toBeHidden();
    await expect(editor(page)).toHaveValue(/attachRequired: false/);
    await expect(editor(page)).not.toHaveValue(/managedFields|resourceVersion/);

    await editText(page, `  name: ${name}\n`, `  labels:\n    e2e-label: edited\n  name: ${name}\n`);
    const started = Date.now();
    await page.getByTestId('editor-preview').click();
    const added = page.getByTestId('preview-diff').locator('[data-testid="diff-line"][data-kind="added"]');
    await expect(added).toContainText(['labels:', 'e2e-label: edited']);
    console.log(`edit.spec: Preview click to diff shown for a CSIDriver: ${Date.now() - started} ms`);
    // Preview stored nothing.
    await expect(editor(page)).toHaveValue(/e2e-label: edited/);

    await page.getByTestId('editor-apply').click();
    await expect(page).toHaveURL(`/csidrivers/${name}`);
    await expect(page.getByTestId('toast-result')).toContainText('was updated');
    await expect(page.getByTestId('yaml')).toContainText('e2e-label: edited');
    await page.reload();
    await expect(page.getByTestId('yaml')).toContainText('e2e-label: edited');
  } finally {
    await deleteThroughConsole(page, 'csidrivers', name);
  }
});

test('create then delete a FlowSchema', async ({ page }) => {
  const name = unique('e2e-flowschema');
  await page.goto('/flowschemas/new');
  await expect(editor(page)).toHaveValue(/kind: FlowSchema/);
  await editText(page, 'name: example-flowschema', `name: ${name}`);
  try {
    await page.getByTestId('editor-preview').click();
    await expect(page.getByTestId('preview-diff')).toContainText(`name: ${name}`);
    // The server's defaults show in the preview.
    await expect(page.getByTestId('preview-diff')).toContainText('uid:');

    await page.getByTestId('editor-apply').click();
    await expect(page).toHaveURL(`/flowschemas/${name}`);
    await expect(page.getByTestId('detail-name')).toHaveText(name);

    await page.getByTestId('delete-link').click();
    await expect(page.getByTestId('delete-dryrun')).toBeVisible();
    await page.getByTestId('delete-confirm').fill('not the name');
    await page.getByTestId('delete-submit').click();
    await expect(page.getByTestId('editor-problem-title')).toHaveText('Name not confirmed');
    await page.getByTestId('delete-confirm').fill(name);
    await page.getByTestId('delete-submit').click();
    await expect(page).toHaveURL('/flowschemas');
    await expect(page.getByTestId('toast-result')).toContainText('was deleted');
    const gone = await page.goto(`/flowschemas/${name}`);
    expect(gone?.status()).toBe(404);
  } finally {
    await deleteThroughConsole(page, 'flowschemas', name);
  }
});

test('a conflicting edit behind the user\'s back is detected and the text survives', async ({ page, newContext }) => {
  const name = `${unique('e2e-conflict')}.clusterdesk.test`;
  await createThroughConsole(page, 'csidrivers', csiDriverYAML(name), name);
  try {
    await page.goto(`/csidrivers/${name}/edit`);
    const mine = await editText(page, 'requiresRepublish: false', 'requiresRepublish: true');

    // Someone else, in another browser, labels the driver meanwhile.
    const other = await (await newContext()).newPage();
    await signIn(other, 'admin');
    await other.goto(`/csidrivers/${name}/edit`);
    await editText(other, `  name: ${name}\n`, `  labels:\n    changed-by: someone-else\n  name: ${name}\n`);
    await other.getByTestId('editor-apply').click();
    await expect(other.getByTestId('toast-result')).toContainText('was updated');

    await page.getByTestId('editor-apply').click();
    await expect(page.getByTestId('conflict')).toBeVisible();
    await expect(editor(page)).toHaveValue(mine);
    await expect(page.getByTestId('conflict-diff').locator('[data-kind="added"]')).toContainText(['changed-by: someone-else']);

    await page.getByTestId('conflict-rebase').click();
    await expect(page.getByTestId('editor-rebased')).toBeVisible();
    await expect(editor(page)).toHaveValue(/changed-by: someone-else/);
    await expect(editor(page)).toHaveValue(/requiresRepublish: true/);
    await page.getByTestId('editor-apply').click();
    await expect(page).toHaveURL(`/csidrivers/${name}`);
    await expect(page.getByTestId('yaml')).toContainText('changed-by: someone-else');
    await expect(page.getByTestId('yaml')).toContainText('requiresRepublish: true');
  } finally {
    await deleteThroughConsole(page, 'csidrivers', name);
  }
});

test.describe('read-only', () => {
  test.use({ instance: 'readonly' });

  test('offers no editing and refuses the editor', async ({ page }) => {
    await page.goto('/csidrivers');
    const first = page.getByTestId('list-row').locator('th[scope=row] a').first();
    const href = await first.getAttribute('href');
    await first.click();
    await expect(page.getByTestId('detail-name')).toBeVisible();
    await expect(page.getByTestId('edit-link')).toHaveCount(0);
    await expect(page.getByTestId('delete-link')).toHaveCount(0);
    const res = await page.goto(`${href}/edit`);
    expect(res?.status()).toBe(403);
    await expect(page.getByTestId('error-message')).toContainText('read-only');
  });
});

test('without JavaScript the editor is a plain textarea that previews and applies', async ({ page, newContext }) => {
  const name = `${unique('e2e-nojs')}.clusterdesk.test`;
  await createThroughConsole(page, 'csidrivers', csiDriverYAML(name), name);
  try {
    const nojs = await (await newContext({ javaScriptEnabled: false })).newPage();
    await signIn(nojs, 'admin');
    await nojs.goto(`/csidrivers/${name}/edit`);
    expect(await enhanced(nojs)).toBe(false);
    await expect(editor(nojs)).toBeVisible();
    await editText(nojs, 'requiresRepublish: false', 'requiresRepublish: true');
    await nojs.getByTestId('editor-preview').click();
    await expect(nojs.getByTestId('preview-diff').locator('[data-kind="added"]')).toContainText(['requiresRepublish: true']);
    await nojs.getByTestId('editor-apply').click();
    await expect(nojs).toHaveURL(`/csidrivers/${name}`);
    await expect(nojs.getByTestId('yaml')).toContainText('requiresRepublish: true');
  } finally {
    await deleteThroughConsole(page, 'csidrivers', name);
  }
});

test('editor marks the server\'s error on its line and jumps there', async ({ page }) => {
  await page.goto('/flowschemas/new');
  const text = await readText(page);
  await setText(page, text.replace('matchingPrecedence: 9000', 'matchingPrecedence: 10001').replace('name: example-flowschema', `name: ${unique('e2e-marker')}`));
  await page.getByTestId('editor-preview').click();
  await expect(page.getByTestId('editor-problem-message')).toContainText('must not be greater than 10000');
  expect(await enhanced(page)).toBe(true);
  const line = await page.getByTestId('editor-cause').locator('[data-line]').getAttribute('data-line');
  expect(Number(line)).toBeGreaterThan(0);
  // A lint marker in the gutter, and a click on "line N" puts the cursor there.
  await expect(page.locator('.cm-lint-marker-error')).not.toHaveCount(0);
  // It stays after the YAML linter's first run (300 ms after load), which
  // once replaced the server's markers with its own (none).
  await page.waitForTimeout(1_000);
  await expect(page.locator('.cm-lint-marker-error')).not.toHaveCount(0);
  await page.getByTestId('editor-cause').locator('[data-line]').click();
  await expect(page.locator('.cm-activeLine')).toContainText('matchingPrecedence: 10001');
  // The server refused: nothing was created, and the text is still the user's.
  await expect(editor(page)).toHaveValue(/matchingPrecedence: 10001/);
});

test('the docs panel follows the cursor and takes it to a field', async ({ page }) => {
  await page.goto('/flowschemas/new');
  expect(await enhanced(page)).toBe(true);
  const docs = page.getByTestId('editor-docs');
  const field = (path: string) => docs.locator(`[data-testid="schema-field"][data-path="${path}"]`);

  // The cursor on matchingPrecedence marks its documentation, which says what the field means.
  // The click is repeated until it lands: on a loaded machine the panel's first render can shift
  // the editor's lines under a click already on its way (CI saw the cursor land elsewhere once).
  await expect(async () => {
    await page.locator('.cm-line', { hasText: 'matchingPrecedence:' }).click();
    await expect(field('spec.matchingPrecedence')).toHaveAttribute('data-current', '', { timeout: 2000 });
  }).toPass({ timeout: 15000 });
  await expect(field('spec.matchingPrecedence').getByTestId('schema-description').first()).toBeVisible();
  await expect(field('spec.matchingPrecedence').getByTestId('schema-description').first()).toContainText('[1,10000]');

  // Inside a list: rules[].subjects[].kind.
  await page.locator('.cm-line', { hasText: '- kind: User' }).click();
  await expect(field('spec.rules[].subjects[].kind')).toHaveAttribute('data-current', '');

  // A click on a field's name in the docs puts the cursor on it in the text.
  await field('spec.distinguisherMethod').locator('.sf-name').first().click();
  await expect(page.locator('.cm-activeLine')).toContainText('distinguisherMethod:');
});

test('server-side apply names the other field manager and takes the field over with confirmed force', async ({ page }) => {
  const name = `${unique('e2e-ssa')}.clusterdesk.test`;
  // Manager "other" (as kubectl would be) sets the label.
  const created = await call('POST', '/apis/storage.k8s.io/v1/csidrivers?fieldManager=other', {
    apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name, labels: { team: 'other' } }, spec: { attachRequired: false },
  });
  expect(created.status, JSON.stringify(created.json).slice(0, 200)).toBe(201);
  try {
    await page.goto(`/csidrivers/${name}/edit`);
    expect(await enhanced(page)).toBe(true);
    await editText(page, 'team: other', 'team: mine');
    await page.getByTestId('editor-write-apply').check();
    await page.getByTestId('editor-preview').click();
    const conflict = page.getByTestId('apply-conflict');
    await expect(conflict.getByTestId('apply-conflict-manager')).toHaveAttribute('data-manager', 'other');
    await expect(conflict.getByTestId('apply-conflict-field')).toContainText('.metadata.labels.team');
    // The contested line is marked in the editor, and the mode and text were kept.
    await expect(page.locator('.cm-lint-marker-warning')).not.toHaveCount(0);
    await expect(page.getByTestId('editor-write-apply')).toBeChecked();
    await expect(editor(page)).toHaveValue(/team: mine/);

    await page.getByTestId('apply-force-confirm').check();
    await page.getByTestId('apply-force').click();
    await expect(page).toHaveURL(`/csidrivers/${name}`);
    await expect(page.getByTestId('toast-result')).toContainText('applied with force');
    await expect(page.getByTestId('yaml')).toContainText('team: mine');
  } finally {
    await call('DELETE', `/apis/storage.k8s.io/v1/csidrivers/${name}`);
  }
});
