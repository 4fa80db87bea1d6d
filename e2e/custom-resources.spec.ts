// Custom resources: a CRD's objects (count, the API server's table), their
// YAML and the same editor as the console's own kinds, with the CRD's field
// documentation beside it — safely rendered even when the CRD's author wrote
// hostile descriptions. Also measures Preview on the largest real-world CRD.
import type { Page } from '@playwright/test';
import { expect, test } from './support/fixtures';
import { call } from './support/kube';

function unique(prefix: string): string {
  return `${prefix}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
}

async function ok(res: Promise<{ status: number; json: any }>, what: string): Promise<any> {
  const r = await res;
  expect(r.status, `${what}: ${JSON.stringify(r.json).slice(0, 300)}`).toBeLessThan(300);
  return r.json;
}

async function waitEstablished(name: string): Promise<void> {
  await expect.poll(async () => {
    const r = await call('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    return (r.json?.status?.conditions ?? []).some((c: any) => c.type === 'Established' && c.status === 'True');
  }, { message: `${name} established`, timeout: 30_000 }).toBe(true);
}

/** Opens the editor at path until the docs panel describes field (the API
 * server publishes a CRD's OpenAPI document a moment after it is established). */
async function openEditorWithDocs(page: Page, path: string, field: string): Promise<void> {
  await expect.poll(async () => {
    await page.goto(path);
    return page.locator(`[data-testid="editor-docs"] [data-testid="schema-field"][data-path="${field}"]`).count();
  }, { message: `the docs panel lists ${field}`, timeout: 30_000 }).toBeGreaterThan(0);
}

test('the docs panel of a real-world custom resource describes its CRD-defined fields', async ({ page }) => {
  // cert-manager's Issuer, installed from ../shared/fixtures/real by the devcluster.
  const crd = 'issuers.cert-manager.io';
  const name = unique('e2e-issuer');
  await ok(call('POST', '/apis/cert-manager.io/v1/namespaces/default/issuers', {
    apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name, namespace: 'default' }, spec: { selfSigned: {} },
  }), 'create the Issuer');
  try {
    // From the CRD's page: the count and the link to the objects.
    await page.goto(`/crds/${crd}`);
    const objects = page.getByTestId('crd-instances');
    await expect(objects.getByTestId('field-count')).toContainText(/\d/);
    await objects.getByRole('link', { name: /Show Issuer objects/ }).click();
    await expect(page).toHaveURL(`/crds/${crd}/instances`);
    // The CRD's own printer columns, from the API server's Table.
    const table = page.getByTestId('instances-table');
    await expect(table.locator('th[scope="col"]')).toContainText(['Name', 'Namespace', 'Ready', 'Age']);
    await table.getByRole('link', { name, exact: true }).click();
    await expect(page).toHaveURL(`/crds/${crd}/instances/default/${name}`);
    await expect(page.getByTestId('yaml')).toContainText('selfSigned: {}');
    await page.getByTestId('edit-link').click();
    await expect(page).toHaveURL(`/crds/${crd}/instances/default/${name}/edit`);

    const field = page.locator('[data-testid="editor-docs"] [data-testid="schema-field"][data-path="spec.selfSigned"]');
    await expect(field.getByTestId('schema-description').first())
      .toContainText("SelfSigned configures this issuer to 'self sign' certificates");
  } finally {
    await call('DELETE', `/apis/cert-manager.io/v1/namespaces/default/issuers/${name}`);
  }
});

test('an XSS payload in a CRD field description renders inert', async ({ page }) => {
  const group = `${unique('xss').replace(/[^a-z0-9-]/g, '')}.clusterdesk.test`;
  const crd = `traps.${group}`;
  const hostile = 'Hostile <img src=x onerror=alert(1)> and <script>alert(2)</script> and [a link](javascript:alert(3)).';
  // Any dialog means a payload ran.
  page.on('dialog', (d) => { throw new Error(`a dialog opened: ${d.message()}`); });
  await ok(call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
    metadata: { name: crd },
    spec: {
      group, scope: 'Cluster',
      names: { plural: 'traps', singular: 'trap', kind: 'Trap', listKind: 'TrapList' },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: {
          bait: { type: 'string', description: hostile },
        } } } } },
      }],
    },
  }), 'install the CRD');
  try {
    await waitEstablished(crd);
    await ok(call('POST', `/apis/${group}/v1/traps`, { apiVersion: `${group}/v1`, kind: 'Trap', metadata: { name: 'one' }, spec: { bait: 'x' } }), 'create a Trap');
    await openEditorWithDocs(page, `/crds/${crd}/instances/_/one/edit`, 'spec.bait');
    const docs = page.getByTestId('editor-docs');
    const desc = docs.locator('[data-testid="schema-field"][data-path="spec.bait"] [data-testid="schema-description"]').first();
    await expect(desc).toContainText('Hostile');
    await expect(desc).toContainText('a link');
    // Nothing of the payload became an element, an event handler or a javascript: URL.
    expect(await docs.locator('img, script, iframe, [onerror]').count()).toBe(0);
    expect(await page.locator('a[href^="javascript:" i]').count()).toBe(0);
    expect(await page.evaluate(() => document.querySelectorAll('img[src="x"], script:not([src])').length)).toBe(0);
  } finally {
    await call('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`);
  }
});

test('Preview of the largest real-world CRD: time from click to diff', async ({ page }) => {
  test.setTimeout(180_000);
  // Argo Workflows' CronWorkflow: the largest manifest in ../shared/fixtures/real (2.9 MB of YAML).
  const crd = 'cronworkflows.argoproj.io';
  const opened = Date.now();
  await page.goto(`/crds/${crd}/edit`, { timeout: 90_000 });
  await expect(page.locator('form[data-editor-ready]')).toHaveCount(1, { timeout: 60_000 });
  const openMs = Date.now() - opened;
  const text = await page.getByTestId('editor-yaml').inputValue();
  const lines = text.split('\n');
  const meta = lines.indexOf('metadata:');
  expect(meta, 'a metadata: line').toBeGreaterThan(-1);
  const end = lines.findIndex((l, i) => i > meta && /^\S/.test(l));
  const hasLabels = lines.slice(meta, end).includes('  labels:');
  const at = hasLabels ? lines.indexOf('  labels:', meta) : meta;
  // Put the cursor at the end of that line and type below it.
  await page.getByTestId('editor-code').click();
  await page.keyboard.press('ControlOrMeta+Home');
  for (let i = 0; i < at; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('End');
  await page.keyboard.insertText(hasLabels ? '\n    e2e-preview: measured' : '\n  labels:\n    e2e-preview: measured');
  await expect(page.getByTestId('editor-yaml')).toHaveValue(/e2e-preview: measured/);

  const started = Date.now();
  // The click waits for the navigation it starts: as long as the dry run takes.
  await page.getByTestId('editor-preview').click({ timeout: 120_000 });
  const added = page.getByTestId('preview-diff').locator('[data-testid="diff-line"][data-kind="added"]');
  await expect(added).toContainText(['e2e-preview: measured'], { timeout: 120_000 });
  const previewMs = Date.now() - started;
  console.log(`custom-resources.spec: ${crd}: ${(text.length / 1024 / 1024).toFixed(2)} MiB of YAML, ${lines.length} lines; ` +
    `editor open ${openMs} ms; Preview click to diff shown ${previewMs} ms`);
  // Nothing was stored.
  const live = await call('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`);
  expect(live.json?.metadata?.labels?.['e2e-preview']).toBeUndefined();
});
