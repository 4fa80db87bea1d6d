// Keyboard-only use: Tab and Enter reach every list from the navigation and a
// detail page from each list, with a visible focus ring on the way; the
// shortcuts (? / s g) do what the ? dialog says.
import type { Page } from '@playwright/test';
import { KINDS } from './support/env';
import { expect, test } from './support/fixtures';
import { openList } from './support/pages';

// More Tab presses than any page has controls before its first table row (the
// CSR queue's filters, bulk form and tabs come first).
const MAX_TABS = 80;

/** Presses Tab until the focused element matches selector; fails after MAX_TABS. */
async function tabTo(page: Page, selector: string, what: string) {
  for (let i = 0; i < MAX_TABS; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((sel) => !!document.activeElement?.matches(sel), selector)) return;
  }
  throw new Error(`${MAX_TABS} Tab presses did not reach ${what} (${selector}) on ${page.url()}`);
}

/** The focused element shows a ring: an outline at least 2px wide, not 'none'. */
async function expectFocusRing(page: Page, what: string) {
  const ring = await page.evaluate(() => {
    const el = document.activeElement as HTMLElement;
    const s = getComputedStyle(el);
    return { style: s.outlineStyle, width: parseFloat(s.outlineWidth), visible: el.matches(':focus-visible') };
  });
  expect(ring.visible, `${what} is :focus-visible after a key press`).toBe(true);
  expect(ring.style, `${what} has an outline`).not.toBe('none');
  expect(ring.width, `${what}'s outline width`).toBeGreaterThanOrEqual(2);
}

for (const kind of KINDS) {
  test(`Tab and Enter: home → /${kind} → a detail page`, async ({ page }) => {
    await page.goto('/');
    await expect(page.getByTestId('home-kind-csrs')).toBeVisible();

    const navLink = `[data-testid="nav"] a[href="/${kind}"]`;
    await tabTo(page, navLink, `the ${kind} link in the navigation`);
    await expectFocusRing(page, `the ${kind} nav link`);
    await Promise.all([page.waitForURL((u) => u.pathname === `/${kind}`), page.keyboard.press('Enter')]);
    await expect(page.getByTestId('list-row').first()).toBeVisible();

    // The skip link leads past the top bar and the navigation into the page.
    await page.keyboard.press('Tab');
    await expect(page.getByRole('link', { name: 'Skip to content' })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(page.locator('main#main')).toBeFocused();

    const rowLink = '[data-testid="list-row"] th[scope=row] a';
    await tabTo(page, rowLink, `a row of /${kind}`);
    await expectFocusRing(page, `a row link of /${kind}`);
    const href = await page.evaluate(() => document.activeElement!.getAttribute('href'));
    await Promise.all([page.waitForURL((u) => decodeURIComponent(u.pathname) === decodeURIComponent(href!)), page.keyboard.press('Enter')]);
    await expect(page.getByTestId('detail-name')).toBeVisible();
  });
}

test('? lists the shortcuts in a dialog; Escape closes it', async ({ page }) => {
  await page.goto('/');
  const dialog = page.getByTestId('shortcuts-dialog');
  await expect(dialog).toBeHidden();
  await page.keyboard.press('?');
  await expect(dialog).toBeVisible();
  for (const text of ['Search objects by name', 'Filter the list', 'FlowSchemas', 'Approve the ticked requests']) {
    await expect(dialog).toContainText(text);
  }
  // Focus is inside the modal dialog.
  expect(await page.evaluate(() => !!document.activeElement?.closest('dialog'))).toBe(true);
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();

  // The top bar's button opens it too, for mouse users.
  await page.getByTestId('shortcuts-open').click();
  await expect(dialog).toBeVisible();
  await page.getByTestId('shortcuts-close').click();
  await expect(dialog).toBeHidden();
});

test('g then a letter goes to a page; on the CSR queue "g d" is not "deny"', async ({ page }) => {
  await page.goto('/');
  await page.keyboard.press('g');
  await Promise.all([page.waitForURL((u) => u.pathname === '/flowschemas'), page.keyboard.press('f')]);
  await page.keyboard.press('g');
  await Promise.all([page.waitForURL((u) => u.pathname === '/csrs'), page.keyboard.press('c')]);
  await expect(page.getByTestId('list-row').first()).toBeVisible();
  // Would the queue see the "d", it would ask to deny (and Playwright would
  // dismiss the confirmation); the page must go to the CSI drivers instead.
  let asked = '';
  page.on('dialog', (d) => { asked = d.message(); void d.dismiss(); });
  await page.keyboard.press('g');
  await Promise.all([page.waitForURL((u) => u.pathname === '/csidrivers'), page.keyboard.press('d')]);
  expect(asked, 'no confirmation was asked').toBe('');
  await page.keyboard.press('g');
  await Promise.all([page.waitForURL((u) => u.pathname === '/'), page.keyboard.press('h')]);
});

test('/ focuses the list filter; s and Ctrl K the global search, which finds by name', async ({ page }) => {
  const rows = await openList(page, 'flowschemas');
  const name = rows[rows.length - 1]!.name;

  await page.keyboard.press('/');
  await expect(page.getByTestId('filter')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('filter')).not.toBeFocused();

  await page.keyboard.press('s');
  const search = page.getByTestId('search');
  await expect(search).toBeFocused();
  await expect(search, 'the "s" is not typed into the box').toHaveValue('');
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+k');
  await expect(search).toBeFocused();

  await search.fill(name);
  await Promise.all([page.waitForURL((u) => u.pathname === '/search'), page.keyboard.press('Enter')]);
  expect(new URL(page.url()).searchParams.get('q')).toBe(name);
  const hit = page.getByTestId('search-group-flowschemas').getByTestId('search-hit').first();
  await expect(hit, 'the exact name comes first').toHaveText(name);
  await expect(search).toHaveValue(name);

  // Without a filter on the page, / goes to the search box.
  await page.keyboard.press('/');
  await expect(search).toBeFocused();
});
