// Token mode (--auth token): a person signs in by pasting a Kubernetes bearer
// token, and the console then acts with it. The fixture signs in as the
// devcluster's read-only `auditor`: it sees the data, the observed versions and their
// export, but no control that would change anything.
import fs from 'node:fs';
import { API_CLIENT_SIGNER } from './support/env';
import { expect, test } from './support/fixtures';
import { pendingCSR } from './support/csrs';
import { deleteCSR } from './support/kube';

test.use({ instance: 'token' });

test('token sign-in as the auditor: data, no edit controls, activity page and export', async ({ page }, info) => {
  await expect(page.getByTestId('user')).toHaveText('auditor');
  // No cookie the page's JavaScript can read holds the session or the token.
  expect(await page.evaluate(() => document.cookie)).not.toMatch(/session/);

  // Every kind is readable for the auditor...
  const list = await page.goto('/flowschemas');
  expect(list!.status()).toBe(200);
  await expect(page.getByTestId('banner-forbidden')).toHaveCount(0);
  await expect(page.locator('[data-testid="list-row"]').first()).toBeVisible();
  // No tick boxes or "Delete selected…" on a list: the auditor may delete nothing
  // (the CSIDriver list keeps the column for its live rows, hidden).
  await expect(page.getByRole('checkbox')).toHaveCount(0);
  await expect(page.getByTestId('bulk-delete')).toHaveCount(0);
  await page.goto('/csidrivers');
  await expect(page.locator('[data-testid="list-row"]').first()).toBeVisible();
  await expect(page.getByRole('checkbox')).toHaveCount(0);
  await expect(page.getByTestId('bulk-delete')).toHaveCount(0);
  const header = await page.locator('#list-table thead th:visible').count();
  await expect(page.locator('[data-testid="list-row"]').first().locator('> :visible')).toHaveCount(header);

  // ...but it may change nothing, so nothing is offered.
  const detail = await page.goto('/flowschemas/exempt');
  expect(detail!.status()).toBe(200);
  await expect(page.getByTestId('detail-name')).toHaveText('exempt');
  await expect(page.getByTestId('edit-link')).toHaveCount(0);
  await expect(page.getByTestId('delete-link')).toHaveCount(0);

  const { name, created } = await pendingCSR(page, info, 'e2e-token-auditor', API_CLIENT_SIGNER, true);
  try {
    const res = await page.goto(`/csrs/${name}`);
    expect(res!.status()).toBe(200);
    await expect(page.getByTestId('detail-status')).toHaveText('Pending');
    await expect(page.locator('form[action*="/approve"], form[action*="/deny"]')).toHaveCount(0);
  } finally {
    if (created) await deleteCSR(name);
  }

  // The auditor's view of recent changes (the ledger's observed versions,
  // where /activity leads), and its export as a download.
  const activity = await page.goto('/activity');
  expect(activity!.status()).toBe(200);
  await expect(page.getByTestId('ledger-filter')).toBeVisible();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('ledger-export-csv').click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/\.csv$/);
  const file = await download.path();
  const csv = fs.readFileSync(file!, 'utf8');
  expect(csv.split('\n')[0]).toMatch(/kind/i);
});

test('token sign-in refuses a bad token and logging out forgets the session', async ({ page }) => {
  await page.getByTestId('logout').getByRole('button').click();
  await expect(page.getByTestId('token-form')).toBeVisible();
  const home = await page.goto('/');
  expect(home!.status()).toBe(401);
  await expect(page.getByTestId('token-form')).toBeVisible();

  await page.getByTestId('token-input').fill('not-a-token-the-api-server-knows');
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/login') && r.request().method() === 'POST'),
    page.getByTestId('token-submit').click(),
  ]);
  expect(res.status()).toBe(401);
  await expect(page.getByTestId('login-message')).toContainText('did not accept');
});
