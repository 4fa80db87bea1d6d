// API Priority and Fairness: the FlowSchema overview in evaluation order and
// the request classifier (a plain GET form, so it also works without script).
import type { Page } from '@playwright/test';
import { expect, signIn, test } from './support/fixtures';
import { rows } from './support/pages';

async function classifyAndExpect(page: Page, flowSchema: string, priorityLevel: string) {
  const [res] = await Promise.all([
    page.waitForResponse((r) => new URL(r.url()).pathname === '/flowschemas/-/classify' && r.request().isNavigationRequest()),
    page.getByTestId('classify-submit').click(),
  ]);
  expect(res.status()).toBe(200);
  const result = page.getByTestId('classify-result');
  await expect(result.getByTestId('result-flowschema-name')).toHaveText(flowSchema);
  await expect(result.getByTestId('result-prioritylevel-name')).toHaveText(priorityLevel);
  // The trace ends at the match; every FlowSchema before it says why it did not match.
  const steps = page.getByTestId('trace-step');
  await expect(steps.last()).toHaveAttribute('data-flowschema', flowSchema);
  const count = await steps.count();
  for (let i = 0; i < count - 1; i++) {
    await expect(steps.nth(i)).toContainText(/rule \d+: |Skipped: /);
  }
}

test('the FlowSchema list is in evaluation order and links to the classifier', async ({ page }) => {
  const res = await page.goto('/flowschemas');
  expect(res!.status()).toBe(200);
  const all = rows(page);
  await expect(all.first()).toHaveAttribute('data-name', 'exempt');
  await expect(all.last()).toHaveAttribute('data-name', 'catch-all');
  const positions = await all.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-position'))));
  expect(positions.length).toBeGreaterThan(10);
  expect(positions).toEqual([...positions].sort((a, b) => a - b));
  // The demo's dangling FlowSchema: its missing priority level is flagged and not linked.
  const ghost = page.locator('[data-testid="list-row"][data-name="clusterdesk-ghost-users"]');
  await expect(ghost.getByTestId('fs-prioritylevel')).toContainText('Missing');
  await expect(ghost.getByTestId('fs-prioritylevel').locator('a')).toHaveCount(0);
  // Objects the apiserver maintains carry a badge.
  await expect(page.locator('[data-testid="list-row"][data-name="global-default"] th')).toContainText('Auto-update');

  await page.getByTestId('classify-link').click();
  await expect(page).toHaveURL(/\/flowschemas\/-\/classify$/);
  await expect(page.getByTestId('classify-empty')).toBeVisible();
});

test('classifies the controller manager renewing its lease, then opens the FlowSchema', async ({ page }) => {
  await page.goto('/flowschemas/-/classify');
  await page.getByTestId('classify-user').fill('system:kube-controller-manager');
  await page.getByTestId('classify-verb').fill('update');
  await page.getByTestId('classify-apigroup').fill('coordination.k8s.io');
  await page.getByTestId('classify-resource').fill('leases');
  await page.getByTestId('classify-namespace').fill('kube-system');
  await classifyAndExpect(page, 'system-leader-election', 'leader-election');
  await expect(page.getByTestId('result-distinguisher')).toContainText('ByUser');
  await expect(page.getByTestId('result-distinguisher-value')).toHaveText('system:kube-controller-manager');
  // The form keeps what was typed, and the URL can be shared.
  await expect(page.getByTestId('classify-resource')).toHaveValue('leases');
  expect(new URL(page.url()).searchParams.get('user')).toBe('system:kube-controller-manager');

  await page.getByTestId('result-flowschema-name').click();
  await expect(page).toHaveURL(/\/flowschemas\/system-leader-election$/);
  await expect(page.getByTestId('detail-name')).toHaveText('system-leader-election');
  await expect(page.getByTestId('banner-autoupdate')).toBeVisible();
});

test('classifies a service account and a probe with JavaScript disabled; shows field errors', async ({ newContext }) => {
  const page = await (await newContext({ javaScriptEnabled: false })).newPage();
  await signIn(page, 'admin');
  await page.goto('/flowschemas/-/classify');
  await page.getByTestId('classify-serviceaccount').fill('default/app');
  await page.getByTestId('classify-verb').fill('watch');
  await page.getByTestId('classify-resource').fill('configmaps');
  await page.getByTestId('classify-namespace').fill('default');
  await classifyAndExpect(page, 'service-accounts', 'workload-low');
  await expect(page.getByTestId('result-identity')).toContainText('system:serviceaccount:default:app');
  await expect(page.getByTestId('result-identity')).toContainText('system:serviceaccounts:default');

  await page.getByTestId('classify-serviceaccount').fill('');
  await page.getByTestId('classify-user').fill('bob');
  await page.getByTestId('classify-kind-nonresource').check();
  await page.getByTestId('classify-verb').fill('get');
  await page.getByTestId('classify-path').fill('/readyz');
  await classifyAndExpect(page, 'probes', 'exempt');
  await expect(page.getByTestId('result-distinguisher')).toContainText('Not used');

  await page.getByTestId('classify-user').fill('');
  await page.getByTestId('classify-path').fill('readyz');
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().isNavigationRequest()),
    page.getByTestId('classify-submit').click(),
  ]);
  expect(res.status()).toBe(422);
  await expect(page.getByTestId('classify-error-user')).toBeVisible();
  await expect(page.getByTestId('classify-error-path')).toContainText('starting with /');
  await expect(page.getByTestId('classify-result')).toHaveCount(0);
});
