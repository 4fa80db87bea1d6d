// Cleanup with a preview: delete a label-selected set of CSIDrivers this test
// creates (a run label of its own, so nothing else is ever selected), with
// JavaScript and without it. Screenshots at 1280 px go to test-results/.
import path from 'node:path';
import type { Page } from '@playwright/test';
import { expect, signIn, signInWithToken, test } from './support/fixtures';
import { call } from './support/kube';

const LABEL = 'clusterdesk-cleanup-e2e';

async function createDrivers(n: number): Promise<{ selector: string; names: string[] }> {
  const run = `r${Date.now()}${Math.floor(Math.random() * 1e6)}`;
  const names: string[] = [];
  for (let i = 0; i < n; i++) {
    const name = `e2e-cleanup-${run}-${String(i).padStart(2, '0')}.clusterdesk.test`;
    const res = await call('POST', '/apis/storage.k8s.io/v1/csidrivers', {
      apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver',
      metadata: { name, labels: { [LABEL]: run } }, spec: { attachRequired: false },
    });
    expect(res.status, `create ${name}`).toBe(201);
    names.push(name);
  }
  return { selector: `${LABEL}=${run}`, names };
}

async function remaining(names: string[]): Promise<string[]> {
  const left: string[] = [];
  for (const n of names) {
    if ((await call('GET', `/apis/storage.k8s.io/v1/csidrivers/${n}`)).status !== 404) left.push(n);
  }
  return left;
}

async function cleanupAfter(names: string[]): Promise<void> {
  for (const n of await remaining(names)) await call('DELETE', `/apis/storage.k8s.io/v1/csidrivers/${n}`);
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(__dirname, 'test-results', name), fullPage: true });
  // The page fits 1280 px: no sideways scrolling.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${name}: horizontal overflow`).toBeLessThanOrEqual(0);
}

test('cleanup of a label-selected set with JavaScript: preview, typed count, result per object', async ({ page }) => {
  const { selector, names } = await createDrivers(22);
  try {
    await signIn(page, 'admin');
    await page.goto(`/csidrivers?selector=${encodeURIComponent(selector)}`);
    await page.getByTestId('cleanup-link').click();
    await expect(page).toHaveURL(/\/csidrivers\/-\/cleanup\?selector=/);
    await expect(page.getByTestId('cleanup-count')).toHaveAttribute('data-count', '22');
    await expect(page.getByTestId('cleanup-item')).toHaveCount(22);
    await expect(page.locator('[data-testid="cleanup-item"][data-result="would be deleted"]')).toHaveCount(22);
    await shot(page, 'cleanup-preview-1280.png');

    // The wrong count deletes nothing and says why.
    await page.getByTestId('cleanup-confirm').fill('21');
    await page.getByTestId('cleanup-submit').click();
    await expect(page.getByText('Count not confirmed')).toBeVisible();
    expect(await remaining(names)).toHaveLength(22);

    await page.getByTestId('cleanup-confirm').fill('22');
    await page.getByTestId('cleanup-submit').click();
    await expect(page.locator('[data-testid="cleanup-result-count"][data-result="deleted"]')).toHaveAttribute('data-count', '22');
    await shot(page, 'cleanup-result-1280.png');
    expect(await remaining(names)).toEqual([]);
  } finally {
    await cleanupAfter(names);
  }
});

test('cleanup works with JavaScript disabled', async ({ newContext }) => {
  const { selector, names } = await createDrivers(3);
  try {
    const page = await (await newContext({ javaScriptEnabled: false })).newPage();
    await signIn(page, 'admin');
    await page.goto(`/csidrivers/-/cleanup?selector=${encodeURIComponent(selector)}`);
    await expect(page.getByTestId('cleanup-count')).toHaveAttribute('data-count', '3');
    await expect(page.getByTestId('cleanup-confirm')).toHaveCount(0); // 20 or fewer: no typed count
    await shot(page, 'cleanup-preview-nojs-1280.png');
    await page.getByTestId('cleanup-submit').click();
    await expect(page.locator('[data-testid="cleanup-result-count"][data-result="deleted"]')).toHaveAttribute('data-count', '3');
    await expect(page.locator('[data-testid="cleanup-results"] [data-result="deleted"]')).toHaveCount(3);
    expect(await remaining(names)).toEqual([]);
  } finally {
    await cleanupAfter(names);
  }
});

