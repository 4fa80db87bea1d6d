// The auditor's views in the --read-only console: the activity page lists a
// change another client made after the console started, filters on the server,
// links to the object's history with the diff between the observed versions,
// and exports the filtered view as CSV.
import fs from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { expect, test } from './support/fixtures';
import { call } from './support/kube';

test.use({ instance: 'readonly' });

const DRIVERS = '/apis/storage.k8s.io/v1/csidrivers';

test('read-only activity: filter, history with diff, CSV export', async ({ page }) => {
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

    // The filter is a plain GET form: tick the kind, type the manager, submit.
    const res = await page.goto('/activity');
    expect(res!.status()).toBe(200);
    await expect(page.getByTestId('activity-about')).toContainText('audit log is the authority');
    await expect(page.getByTestId('nav-activity')).toHaveAttribute('aria-current', 'page');
    await page.getByTestId('activity-kind-csidrivers').check();
    await page.getByTestId('activity-who').fill('e2e-relabeler');
    await page.getByTestId('activity-source').selectOption('watch');
    // The change reaches the console through its watch within moments.
    await expect(async () => {
      await page.getByTestId('activity-apply').click();
      await expect(page.getByTestId('activity-row').filter({ hasText: name })).toHaveCount(1, { timeout: 1_000 });
    }).toPass({ timeout: 15_000, intervals: [250, 500, 1000] });
    expect(new URL(page.url()).searchParams.getAll('kind')).toEqual(['csidrivers']);
    const row = page.getByTestId('activity-row').filter({ hasText: name });
    await expect(row.getByTestId('activity-who-cell')).toContainText('e2e-relabeler');
    await expect(row).toContainText('metadata.labels.e2e-audit');
    await expect(page.getByTestId('activity-row')).toHaveCount(1);

    // The object's history shows the diff between the two observed versions.
    await row.getByTestId('activity-history-link').click();
    await expect(page.getByTestId('page-title')).toContainText(name);
    const newest = page.getByTestId('history-entry').first();
    await expect(newest.getByTestId('history-manager')).toHaveText('e2e-relabeler');
    await expect(newest.locator('[data-testid="diff-line"][data-kind="added"]').filter({ hasText: 'e2e-audit: relabelled' })).toHaveCount(1);
    await expect(page.getByTestId('history-entry')).toHaveCount(2);

    // The export holds the filtered view.
    await page.goBack();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('activity-export-csv').click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^clusterdesk-activity-.*\.csv$/);
    const csv = fs.readFileSync((await download.path())!, 'utf8');
    const lines = csv.trim().split('\n');
    expect(lines[0]).toBe('time,kind,name,source,change,user,manager,operation,subresource,fields,resourceVersion,previousResourceVersion,diff');
    expect(csv).toContain(name);
    expect(csv).toContain('e2e-relabeler');
    expect(csv).not.toContain('e2e-creator,'); // filtered out: only the relabelling
  } finally {
    await call('DELETE', `${DRIVERS}/${name}`);
  }
});

/** axe finds no serious or critical violation, in the light and the dark scheme. */
async function expectAccessible(page: Page, what: string) {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    const results = await new AxeBuilder({ page }).exclude('[data-testid=activity-row]:nth-child(n+21)').analyze();
    const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
    expect(bad, `${what} (${colorScheme})`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: null });
}

test('activity page and an object history are accessible', async ({ page }) => {
  test.setTimeout(90_000);
  await page.goto('/activity?kind=flowschemas');
  await expect(page.getByTestId('activity-row').first()).toBeVisible();
  await expectAccessible(page, '/activity');
  await page.goto('/flowschemas/exempt/history');
  await expect(page.getByTestId('page-title')).toContainText('exempt');
  await expectAccessible(page, '/flowschemas/exempt/history');
});
