// Insight pages: the CRD schema explorer (collapsible without script, bounded
// for the largest real-world CRD), webhook lints and CSI driver explanations.
import type { Page } from '@playwright/test';
import { expect, signIn, test } from './support/fixtures';
import { call } from './support/kube';
import { readRows, rows } from './support/pages';

/** Opens the detail page of the only list row matching filter q. */
async function openOnly(page: Page, kind: string, q: string) {
  await page.goto(`/${kind}?q=${encodeURIComponent(q)}`);
  await expect(rows(page)).toHaveCount(1);
  await rows(page).first().locator('th[scope=row] a').click();
  await expect(page.getByTestId('detail-name')).toBeVisible();
}

test('a CRD version links to its schema, a tree that opens and closes', async ({ page }) => {
  await openOnly(page, 'crds', 'widgets.demo.clusterdesk.dev');
  const version = page.getByTestId('versions').getByTestId('version-row').first();
  await version.getByRole('link', { name: /explore \d+ fields/ }).click();
  await expect(page.getByTestId('schema-title')).toContainText('Widget');

  const spec = page.locator('[data-testid="schema-field"][data-path="spec"] > details');
  await expect(spec).toHaveAttribute('open', '');
  const labels = page.locator('[data-testid="schema-field"][data-path="spec.labels"] > details');
  await expect(labels).not.toHaveAttribute('open', '');
  await labels.locator('summary').click();
  await expect(labels).toHaveAttribute('open', '');
  await expect(labels.locator('[data-testid="schema-field"][data-path="spec.labels{}"]')).toBeVisible();

  // The demo description's entity-encoded javascript: link keeps its text, loses its target.
  const color = page.locator('[data-testid="schema-field"][data-path="spec.color"]');
  const link = color.getByTestId('schema-description').getByRole('link', { name: 'click me' });
  await expect(link).toBeVisible();
  expect(await link.getAttribute('href')).not.toMatch(/script|&colon;|alert/i);
  await expect(color.getByTestId('schema-enum')).toContainText('"red"');
});

test('the schema tree works with JavaScript disabled', async ({ newContext }) => {
  const ctx = await newContext({ javaScriptEnabled: false });
  const page = await ctx.newPage();
  await signIn(page, 'admin');
  await openOnly(page, 'crds', 'widgets.demo.clusterdesk.dev');
  await page.getByTestId('versions').getByRole('link', { name: /explore/ }).first().click();
  const labels = page.locator('[data-testid="schema-field"][data-path="spec.labels"] > details');
  await labels.locator('summary').click();
  await expect(labels).toHaveAttribute('open', '');
});