test('ticked rows on the list: Delete selected… previews and deletes exactly those, the others survive', async ({ page }) => {
  const { selector, names } = await createDrivers(5);
  const picked = [names[0], names[2], names[4]];
  try {
    await signIn(page, 'admin');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`/csidrivers?selector=${encodeURIComponent(selector)}`);
    await expect(page.getByTestId('list-row')).toHaveCount(5);
    // The header and every row agree on the column count (the tick column included).
    const headerCols = await page.locator('[data-testid="data-table"] thead th').count();
    for (const n of names) {
      // By the row's id: Playwright's :text-is does not see a name whose <wbr> break hints split its text nodes.
      await expect(page.locator(`[data-testid="list-row"][id="row-csidrivers-${n}"] > *`)).toHaveCount(headerCols);
    }
    // Nothing ticked yet: the button says so and the page stays (the server
    // would refuse the empty selection with a 400).
    await page.getByTestId('bulk-delete').click();
    await expect(page.getByTestId('ticks-note')).toHaveText('Tick the rows to delete first.');
    await expect(page).toHaveURL(/\/csidrivers\?selector=/);
    for (const n of picked) await page.getByRole('checkbox', { name: `Select ${n}` }).check();
    await shot(page, 'cleanup-ticked-list-1280.png');
    await page.getByTestId('bulk-delete').click();

    await expect(page).toHaveURL(/\/csidrivers\/-\/cleanup$/);
    await expect(page.getByTestId('cleanup-count')).toHaveAttribute('data-count', '3');
    const listed = await page.getByTestId('cleanup-item').evaluateAll((els) => els.map((e) => e.getAttribute('data-name')));
    expect(listed.sort()).toEqual([...picked].sort());
    await shot(page, 'cleanup-ticked-preview-1280.png');

    await page.getByTestId('cleanup-submit').click();
    await expect(page.locator('[data-testid="cleanup-result-count"][data-result="deleted"]')).toHaveAttribute('data-count', '3');
    expect(await remaining(names)).toEqual([names[1], names[3]]);
  } finally {
    await cleanupAfter(names);
  }
});

test("ticked rows on a CRD's objects: Delete selected… deletes exactly those, in their namespaces", async ({ page }) => {
  // cert-manager's Issuer (a real-world CRD the devcluster installs); three of them, two ticked.
  const crd = 'issuers.cert-manager.io';
  const run = `e2e-tick-${Date.now().toString(36)}`;
  const objects = [['default', `${run}-a`], ['kube-public', `${run}-b`], ['default', `${run}-c`]];
  const api = (ns: string, name = '') => `/apis/cert-manager.io/v1/namespaces/${ns}/issuers${name ? `/${name}` : ''}`;
  for (const [ns, name] of objects) {
    const res = await call('POST', api(ns), { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name, namespace: ns }, spec: { selfSigned: {} } });
    expect(res.status, `create ${ns}/${name}`).toBe(201);
  }
  try {
    await signIn(page, 'admin');
    await page.goto(`/crds/${crd}/instances`);
    await page.getByRole('checkbox', { name: `Select ${run}-a` }).check();
    await page.getByRole('checkbox', { name: `Select ${run}-b` }).check();
    await page.getByTestId('bulk-delete').click();
    await expect(page).toHaveURL(`/crds/${crd}/instances/-/cleanup`);
    await expect(page.getByTestId('cleanup-count')).toHaveAttribute('data-count', '2');
    const listed = await page.getByTestId('cleanup-item').evaluateAll((els) => els.map((e) => `${e.getAttribute('data-namespace')}/${e.getAttribute('data-name')}`));
    expect(listed.sort()).toEqual([`default/${run}-a`, `kube-public/${run}-b`]);
    await shot(page, 'cleanup-ticked-issuers-1280.png');
    await page.getByTestId('cleanup-submit').click();
    await expect(page.locator('[data-testid="cleanup-result-count"][data-result="deleted"]')).toHaveAttribute('data-count', '2');
    const left: string[] = [];
    for (const [ns, name] of objects) if ((await call('GET', api(ns, name))).status !== 404) left.push(`${ns}/${name}`);
    expect(left).toEqual([`default/${run}-c`]);
  } finally {
    for (const [ns, name] of objects) await call('DELETE', api(ns, name));
  }
});

