// The six list pages: rows, filtering (htmx and plain GET form), sorting.
import type { Page } from '@playwright/test';
import { KINDS } from './support/env';
import { expect, signIn, test } from './support/fixtures';
import { chooseFilterTerm, listCount, openList, readRows, rowNames, rows, table } from './support/pages';

/** Rows one list page shows (present.PageSize); the count line counts every page. */
const PAGE_SIZE = 100;

/** After filtering by term: fewer rows (when there were several), each containing term, the source row kept. */
async function expectFiltered(page: Page, term: string, kept: string, total: number) {
  const after = await readRows(page);
  const count = await listCount(page);
  expect(count.total).toBe(total);
  expect(after.length, 'a page shows the matches, at most a page of them').toBe(Math.min(count.shown, PAGE_SIZE));
  if (total > 1) expect(count.shown, `filtering by "${term}" should narrow the list`).toBeLessThan(total);
  expect(after.map((r) => r.name)).toContain(kept);
  for (const r of after) expect(r.text.toLowerCase(), `row ${r.name} shown for "${term}"`).toContain(term);
  await expect(page.getByTestId('filter')).toHaveValue(term);
}

const query = (page: Page, key: string) => new URL(page.url()).searchParams.get(key);

/** The next htmx (HX-Request) response for the filter q. */
const htmxResponse = (page: Page, q: string) => page.waitForResponse((r) =>
  new URL(r.url()).searchParams.get('q') === q && r.request().headers()['hx-request'] === 'true');

for (const kind of KINDS) {
  test.describe(`/${kind}`, () => {
    test('lists objects; the filter narrows rows through htmx', async ({ page }) => {
      const all = await openList(page, kind);
      const { total } = await listCount(page);
      expect(await listCount(page)).toEqual({ shown: total, total });
      expect(all.length, 'the first page').toBe(Math.min(total, PAGE_SIZE));
      for (const r of all) {
        expect(r.href.startsWith(`/${kind}/`) && decodeURIComponent(r.href.slice(kind.length + 2)), `row ${r.name} links to its page`).toBe(r.name);
      }

      const { term, from } = chooseFilterTerm(all);
      // A marker in the window survives an htmx swap but not a page load.
      await page.evaluate(() => { (window as any).__e2eSamePage = true; });
      const filter = page.getByTestId('filter');

      // Typing alone filters (debounced htmx request).
      let swapped = htmxResponse(page, term);
      await filter.fill(term);
      expect((await swapped).status()).toBe(200);
      await expect.poll(() => query(page, 'q'), { message: 'htmx pushes the filtered URL' }).toBe(term);
      if (all.length > 1) await expect(rows(page)).not.toHaveCount(all.length);
      await expectFiltered(page, term, from.name, total);

      // Enter submits the form, through htmx as well.
      swapped = htmxResponse(page, term);
      await filter.press('Enter');
      expect((await swapped).status()).toBe(200);
      await expectFiltered(page, term, from.name, total);
      expect(await page.evaluate(() => (window as any).__e2eSamePage), 'filtering swaps the table without reloading the page').toBe(true);

      // No match: the empty state, and the count says so.
      const none = 'zz-e2e-no-such-object';
      swapped = htmxResponse(page, none);
      await filter.fill(none);
      await swapped;
      await expect(page.getByTestId('list-empty')).toBeVisible();
      await expect(rows(page)).toHaveCount(0);
      await expect(page.getByTestId('list-count')).toHaveText(new RegExp(`Showing\\s+0\\s+of\\s+${total}`));
    });

    test('sorts by a column header', async ({ page }) => {
      const all = await openList(page, kind);
      const first = table(page).locator('thead th[data-column]').first(); // after the tick column, if any
      await expect(first, 'the list is sorted by name by default').toHaveAttribute('aria-sort', 'ascending');
      const asc = await rowNames(page);
      expect(asc).toEqual(all.map((r) => r.name));
      const { total } = await listCount(page);

      await first.locator('a').click();
      await expect(first).toHaveAttribute('aria-sort', 'descending');
      const desc = await rowNames(page);
      if (total <= PAGE_SIZE) {
        expect(desc).toEqual([...asc].reverse());
      } else {
        // Paged: the first page of the reverse order starts from the end.
        expect(desc).toHaveLength(PAGE_SIZE);
        expect(desc[0] > asc[asc.length - 1], 'descending starts past the ascending first page').toBe(true);
      }
      await expect.poll(() => query(page, 'dir')).toBe('desc');

      // Another sortable column takes over the sort.
      const other = table(page).locator('thead th:has(a)').nth(1);
      const key = await other.getAttribute('data-column');
      await other.locator('a').click();
      await expect(other).toHaveAttribute('aria-sort', /ascending|descending/);
      await expect(first).not.toHaveAttribute('aria-sort', /./);
      await expect.poll(() => query(page, 'sort')).toBe(key);
      if (total <= PAGE_SIZE) expect((await rowNames(page)).slice().sort()).toEqual(asc.slice().sort());
      else expect(await rowNames(page)).toHaveLength(PAGE_SIZE);
    });

    test('filters and sorts with JavaScript disabled', async ({ newContext }) => {
      const page = await (await newContext({ javaScriptEnabled: false })).newPage();
      await signIn(page, 'admin');
      const all = await openList(page, kind);
      const { total } = await listCount(page);
      const { term, from } = chooseFilterTerm(all);

      await page.getByTestId('filter').fill(term);
      await Promise.all([
        page.waitForURL((u) => u.searchParams.get('q') === term),
        page.getByTestId('filter').press('Enter'), // the plain GET form submits
      ]);
      await expectFiltered(page, term, from.name, total);

      // A header link is a plain link too; the filter is kept.
      const filtered = await rowNames(page);
      const first = table(page).locator('thead th[data-column]').first(); // after the tick column, if any
      await Promise.all([
        page.waitForURL((u) => u.searchParams.get('dir') === 'desc'),
        first.locator('a').click(),
      ]);
      await expect(first).toHaveAttribute('aria-sort', 'descending');
      expect(query(page, 'q')).toBe(term);
      if ((await listCount(page)).shown <= PAGE_SIZE) expect(await rowNames(page)).toEqual([...filtered].reverse());
    });
  });
}
