// The auditor's observed versions in the --read-only console (issue 44: one
// history stack; /activity was the in-memory activity view and now leads to
// the ledger's observed versions): a change another client made after the
// console started is listed, filtered on the server, links to the object's
// one history with the diff between the observed versions and the object's
// managedFields now, and the filtered view exports as CSV.
import fs from 'node:fs';
import { expectAccessible } from './support/axe';
import { expect, test } from './support/fixtures';
import { call } from './support/kube';

test.use({ instance: 'readonly' });

// Rows and history steps after the 20th: the same markup as the first ones.
const LATER_ROWS = ['[data-testid=ledger-row]:nth-child(n+21)', '[data-testid=ledger-step]:nth-child(n+21)'];

const DRIVERS = '/apis/storage.k8s.io/v1/csidrivers';

test('read-only observed versions: filter, history with diff, CSV export', async ({ page }) => {
  const name = `e2e-activity-${Date.now()}.example.com`;
  const created = await call('POST', `${DRIVERS}?fieldManager=e2e-creator`, {
    apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name }, spec: { attachRequired: false },
  });
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  try {
    const obj = created.json;
    obj.metadata.labels = { 'e2e-audit': 'relabelled' };
    const updated = await call('PUT', `${DRIVERS}/${name}?fieldManager=e2e-relabeler`, obj);
    expect(updated.status, JSON.stringify(updated.json)).toBe(200);

    // The old address leads to the ledger's observed versions.
    const res = await page.goto('/activity');
    expect(res!.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/ledger');
    expect(new URL(page.url()).searchParams.get('source')).toBe('watch');
    await expect(page.getByTestId('page-title')).toHaveText('Observed versions');
    await expect(page.locator('main')).toContainText('audit log is the authority');
    await expect(page.getByTestId('nav-ledger')).toHaveAttribute('aria-current', 'page');
    await expect(page.getByTestId('nav-activity')).toHaveCount(0);
    // The filter is a plain GET form: tick the kind, type the manager, submit.
    await page.getByTestId('ledger-kind-csidrivers').check();
    await page.getByTestId('ledger-manager-filter').fill('e2e-relabeler');
    await expect(page.getByTestId('ledger-source')).toHaveValue('watch');
    // The change reaches the ledger through the console's watch within moments.
    await expect(async () => {
      await page.getByTestId('ledger-apply').click();
      await expect(page.getByTestId('ledger-row').filter({ hasText: name })).toHaveCount(1, { timeout: 1_000 });
    }).toPass({ timeout: 15_000, intervals: [250, 500, 1000] });
    expect(new URL(page.url()).searchParams.getAll('kind')).toEqual(['csidrivers']);
    const row = page.getByTestId('ledger-row').filter({ hasText: name });
    await expect(row.getByTestId('ledger-manager')).toHaveText('e2e-relabeler');
    // Only the relabeller's versions (the ledger keeps earlier runs' too).
    for (const who of await page.getByTestId('ledger-manager').allTextContents()) expect(who).toBe('e2e-relabeler');

    // The object's one history shows each observed version once, the newest
    // with the diff from the one before; its managedFields now, the fields.
    await row.getByTestId('ledger-history-link').click();
    await expect(page.getByTestId('page-title')).toContainText(name);
    await expect(page.getByTestId('ledger-step')).toHaveCount(2);
    const newest = page.getByTestId('ledger-step').last();
    await expect(newest.getByTestId('ledger-step-manager')).toHaveText('e2e-relabeler');
    await expect(newest.locator('[data-testid="diff-line"][data-kind="added"]').filter({ hasText: 'e2e-audit: relabelled' })).toHaveCount(1);
    await expect(page.getByTestId('ledger-managers')).toContainText('metadata.labels.e2e-audit');
    await expect(page.getByTestId('ledger-managers')).toContainText('e2e-creator');

    // The export holds the filtered view.
    await page.goBack();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('ledger-export-csv').click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^clusterdesk-ledger-.*\.csv$/);
    const csv = fs.readFileSync((await download.path())!, 'utf8');
    const lines = csv.trim().split('\n');
    expect(lines[0]).toMatch(/^time,source,id,.*,diff,resourceVersion,manager$/);
    expect(csv).toContain(name);
    expect(csv).toContain('e2e-relabeler');
    expect(csv).not.toContain(',e2e-creator'); // filtered out: only the relabelling
  } finally {
    await call('DELETE', `${DRIVERS}/${name}`);
  }
});

test('observed versions and an object history are accessible', async ({ page }) => {
  test.setTimeout(150_000); // axe over two long pages, four times, on a busy machine
  await page.goto('/activity?kind=flowschemas');
  await expect(page.getByTestId('ledger-filter')).toBeVisible();
  await expectAccessible(page, '/ledger?source=watch', LATER_ROWS);
  await page.goto('/flowschemas/exempt/history');
  await expect(page.getByTestId('page-title')).toContainText('exempt');
  await expect(page.getByTestId('ledger-managers')).toBeVisible();
  await expectAccessible(page, '/ledger/flowschemas/exempt', LATER_ROWS);
});
