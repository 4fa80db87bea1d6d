// A retry storm (many pending requests with one signer, subject and
// requester) is one row of the CSR queue. Live, a growing storm updates that
// row's count; by keyboard alone, j reaches the row, a opens the preview of
// "approve the newest, deny the rest" (each request by name and UID), and
// Enter confirms; the API server then holds one approval and the denials.
import path from 'node:path';
import type { Page } from '@playwright/test';
import { SCREENSHOTS_DIR } from './support/env';
import { expect, test } from './support/fixtures';
import { call, createCSR, deleteCSR } from './support/kube';

const CSR_API = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
// No signer issues for it, so an approval stays an approval to check.
const SIGNER = 'example.com/clusterdesk-e2e-storm';
const STORM = 24;

async function waitForStream(page: Page) {
  await expect(page.locator('body'), 'the page joined the event stream').toHaveAttribute('data-live-state', 'connected');
}

async function conditions(name: string): Promise<string> {
  const res = await call('GET', `${CSR_API}/${name}`);
  expect(res.status).toBe(200);
  return (res.json.status?.conditions ?? []).map((c: any) => c.type).join(',');
}

test('a CSR storm is one row that counts live, decided by keyboard through its preview', async ({ page }) => {
  const stamp = Date.now().toString(36);
  const cn = `e2e-storm-${stamp}`;
  const names: string[] = [];
  try {
    // Sequential, so creation order is name order (the storm's tie-break).
    for (let i = 0; i < STORM; i++) {
      const name = `${cn}-${String(i).padStart(3, '0')}`;
      await createCSR(name, SIGNER, cn);
      names.push(name);
    }
    const group = page.getByTestId('group-row');
    await expect.poll(async () => {
      await page.goto(`/csrs?q=${cn}`);
      return group.getByTestId('group-count').textContent().catch(() => '');
    }, { message: 'the queue shows the storm as one row', timeout: 15_000 }).toBe(String(STORM));
    await expect(page.getByTestId('list-row')).toHaveCount(0);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'csr-storm-queue.png') });

    // Live, in the unfiltered queue: one more request swaps the group row in
    // place with its new count (the table is not fetched again: a mark on it
    // stays), rather than adding a row.
    await page.goto('/csrs');
    await waitForStream(page);
    const ours = page.locator(`[data-testid="group-row"]:has-text("${cn}")`);
    await expect(ours.getByTestId('group-count')).toHaveText(String(STORM));
    await page.locator('#list-table').evaluate((el) => el.setAttribute('data-e2e-mark', ''));
    const more = `${cn}-${String(STORM).padStart(3, '0')}`;
    await createCSR(more, SIGNER, cn);
    names.push(more);
    await expect(ours.getByTestId('group-count')).toHaveText(String(STORM + 1), { timeout: 15_000 });
    await expect(ours).toHaveCount(1);
    await expect(page.locator(`[data-testid="list-row"][data-name^="${cn}"]`)).toHaveCount(0);
    await expect(page.locator('#list-table'), 'the view was not fetched again').toHaveAttribute('data-e2e-mark', '');

    // Filtered to the storm, by keyboard.
    await page.goto(`/csrs?q=${cn}`);

    // Keyboard: j makes the group row current, a opens the preview.
    await page.keyboard.press('j');
    await expect(group).toHaveAttribute('data-current', '');
    await Promise.all([page.waitForURL(/\/csrs\/groups\/s-[0-9a-f]{12}\?action=approve-newest/), page.keyboard.press('a')]);
    const items = page.getByTestId('group-item');
    await expect(items).toHaveCount(STORM + 1);
    await expect(items.first()).toHaveAttribute('data-name', more);
    await expect(items.first()).toHaveAttribute('data-approve', 'true');
    await expect(page.locator('[data-testid="group-item"][data-approve="false"]')).toHaveCount(STORM);
    const uid = (await call('GET', `${CSR_API}/${more}`)).json.metadata.uid;
    await expect(items.first()).toHaveAttribute('data-uid', uid);
    await expect(page.getByTestId('group-summary')).toContainText(`approve 1, deny ${STORM}`);
    await expect(page.getByTestId('group-confirm')).toBeFocused();

    await Promise.all([page.waitForURL((u) => u.pathname.endsWith('/decide')), page.keyboard.press('Enter')]);
    await expect(page.getByTestId('bulk-summary')).toHaveText(`Decided ${STORM + 1} of ${STORM + 1}`);
    await expect(page.locator('[data-testid="bulk-result"][data-ok="true"]')).toHaveCount(STORM + 1);

    // On the API server: the newest approved, every other one denied.
    expect(await conditions(more)).toBe('Approved');
    for (const n of names.slice(0, STORM)) expect(await conditions(n), n).toBe('Denied');
  } finally {
    await Promise.all(names.map((n) => deleteCSR(n)));
  }
});
