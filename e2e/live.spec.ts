// Live updates over server-sent events: a change made in one tab (or behind the
// console's back) shows in another tab without a reload, and a lost watch on the
// API server shows as a "stale data" banner until it recovers.
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { API_CLIENT_SIGNER } from './support/env';
import { consoleURL, expect, signIn, test } from './support/fixtures';
import { call, createCSR, deleteCSR } from './support/kube';

// markPage tags the document: the tag survives everything but a reload.
async function markPage(page: Page): Promise<string> {
  const mark = `live-${Math.random().toString(36).slice(2)}`;
  await page.evaluate((m) => { document.documentElement.dataset.e2eMark = m; }, mark);
  return mark;
}

async function notReloaded(page: Page, mark: string) {
  expect(await page.evaluate(() => document.documentElement.dataset.e2eMark), 'the page was not reloaded').toBe(mark);
}

// waitForStream resolves once the page's event stream has said hello.
async function waitForStream(page: Page) {
  await expect(page.locator('body'), 'the page joined the event stream').toHaveAttribute('data-live-state', 'connected');
}

test('approving a CSR in one tab updates the queue in another tab without reload', async ({ page, context }) => {
  const name = `e2e-live-${Date.now().toString(36)}`;
  await createCSR(name, API_CLIENT_SIGNER);
  try {
    // Tab A: the CSR queue, narrowed to the new CSR.
    await expect.poll(async () => (await page.goto(`/csrs?q=${name}`))!.status(), { message: `the console lists ${name}`, timeout: 15_000 }).toBe(200);
    const row = page.locator(`[id="row-csrs-${name}"]`);
    await expect(row).toContainText('Pending');
    await waitForStream(page);
    const mark = await markPage(page);

    // Tab B: the CSR's page; approve through its form, as a person would.
    const tabB = await context.newPage();
    await tabB.goto(`/csrs/${name}`);
    tabB.once('dialog', (d) => d.accept());
    const back = tabB.waitForResponse((r) => r.request().method() === 'GET' && r.request().isNavigationRequest());
    await tabB.getByTestId('action-approve').click();
    expect((await back).status()).toBe(200);
    await expect(tabB.getByTestId('detail-status')).toContainText('Approved');

    // Tab A follows within a second or two, without a reload.
    await expect(row).toContainText('Approved', { timeout: 5_000 });
    await notReloaded(page, mark);
    // The signer issues the certificate moments later: that shows too.
    await expect(row).toContainText('Issued', { timeout: 15_000 });
    await notReloaded(page, mark);
    await tabB.close();
  } finally {
    await deleteCSR(name);
  }
});

test('the nav count follows creations and deletions on any page', async ({ page }) => {
  await page.goto('/');
  await waitForStream(page);
  const mark = await markPage(page);
  const count = page.getByTestId('nav-count-csrs');
  const before = Number(await count.textContent());
  const name = `e2e-live-count-${Date.now().toString(36)}`;
  await createCSR(name, 'example.com/clusterdesk-e2e-live');
  try {
    await expect(count).toHaveText(String(before + 1), { timeout: 5_000 });
  } finally {
    await deleteCSR(name);
  }
  await expect(count).toHaveText(String(before), { timeout: 5_000 });
  await notReloaded(page, mark);
});

const CSIDRIVERS = '/apis/storage.k8s.io/v1/csidrivers';

async function createCSIDriver(name: string) {
  const res = await call('POST', CSIDRIVERS, { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name }, spec: {} });
  expect(res.status, `create CSIDriver ${name}: ${JSON.stringify(res.json)}`).toBe(201);
}

async function deleteCSIDriver(name: string) {
  const res = await call('DELETE', `${CSIDRIVERS}/${name}`);
  expect([200, 404], `delete CSIDriver ${name}`).toContain(res.status);
}

