// The API server's load on the priority level and FlowSchema lists: a page
// opened while the console's sampler is idle shows at once and fills the load
// in; a row re-rendered by a live update keeps its load cells (issue 18).
import path from 'node:path';
import type { Page, TestInfo } from '@playwright/test';
import { SCREENSHOTS_DIR } from './support/env';
import { expect, test } from './support/fixtures';
import { call } from './support/kube';

const PL_API = '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations';
const FS_API = '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas';

async function shoot(page: Page, info: TestInfo, file: string) {
  const out = path.join(SCREENSHOTS_DIR, file);
  await page.screenshot({ path: out, fullPage: true });
  await info.attach(file, { path: out, contentType: 'image/png' });
}

async function cellCount(page: Page, rowSelector: string): Promise<number> {
  return page.locator(`${rowSelector} > th, ${rowSelector} > td`).count();
}

/** Sets the level's nominal shares with a read-modify-write (PUT), behind the console's back. */
async function setShares(name: string, shares: number) {
  const got = await call('GET', `${PL_API}/${name}`);
  expect(got.status).toBe(200);
  got.json.spec.limited.nominalConcurrencyShares = shares;
  const put = await call('PUT', `${PL_API}/${name}`, got.json);
  expect(put.status, JSON.stringify(put.json)).toBe(200);
}

test('live rows of the priority level list keep their load cells', async ({ page }, info) => {
  test.setTimeout(90_000);
  const name = `e2e-apfload-${Date.now().toString(36)}`;
  const created = await call('POST', PL_API, {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: 3, limitResponse: { type: 'Reject' } } },
  });
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  const fs = await call('POST', FS_API, {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'FlowSchema', metadata: { name },
    spec: { priorityLevelConfiguration: { name }, matchingPrecedence: 9000,
      rules: [{ subjects: [{ kind: 'User', user: { name: `${name}-nobody` } }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/nothing'] }] }] },
  });
  expect(fs.status, JSON.stringify(fs.json)).toBe(201);
  try {
    const row = `[id="row-prioritylevels-${name}"]`;
    const seats = page.locator(`${row} > td`).nth(-3);
    await expect.poll(async () => (await page.goto(`/prioritylevels?q=${name}`))!.status(), { timeout: 15_000 }).toBe(200);
    await expect(page.locator(row)).toBeVisible();
    // The load columns are there, and the load is filled in without a reload.
    await expect(page.getByRole('columnheader', { name: 'Seats in use / nominal' })).toBeVisible();
    const headers = await page.locator('#list-table thead th').count();
    await expect(seats).not.toHaveText('…', { timeout: 15_000 });
    expect(await cellCount(page, row)).toBe(headers);
    // The level is new: the sampler's latest read (every 10 s while someone
    // looks) may predate it, and then its cells say "—" until the next read.
    // Wait for a read that has it, so the live row below has load to show.
    await expect.poll(async () => {
      if (/\d/.test(await seats.innerText())) return true;
      await page.goto(`/prioritylevels?q=${name}`);
      await expect(seats).not.toHaveText('…', { timeout: 15_000 });
      return /\d/.test(await seats.innerText());
    }, { message: 'a read of /metrics that has the new level', timeout: 35_000, intervals: [2_000] }).toBe(true);
    await expect(page.locator('body')).toHaveAttribute('data-live-state', 'connected');
    await shoot(page, info, 'apf-load-prioritylevels.png');

    // A change behind the console's back re-renders the row live: its load cells stay.
    const mark = `m-${Math.random().toString(36).slice(2)}`;
    await page.evaluate((m) => { document.documentElement.dataset.e2eMark = m; }, mark);
    const before = await page.locator(row).innerHTML();
    await setShares(name, 4);
    await expect.poll(async () => page.locator(row).innerHTML(), { message: 'the row was re-rendered live', timeout: 10_000 }).not.toBe(before);
    expect(await page.evaluate(() => document.documentElement.dataset.e2eMark), 'the page was not reloaded').toBe(mark);
    expect(await cellCount(page, row), 'the live row has as many cells as the header').toBe(headers);
    await expect(page.locator(`${row} > td`).nth(-3)).toHaveText(/\d/);
    await shoot(page, info, 'apf-load-prioritylevels-live.png');

    // The FlowSchema list's Load column stays after a live change too.
    await page.goto(`/flowschemas?q=${name}`);
    const fsLoad = page.locator(`[data-name="${name}"] [data-testid="fs-load"]`);
    await expect(fsLoad).toContainText('no request matched', { timeout: 15_000 });
    await expect(page.locator('body')).toHaveAttribute('data-live-state', 'connected');
    const got = await call('GET', `${FS_API}/${name}`);
    got.json.spec.matchingPrecedence = 9001;
    expect((await call('PUT', `${FS_API}/${name}`, got.json)).status).toBe(200);
    await expect(page.locator(`[data-name="${name}"]`)).toContainText('9001', { timeout: 10_000 });
    await expect(fsLoad).toContainText('no request matched');
  } finally {
    await call('DELETE', `${FS_API}/${name}`);
    await call('DELETE', `${PL_API}/${name}`);
  }
});
