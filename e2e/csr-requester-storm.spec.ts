// A requester storm (automation gone wrong: one service account asking one
// signer for a new subject on every retry) is one row of the CSR queue that
// says how many subjects its requests name. It offers "deny all", not
// "approve the newest" (one certificate among many different ones: the a key
// says so instead of opening a preview); its preview lists each request with
// its own subject, and the API server then holds a denial on each.
import path from 'node:path';
import { SCREENSHOTS_DIR } from './support/env';
import { expect, test } from './support/fixtures';
import { call, createCSR, deleteCSR } from './support/kube';

const CSR_API = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const SIGNER = 'example.com/clusterdesk-e2e-requester-storm';
const COUNT = 12; // above csrqueue.RequesterStormMin (10)

test('a requester storm is one row, denied through its preview that names every subject', async ({ page }) => {
  const stamp = Date.now().toString(36);
  // The admin impersonates a service account no other test uses (as a
  // superuser: only the requester's name matters to the queue).
  const requester = `system:serviceaccount:e2e-runaway:issuer-${stamp}`;
  const as = { user: requester, groups: ['system:masters', 'system:serviceaccounts', 'system:authenticated'] };
  const names: string[] = [];
  try {
    for (let i = 0; i < COUNT; i++) {
      const name = `e2e-rstorm-${stamp}-${String(i).padStart(2, '0')}`;
      await createCSR(name, SIGNER, `e2e-rstorm-svc-${stamp}-${i}`, [], as);
      names.push(name);
    }
    const group = page.getByTestId('group-row');
    await expect.poll(async () => {
      await page.goto(`/csrs?requester=${encodeURIComponent(requester)}`);
      return group.getByTestId('group-count').textContent().catch(() => '');
    }, { message: 'the queue shows the requester storm as one row', timeout: 15_000 }).toBe(String(COUNT));
    await expect(page.getByTestId('list-row')).toHaveCount(0);
    await expect(group.getByTestId('row-subject')).toHaveText(`${COUNT} different subjects`);
    await expect(group.getByTestId('group-approve-newest')).toHaveCount(0);
    await expect(group.getByTestId('group-deny-all')).toBeVisible();
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'csr-requester-storm-queue.png') });

    // Keyboard: a on the row says why there is no "approve the newest".
    await page.keyboard.press('j');
    await expect(group).toHaveAttribute('data-current', '');
    await page.keyboard.press('a');
    await expect(page.getByText('These requests name different subjects')).toBeVisible();
    expect(new URL(page.url()).pathname).toBe('/csrs');

    // The group's view: every request its own row, under the banner.
    await group.getByTestId('group-link').click();
    await expect(page.getByTestId('list-row')).toHaveCount(COUNT);
    await expect(page.getByTestId('group-subjects')).toContainText(`${COUNT} different subjects`);

    await Promise.all([page.waitForURL(/\/csrs\/groups\/r-[0-9a-f]{12}\?action=deny-all/), page.getByTestId('group-banner').getByTestId('group-deny-all').click()]);
    const items = page.getByTestId('group-item');
    await expect(items).toHaveCount(COUNT);
    await expect(page.locator('[data-testid="group-item"][data-approve="true"]')).toHaveCount(0);
    await expect(items.first().getByTestId('group-item-subject')).toContainText(`e2e-rstorm-svc-${stamp}-0`);
    await expect(page.getByTestId('group-summary')).toContainText(`deny ${COUNT}`);
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'csr-requester-storm-preview.png'), fullPage: true });
    await Promise.all([page.waitForURL((u) => u.pathname.endsWith('/decide')), page.getByTestId('group-confirm').click()]);
    await expect(page.getByTestId('bulk-summary')).toHaveText(`Decided ${COUNT} of ${COUNT}`);

    for (const n of names) {
      const res = await call('GET', `${CSR_API}/${n}`);
      expect((res.json.status?.conditions ?? []).map((c: any) => c.type).join(','), n).toBe('Denied');
      expect(res.json.spec.username).toBe(requester);
    }
  } finally {
    await Promise.all(names.map((n) => deleteCSR(n)));
  }
});
