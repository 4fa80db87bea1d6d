// Accessibility: axe-core runs on every page type, in the light and the dark
// colour scheme, and finds no serious or critical violation (contrast, names
// of controls, table headers, landmarks ...).
//
// One test per page type: it loads the page once and checks it in both
// schemes (emulateMedia switches prefers-color-scheme without a reload). The
// last test forces each theme with the top bar's toggle and checks contrast
// again, against the opposite system setting.
import type { Page } from '@playwright/test';
import { expectAccessible as expectAccessibleExcluding, expectContrast as expectContrastExcluding } from './support/axe';
import { KINDS } from './support/env';
import { expect, test } from './support/fixtures';
import { openList, rows } from './support/pages';

// axe on a page with a large table takes seconds per run on a loaded machine.
test.describe.configure({ timeout: 90_000 });

// Rows of a list after the first 20 are left out: they are the same markup as
// the first ones (support/axe.ts).
const LATER_ROWS = ['[data-testid=list-row]:nth-child(n+21)'];
const expectAccessible = (page: Page, what: string) => expectAccessibleExcluding(page, what, LATER_ROWS);
const expectContrast = (page: Page, what: string) => expectContrastExcluding(page, what, LATER_ROWS);

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
  await open(page, '/flowschemas/-/classify');
  await expectAccessible(page, '/flowschemas/-/classify');
  await open(page, '/flowschemas/-/classify?user=alice&groups=system%3Aauthenticated&kind=resource&verb=get&resource=pods&namespace=default');
  await expectAccessible(page, '/flowschemas/-/classify with a request');
});

test('FlowSchema form, new and with the API server\'s errors beside the fields', async ({ page }) => {
  await open(page, '/flowschemas/-/new');
  await expectAccessible(page, '/flowschemas/-/new');
  await page.getByTestId('fsform-name').fill('a11y-form');
  await page.getByTestId('fsform-precedence').fill('10001');
  await page.getByTestId('fsform-preview').click();
  await expect(page.locator('[data-testid="fsform-error"][data-field="precedence"]')).toBeVisible();
  await expectAccessible(page, '/flowschemas/-/new with errors');
});

test('who approves each signer, and one signer', async ({ page }) => {
  await open(page, '/csrs/-/approvers');
  await expect(page.getByTestId('signers')).toBeVisible();
  await expectAccessible(page, '/csrs/-/approvers');
  await open(page, '/csrs/-/approvers?signer=kubernetes.io%2Fkubelet-serving');
  await expect(page.getByTestId('approvers-only-admins')).toBeVisible();
  await expectAccessible(page, '/csrs/-/approvers?signer=kubernetes.io/kubelet-serving');
});

test('search results', async ({ page }) => {
  await open(page, '/search?q=system');
  await expect(page.getByTestId('search-hit').first()).toBeVisible();
  await expectAccessible(page, '/search?q=system');
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

test('the theme toggle: system → light → dark, kept across pages, each checked for contrast', async ({ page }) => {
  await open(page, '/csrs');
  const toggle = page.getByTestId('theme-toggle');
  const html = page.locator('html');
  const canvas = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await expect(toggle).toBeVisible();
  await expect(toggle).toHaveAttribute('data-theme-current', 'system');
  await expect(html).not.toHaveAttribute('data-theme', /./);

  // Forced light while the system is dark, forced dark while it is light:
  // the choice wins over the system setting.
  await page.emulateMedia({ colorScheme: 'dark' });
  await toggle.click();
  await expect(html).toHaveAttribute('data-theme', 'light');
  expect(await canvas()).toBe('rgb(255, 255, 255)');
  await expectContrast(page, '/csrs forced light under a dark system');

  await page.emulateMedia({ colorScheme: 'light' });
  await toggle.click();
  await expect(html).toHaveAttribute('data-theme', 'dark');
  expect(await canvas()).toBe('rgb(13, 17, 23)');
  await expectContrast(page, '/csrs forced dark under a light system');

  // Kept: another page starts dark before any script of the page's own runs.
  await open(page, '/flowschemas/-/classify');
  await expect(html).toHaveAttribute('data-theme', 'dark');
  expect(await canvas()).toBe('rgb(13, 17, 23)');
  await expect(toggle).toHaveAttribute('data-theme-current', 'dark');

  // And back to following the system.
  await toggle.click();
  await expect(html).not.toHaveAttribute('data-theme', /./);
  expect(await page.evaluate(() => localStorage.getItem('clusterdesk-theme'))).toBe('system');
  await page.emulateMedia({ colorScheme: null });
});