test('a generic list inserts and removes rows in place, and a filtered one refetches', async ({ page }) => {
  const name = `e2e-live-${Date.now().toString(36)}.example.com`;
  await page.goto('/csidrivers');
  await waitForStream(page);
  const mark = await markPage(page);
  const total = page.getByTestId('list-total');
  const before = Number(await total.textContent());
  const row = page.locator(`[id="row-csidrivers-${name}"]`);
  try {
    await createCSIDriver(name);
    await expect(row).toBeVisible({ timeout: 5_000 });
    await expect(total).toHaveText(String(before + 1));
    await expect(page.getByTestId('list-count')).toContainText(`${before + 1} of ${before + 1}`);
    // In name order, where a reload would put it.
    const ids = await page.getByTestId('list-row').evaluateAll((rows) => rows.map((r) => r.id));
    expect(ids).toEqual([...ids].sort());
  } finally {
    await deleteCSIDriver(name);
  }
  await expect(row).toHaveCount(0, { timeout: 5_000 });
  await expect(total).toHaveText(String(before));
  await notReloaded(page, mark);

  // Filtered: only the server knows whether a new object matches.
  await page.goto('/csidrivers?q=e2e-live-');
  await waitForStream(page);
  const filtered = await markPage(page);
  await expect(page.getByTestId('list-empty')).toBeVisible();
  try {
    await createCSIDriver(name);
    await expect(row).toBeVisible({ timeout: 5_000 });
    await expect(page.getByTestId('list-count')).toContainText(`1 of ${before + 1}`);
  } finally {
    await deleteCSIDriver(name);
  }
  await expect(page.getByTestId('list-empty')).toBeVisible({ timeout: 5_000 });
  await notReloaded(page, filtered);
});

test('a stream that finds the session over tells the user to sign in again', async ({ page, context }) => {
  await page.goto('/csidrivers');
  await waitForStream(page);
  await context.clearCookies();
  // Make the page reconnect now, as it does when it comes back from the
  // back/forward cache (EventSource would on its own after any network error).
  await page.evaluate(() => {
    window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true }));
    window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true }));
  });
  const banner = page.getByTestId('banner-session-expired');
  await expect(banner).toBeVisible();
  await expect(banner).toContainText('login URL');
  await expect(page.locator('body')).toHaveAttribute('data-live-state', 'ended');
});

// devcluster stops its kube-apiserver on SIGUSR1 and starts it on SIGUSR2.
function devclusterPID(): number {
  const dir = process.env.DEVCLUSTER_DIR;
  if (!dir) throw new Error('DEVCLUSTER_DIR is not set');
  return JSON.parse(fs.readFileSync(path.join(dir, 'ready.json'), 'utf8')).pid;
}

test('a lost watch on the API server shows a stale-data banner until it recovers', async ({ page, newContext }) => {
  test.setTimeout(120_000);
  await page.goto('/csrs');
  await waitForStream(page);
  const mark = await markPage(page);
  const stale = page.getByTestId('banner-stale');
  await expect(stale).toHaveCount(0);

  const pid = devclusterPID();
  let restarted = false;
  process.kill(pid, 'SIGUSR1');
  try {
    await expect(stale).toBeVisible({ timeout: 30_000 });
    await expect(stale).toContainText(/Data as of \d\d:\d\d:\d\d/);
    process.kill(pid, 'SIGUSR2');
    restarted = true;
    // The informers re-list with backoff; then the banner goes away by itself.
    await expect(stale).toHaveCount(0, { timeout: 60_000 });
    await notReloaded(page, mark);
  } finally {
    if (!restarted) process.kill(pid, 'SIGUSR2');
  }

  // The other console (read-only) lost its watch too: let the next tests find it
  // recovered.
  const ctx = await newContext({ baseURL: consoleURL('readonly') });
  const other = await ctx.newPage();
  await signIn(other, 'readonly');
  await other.goto('/csrs');
  await expect(other.getByTestId('banner-stale')).toHaveCount(0, { timeout: 60_000 });
});
