// The structured FlowSchema editor: build a FlowSchema with two rules in the
// form, preview it (the API server's dry run), save it, find it at its place
// in the evaluation order, classify a request to it, and delete it. And the
// form's add/remove-row buttons without JavaScript.
import path from 'node:path';
import type { Page, TestInfo } from '@playwright/test';
import { SCREENSHOTS_DIR } from './support/env';
import { expect, signIn, test } from './support/fixtures';
import { rows } from './support/pages';

async function shoot(page: Page, info: TestInfo, file: string) {
  const out = path.join(SCREENSHOTS_DIR, file);
  await page.screenshot({ path: out, fullPage: true });
  await info.attach(file, { path: out, contentType: 'image/png' });
}

/** A field of the form by its key, e.g. "r1.s0.name". */
function field(page: Page, key: string) {
  return page.locator(`[id="fsf-${key}"]`);
}

async function classify(page: Page, fill: Record<string, string>, nonResource = false) {
  await page.goto('/flowschemas/-/classify');
  if (nonResource) await page.getByTestId('classify-kind-nonresource').check();
  for (const [k, v] of Object.entries(fill)) await page.getByTestId(`classify-${k}`).fill(v);
  await page.getByTestId('classify-submit').click();
  await expect(page.getByTestId('classify-result')).toBeVisible();
}

test('build a FlowSchema with two rules in the form, preview, save, classify to it, delete it', async ({ page }, info) => {
  // About forty steps, each a round trip to the console and most to the API
  // server: 35 s in make test beside the integration layer on 2 cores (it
  // failed there at the default 30 s).
  test.setTimeout(90_000);
  const name = `e2e-form-${Date.now()}`;
  const precedence = 700;

  await page.goto('/flowschemas');
  await page.getByTestId('new-form-link').click();
  await expect(page).toHaveURL(/\/flowschemas\/-\/new$/);
  await expect(page.getByTestId('fsform-yaml-link')).toHaveAttribute('href', '/flowschemas/new');

  await page.getByTestId('fsform-name').fill(name);
  await page.getByTestId('fsform-precedence').fill(String(precedence));
  await page.getByTestId('fsform-prioritylevel').selectOption('workload-low');
  await page.getByTestId('fsform-distinguisher-ByUser').check();

  // Rule 1: a user's reads of config maps in default.
  await field(page, 'r0.s0.name').fill(`${name}-user`);
  const rr = page.getByTestId('fsform-resource-rule').first();
  await rr.getByTestId('fsform-verb-get').check();
  await rr.getByTestId('fsform-verb-list').check();
  await field(page, 'r0.rr0.apigroups').fill('""');
  await field(page, 'r0.rr0.resources').fill('configmaps');
  await field(page, 'r0.rr0.namespaces').fill('default');

  // A local hint as the rules are typed: * with other verbs.
  await rr.getByTestId('fsform-verb-all').check();
  await page.getByTestId('fsform-preview').click();
  await expect(page.locator('[data-testid="fsform-error"][data-field="r0.rr0.verbs"]')).toContainText("if '*' is present, must not specify other verbs");
  await expect(page.getByTestId('fsform-name')).toHaveValue(name);
  await page.getByTestId('fsform-resource-rule').first().getByTestId('fsform-verb-all').uncheck();

  // Rule 2, added in place by htmx (no page load): a group's GETs of a URL prefix.
  const before = page.url();
  await page.getByTestId('fsform-add-rule').click();
  await expect(page.getByTestId('fsform-rule')).toHaveCount(2);
  expect(page.url()).toBe(before);
  await expect(field(page, 'r1.s0.kind')).toBeFocused();
  await expect(page.getByTestId('fsform-name')).toHaveValue(name);
  await expect(field(page, 'r0.rr0.resources')).toHaveValue('configmaps');
  await field(page, 'r1.s0.kind').selectOption('Group');
  await field(page, 'r1.s0.name').fill(`${name}-group`);
  const rule2 = page.getByTestId('fsform-rule').nth(1);
  await rule2.getByTestId('fsform-remove-resource').click();
  await expect(page.getByTestId('fsform-rule').nth(1).getByTestId('fsform-resource-rule')).toHaveCount(0);
  await page.getByTestId('fsform-rule').nth(1).getByTestId('fsform-add-nonresource').click();
  await expect(field(page, 'r1.nr0.urls')).toBeVisible();
  await expect(field(page, 'r1.s0.name')).toHaveValue(`${name}-group`);
  await page.getByTestId('fsform-nonresource-rule').getByTestId('fsform-verb-get').check();
  await field(page, 'r1.nr0.urls').fill(`/${name}/*`);

  // Preview: the API server's verdict and the diff; nothing stored yet.
  await page.getByTestId('fsform-preview').click();
  await expect(page.getByTestId('fsform-verdict')).toBeVisible();
  await expect(page.getByTestId('preview-diff')).toContainText(`name: ${name}`);
  await expect(page.getByTestId('preview-diff')).toContainText(`/${name}/*`);
  await shoot(page, info, 'flowschema-form-preview.png');

  await page.getByTestId('fsform-save').click();
  await expect(page).toHaveURL(new RegExp(`/flowschemas/${name}$`));
  await expect(page.getByTestId('toast-result')).toContainText('was created');
  try {
    // In the ordered list, at its place: after every FlowSchema with a lower
    // precedence (ties: the name), before the rest.
    await page.goto('/flowschemas');
    const list = await rows(page).evaluateAll((trs) => trs.map((tr) => ({
      name: tr.getAttribute('data-name') || '',
      position: Number(tr.getAttribute('data-position')),
      precedence: Number((tr.querySelector('[data-testid="fs-precedence"]')?.textContent || '').trim()),
    })));
    const mine = list.find((r) => r.name === name);
    expect(mine, 'the new FlowSchema is listed').toBeTruthy();
    expect(mine!.precedence).toBe(precedence);
    const ahead = list.filter((r) => r.name !== name && (r.precedence < precedence || (r.precedence === precedence && r.name < name)));
    expect(mine!.position).toBe(ahead.length + 1);
    await expect(page.locator(`[data-testid="list-row"][data-name="${name}"] [data-testid="fs-summary"]`)).toContainText(`${name}-user`);

    // The classifier puts the user's read, and the group's GET, on it.
    await classify(page, { user: `${name}-user`, verb: 'list', resource: 'configmaps', namespace: 'default' });
    await expect(page.getByTestId('result-flowschema-name')).toHaveText(name);
    await expect(page.getByTestId('result-prioritylevel-name')).toHaveText('workload-low');
    await classify(page, { user: 'someone', groups: `${name}-group`, verb: 'get', path: `/${name}/healthz` }, true);
    await expect(page.getByTestId('result-flowschema-name')).toHaveText(name);
    await shoot(page, info, 'flowschema-form-classified.png');

    // Edit opens the form from the object's page, filled in; YAML is one click away.
    await page.goto(`/flowschemas/${name}`);
    await page.getByTestId('edit-form-link').click();
    await expect(page.getByTestId('fsform-rule')).toHaveCount(2);
    await expect(field(page, 'r1.nr0.urls')).toHaveValue(`/${name}/*`);
    await page.getByTestId('fsform-yaml-link').click();
    await expect(page).toHaveURL(new RegExp(`/flowschemas/${name}/edit$`));
    await page.getByTestId('editor-form-link').click();
    await expect(page).toHaveURL(new RegExp(`/flowschemas/${name}/form$`));
  } finally {
    await page.goto(`/flowschemas/${name}/delete`);
    await page.getByTestId('delete-confirm').fill(name);
    await page.getByTestId('delete-submit').click();
    await expect(page.getByTestId('toast-result')).toContainText('was deleted');
  }
  await page.goto('/flowschemas');
  await expect(page.locator(`[data-testid="list-row"][data-name="${name}"]`)).toHaveCount(0);
});