test('the largest real-world CRD schema stays small and deep fields open in their own view', async ({ page }) => {
  // Argo Workflows' CronWorkflow: the biggest manifest in ../shared/fixtures/real (2.9 MB, ~9,000 fields).
  // Its detail page holds all of that as YAML, so go from the list straight to the schema.
  await page.goto('/crds?q=cronworkflows.argoproj.io');
  const [row] = await readRows(page);
  const version = row.cells['versions'].split(/[\s,(]/)[0];
  await page.goto(`${row.href}/schema/${version}`);
  await expect(page.getByTestId('schema-note')).toBeVisible();
  const elements = await page.evaluate(() => document.getElementsByTagName('*').length);
  expect(elements, 'elements on the page').toBeLessThan(15_000);
  const fields = await page.getByTestId('schema-field').count();
  expect(fields).toBeGreaterThan(100);
  expect(fields).toBeLessThanOrEqual(600);

  // A field cut off at the last level links to a view focused on it.
  const hidden = page.getByTestId('schema-hidden').first();
  const target = await hidden.locator('a').getAttribute('href');
  const path = new URL(target!, page.url()).searchParams.get('path')!;
  await page.goto(target!);
  await expect(page.getByTestId('schema-trail')).toContainText(path.split('.').pop()!.replace(/(\[\]|\{\})+$/, ''));
  expect(await page.getByTestId('schema-field').count()).toBeGreaterThan(0);
});

test('webhook lints show on the configuration page and link to each webhook', async ({ page }) => {
  await openOnly(page, 'validatingwebhooks', 'demo-pod-policy');
  const row = page.getByTestId('webhooks').getByTestId('webhook-row').first();
  await expect(row).toContainText('pods');
  const card = page.locator('details[data-testid^="webhook-"]').first();
  // The demo's Service does not exist: looked up when the page was opened.
  await expect(card.getByTestId('finding-service-missing')).toBeVisible();
  await row.getByRole('link').first().click();
  expect(new URL(page.url()).hash).toMatch(/^#webhook-/);
});

test('a CSI driver explains every field and counts what uses it', async ({ page }) => {
  await openOnly(page, 'csidrivers', 'block.csi.demo.clusterdesk.dev');
  const spec = page.getByTestId('csi-spec');
  await expect(spec.getByTestId('field-attachrequired')).toContainText('immutable');
  await expect(spec.getByTestId('field-podinfoonmount')).not.toContainText('immutable');
  await expect(spec.getByTestId('field-hint')).toHaveCount(11);
  for (const kind of ['storageclasses', 'persistentvolumes', 'csinodes', 'volumeattachments']) {
    await expect(page.getByTestId(`usage-${kind}`).locator('td').nth(1)).toHaveText(/^\d+$/);
  }
});

test('the interception form answers which webhooks a request meets, also without JavaScript', async ({ newContext }) => {
  const ctx = await newContext({ javaScriptEnabled: false });
  const page = await ctx.newPage();
  await signIn(page, 'admin');
  await openOnly(page, 'validatingwebhooks', 'demo-pod-policy');
  await page.getByTestId('webhooks').getByRole('link', { name: 'Which webhooks would intercept it?' }).click();
  await page.getByTestId('intercept-operation').selectOption('CREATE');
  await page.getByTestId('intercept-version').fill('v1');
  await page.getByTestId('intercept-resource').fill('pods');
  await page.getByTestId('intercept-namespace').fill('default');
  await page.getByTestId('intercept-submit').click();
  const row = page.getByTestId('intercept-row').filter({ hasText: 'pods.policy.demo.clusterdesk.dev' });
  await expect(row).toContainText('called');
  await expect(row).toContainText('Rule 1 matches CREATE core/v1 pods in namespace default');
  // The configmap guard only takes objects labelled clusterdesk.dev/never-set.
  await expect(page.getByTestId('intercept-row').filter({ hasText: 'configmaps.guard.demo.clusterdesk.dev' })).toContainText('not called');
  await expect(page.getByTestId('intercept-notes')).toContainText('Namespace default exists');
});

test.describe('MutatingWebhookConfigurations', () => {
  // Created behind the console's back, so the test needs no fixture set: one
  // webhook on pods calling a Service that does not exist.
  const name = `e2e-mutating-${Date.now().toString(36)}`;
  test.beforeAll(async () => {
    const res = await call('POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name },
      webhooks: [{
        name: 'inject.e2e.clusterdesk.dev', admissionReviewVersions: ['v1'], sideEffects: 'None',
        failurePolicy: 'Ignore', reinvocationPolicy: 'IfNeeded',
        clientConfig: { service: { namespace: 'default', name: 'e2e-absent-injector' } },
        // Only objects nobody labels so: the webhook never gets a request.
        objectSelector: { matchLabels: { 'clusterdesk.dev/never-set': 'x' } },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
      }],
    });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
  });
  test.afterAll(async () => {
    await call('DELETE', `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${name}`);
  });

  test('a mutating configuration has the webhook page design, and its editor', async ({ page }) => {
    await page.goto('/');
    await page.getByRole('navigation').getByRole('link', { name: /MutatingWebhookConfigurations/ }).first().click();
    await expect(page).toHaveURL(/\/mutatingwebhooks$/);
    await openOnly(page, 'mutatingwebhooks', name);
    const row = page.getByTestId('webhooks').getByTestId('webhook-row').first();
    await expect(row).toContainText('pods');
    const card = page.locator('details[data-testid="webhook-inject.e2e.clusterdesk.dev"]');
    await expect(card.getByTestId('finding-service-missing')).toBeVisible();
    await expect(card).toContainText('IfNeeded');
    await expect(page.getByTestId('edit-link')).toHaveAttribute('href', `/mutatingwebhooks/${name}/edit`);
  });

  test('the interception form lists mutating webhooks first, and matches across groups', async ({ page }) => {
    const form = (q: Record<string, string>) => '/validatingwebhooks/intercept?' + new URLSearchParams(q).toString();
    await page.goto(form({ operation: 'CREATE', group: '', version: 'v1', resource: 'pods', namespace: 'default', labels: 'clusterdesk.dev/never-set=x' }));
    const rowsShown = page.getByTestId('intercept-row');
    const mutating = rowsShown.filter({ hasText: 'inject.e2e.clusterdesk.dev' });
    await expect(mutating).toContainText('mutating, called before validating');
    await expect(mutating).toContainText('called');
    const kinds = await rowsShown.locator('td:nth-child(2)').allInnerTexts();
    const firstValidating = kinds.findIndex((k) => k.trim() === 'validating');
    const lastMutating = kinds.map((k) => k.trim()).lastIndexOf('mutating, called before validating');
    expect(lastMutating, 'a mutating row').toBeGreaterThanOrEqual(0);
    if (firstValidating >= 0) expect(lastMutating).toBeLessThan(firstValidating);

    // Core events and events.k8s.io events are one resource in two groups.
    await page.goto(form({ operation: 'CREATE', group: '', version: 'v1', resource: 'events', namespace: 'default' }));
    await expect(page.getByTestId('intercept-notes')).toContainText('core/v1 events, events.k8s.io/v1 events');
  });
});