test.describe('a long cleanup', () => {
  // The token console sends a confirmed cleanup's page at once, as every
  // console does once a cleanup has run 2 s (--cleanup-progress-after 1ms).
  test.use({ instance: 'token', autoLogin: false });

  test('shows its progress while it runs, then every result in the same page', async ({ page }) => {
    // 900 deletions one by one at the console's delete rate (a burst of 200,
    // then 200 a second: kube.DeleteQPS) take at least 3.5 s: the page is
    // there, counting, long before. Creating and checking 900 drivers takes
    // longer than the default 30 s.
    test.setTimeout(180_000);
    const { selector, names } = await createDrivers(900);
    try {
      await new Promise((r) => setTimeout(r, 3_000)); // every driver older than 1s
      await signInWithToken(page, 'admin');
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(`/csidrivers/-/cleanup?selector=${encodeURIComponent(selector)}&older=1s`);
      await expect(page.getByTestId('cleanup-count')).toHaveAttribute('data-count', '900');
      await page.getByTestId('cleanup-confirm').fill('900');
      const confirmed = page.waitForResponse((r) => r.url().endsWith('/csidrivers/-/cleanup/confirm'));
      await page.getByTestId('cleanup-submit').click();
      expect((await confirmed).status()).toBe(200);
      // While it runs (the document still loading, where Playwright's
      // locators do not look yet, so the page's own DOM is asked): a second
      // progress line has come, and only it shows (the stylesheet hides the
      // older ones); no result yet.
      const running = await page.waitForFunction(() => {
        const steps = [...document.querySelectorAll('[data-testid="cleanup-step"]')];
        const shown = steps.filter((s) => getComputedStyle(s).display !== 'none');
        if (steps.length < 2 || document.readyState === 'complete') return null;
        return { steps: steps.length, shown: shown.map((s) => s.textContent!.trim()), back: !!document.querySelector('[data-testid="cleanup-back"]') };
      }, null, { polling: 100, timeout: 30_000 });
      const seen = await running.jsonValue();
      expect(seen!.shown).toHaveLength(1);
      expect(seen!.shown[0]).toMatch(/^\d+ of 900 done; the rest are being deleted as you\./);
      expect(seen!.back).toBe(false);
      await page.screenshot({ path: path.join(__dirname, 'test-results', 'cleanup-progress-running-1280.png') });

      await expect(page.getByTestId('cleanup-finished')).toHaveText('All 900 done.', { timeout: 60_000 });
      await expect(page.locator('[data-testid="cleanup-result-count"][data-result="deleted"]')).toHaveAttribute('data-count', '900');
      expect(await page.getByTestId('cleanup-step').count()).toBeGreaterThanOrEqual(3);
      await expect(page.locator('[data-testid="cleanup-step"]:visible')).toHaveCount(1);
      await expect(page.getByTestId('cleanup-back')).toBeVisible();
      await shot(page, 'cleanup-progress-done-1280.png');
      expect(await remaining(names)).toEqual([]);
    } finally {
      await cleanupAfter(names);
    }
  });
});
