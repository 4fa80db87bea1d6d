// The CSR queue's live rows are rendered once on the server for every open
// queue and put in place by the page: a changed row is swapped, a decided one
// leaves the Pending tab and the tab counts follow, all without fetching the
// view again. And one sign-in gets live updates in at most 12 tabs: the next
// one says so instead of failing silently.
import http from 'node:http';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { SCREENSHOTS_DIR } from './support/env';
import { consoleURL, expect, test } from './support/fixtures';
import { call, createCSR, deleteCSR } from './support/kube';

const CSR_API = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const SIGNER = 'example.com/clusterdesk-e2e-live'; // no signer issues it: approved stays "approved"

async function waitForStream(page: Page) {
  await expect(page.locator('body'), 'the page joined the event stream').toHaveAttribute('data-live-state', 'connected');
}

// changeCSR reads a CSR, lets change edit it and writes it back (to the
// subresource, if given) as the devcluster admin.
async function changeCSR(name: string, change: (o: any) => void, subresource = '') {
  const got = await call('GET', `${CSR_API}/${name}`);
  expect(got.status).toBe(200);
  change(got.json);
  const put = await call('PUT', `${CSR_API}/${name}${subresource}`, got.json);
  expect(put.status, JSON.stringify(put.json).slice(0, 300)).toBe(200);
}

test('the CSR queue swaps live rows in place and follows the tab counts without fetching its view', async ({ page }) => {
  const name = `e2e-live-rows-${Date.now().toString(36)}`;
  await createCSR(name, SIGNER);
  try {
    const row = page.locator(`[id="row-csrs-${name}"]`);
    await expect.poll(async () => {
      await page.goto('/csrs?state=pending');
      return row.count();
    }, { message: `the Pending tab lists ${name}`, timeout: 15_000 }).toBe(1);
    await waitForStream(page);
    const pending = page.getByTestId('tab-pending').getByTestId('tab-count');
    const approved = page.getByTestId('tab-approved').getByTestId('tab-count');
    const [p0, a0] = [Number(await pending.textContent()), Number(await approved.textContent())];
    // Every request for the queue's view from now on is a refetch.
    const fetches: string[] = [];
    page.on('request', (r) => { if (new URL(r.url()).pathname === '/csrs') fetches.push(r.url()); });
    await row.evaluate((el) => { (el as HTMLElement).dataset.e2eOld = '1'; });

    // A change that keeps it pending: the row is replaced where it is.
    await changeCSR(name, (o) => { o.metadata.annotations = { 'e2e/note': 'changed' }; });
    await expect(page.locator(`[id="row-csrs-${name}"]:not([data-e2e-old])`)).toHaveCount(1, { timeout: 5_000 });
    await expect(row.getByTestId('row-select')).toHaveCount(1);

    // Approved: it leaves the Pending tab, and the counts follow.
    await changeCSR(name, (o) => {
      o.status.conditions = [{ type: 'Approved', status: 'True', reason: 'E2E', message: 'approved by the live test' }];
    }, '/approval');
    await expect(row).toHaveCount(0, { timeout: 5_000 });
    await expect(pending).toHaveText(String(p0 - 1));
    await expect(approved).toHaveText(String(a0 + 1));
    await expect(page.getByTestId('list-count')).toContainText(`Showing ${p0 - 1} of`);
    expect(fetches, 'the queue fetched its view instead of using the rows it was sent').toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'live-csr-queue-after-approval.png') });
  } finally {
    await deleteCSR(name);
  }
});

test('a tab over the per-session limit says to close other tabs', async ({ page, context }) => {
  await page.goto('/');
  await waitForStream(page); // this tab holds one stream
  const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
  const base = new URL(consoleURL('admin'));
  const url = (await page.locator('body').getAttribute('data-live-url'))!;
  // Eleven more streams of the same sign-in, as eleven more tabs would hold.
  const streams: http.ClientRequest[] = [];
  try {
    for (let i = 0; i < 11; i++) {
      await new Promise<void>((resolve, reject) => {
        const req = http.get({ host: base.hostname, port: base.port, path: url, headers: { Cookie: cookie, Accept: 'text/event-stream' } }, (res) => {
          res.once('data', (d: Buffer) => (d.toString().includes('event: hello') ? resolve() : reject(new Error(`stream ${i}: ${d}`))));
        });
        req.on('error', reject);
        streams.push(req);
      });
    }
    const tab = await context.newPage();
    await tab.goto('/csrs');
    await expect(tab.getByTestId('banner-too-many-streams')).toContainText('Close the tabs you no longer need');
    await expect(tab.locator('body')).toHaveAttribute('data-live-state', 'ended');
    await tab.screenshot({ path: path.join(SCREENSHOTS_DIR, 'live-too-many-streams.png') });
    await tab.close();
  } finally {
    for (const s of streams) s.destroy();
  }
});

test('a detail page says when its object changed, then when it was deleted', async ({ page }) => {
  const name = `e2e-live-detail-${Date.now().toString(36)}`;
  await createCSR(name, SIGNER);
  try {
    await expect.poll(async () => (await page.goto(`/csrs/${name}`))!.status(), { timeout: 15_000 }).toBe(200);
    await waitForStream(page);
    const notice = page.getByTestId('live-notice');
    await expect(notice).toBeHidden();
    await changeCSR(name, (o) => { o.metadata.annotations = { 'e2e/note': 'changed' }; });
    await expect(notice.locator('[data-live-notice="changed"]')).toBeVisible({ timeout: 5_000 });
    await expect(notice.getByTestId('live-reload')).toHaveAttribute('href', `/csrs/${name}`);
  } finally {
    await deleteCSR(name);
  }
  await expect(page.getByTestId('live-notice').locator('[data-live-notice="removed"]')).toBeVisible({ timeout: 5_000 });
});