test('without JavaScript, add and remove rule rows keep every value', async ({ newContext }, info) => {
  const page = await (await newContext({ javaScriptEnabled: false })).newPage();
  await signIn(page, 'admin');
  const name = `e2e-nojs-${Date.now()}`;
  await page.goto('/flowschemas/-/new');
  await page.getByTestId('fsform-name').fill(name);
  await page.getByTestId('fsform-precedence').fill('8000');
  await field(page, 'r0.s0.name').fill('nojs-user');
  await field(page, 'r0.rr0.resources').fill('pods');

  // Each row button is a plain submit: the page comes back with the row.
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === 'POST'),
    page.getByTestId('fsform-add-rule').click(),
  ]);
  expect(res.status()).toBe(200);
  await expect(page.getByTestId('fsform-rule')).toHaveCount(2);
  await expect(page.getByTestId('fsform-name')).toHaveValue(name);
  await expect(page.getByTestId('fsform-precedence')).toHaveValue('8000');
  await expect(field(page, 'r0.s0.name')).toHaveValue('nojs-user');
  await expect(field(page, 'r0.rr0.resources')).toHaveValue('pods');
  await expect(field(page, 'r1.s0.kind')).toBeFocused();

  await page.getByTestId('fsform-rule').first().getByTestId('fsform-add-subject').click();
  await expect(page.getByTestId('fsform-rule').first().getByTestId('fsform-subject')).toHaveCount(2);
  await field(page, 'r0.s1.kind').selectOption('ServiceAccount');
  await field(page, 'r0.s1.namespace').fill('kube-system');
  await field(page, 'r0.s1.name').fill('*');
  await shoot(page, info, 'flowschema-form-nojs.png');

  await page.getByTestId('fsform-rule').nth(1).getByTestId('fsform-remove-rule').click();
  await expect(page.getByTestId('fsform-rule')).toHaveCount(1);
  await expect(field(page, 'r0.s1.namespace')).toHaveValue('kube-system');

  // Preview works as a plain POST too; nothing is stored.
  const rr = page.getByTestId('fsform-resource-rule');
  await rr.getByTestId('fsform-verb-get').check();
  await field(page, 'r0.rr0.apigroups').fill('""');
  await rr.getByTestId('fsform-clusterscope').check();
  await page.getByTestId('fsform-preview').click();
  await expect(page.getByTestId('fsform-verdict')).toBeVisible();
  await expect(page.getByTestId('preview-diff')).toContainText('namespace: kube-system');
  const detail = await page.goto(`/flowschemas/${name}`);
  expect(detail!.status()).toBe(404);
});
