// Long lists are paged on the server (100 rows a page): the real-world CRDs
// are over 100. The pager's links work through htmx and as plain links; the
// count line counts every page.
import { expect, signIn, test } from './support/fixtures';
import { listCount, rowNames } from './support/pages';

const PAGE_SIZE = 100;

test('/crds pages through htmx: next, a numbered page, previous', async ({ page }) => {
  await page.goto('/crds');
  const { total } = await listCount(page);
  expect(total, 'the devcluster holds the real-world CRDs (over one page)').toBeGreaterThan(PAGE_SIZE);
  const pages = Math.ceil(total / PAGE_SIZE);
  const pager = page.getByTestId('pager');
  await expect(pager).toHaveAttribute('data-pages', String(pages));
  await expect(page.getByTestId('page-range')).toContainText(`rows 1–${PAGE_SIZE} on page 1 of ${pages}`);
  const first = await rowNames(page);
  expect(first).toHaveLength(PAGE_SIZE);

  await page.evaluate(() => { (window as any).__e2eSamePage = true; });
  await page.getByTestId('page-next').click();
  await expect(page.getByTestId('page-current')).toHaveText('2');
  await expect.poll(() => new URL(page.url()).searchParams.get('page')).toBe('2');
  const second = await rowNames(page);
  expect(second.length).toBe(Math.min(PAGE_SIZE, total - PAGE_SIZE));
  expect(second[0] > first[first.length - 1], 'page 2 continues the name order').toBe(true);
  expect(await page.evaluate(() => (window as any).__e2eSamePage), 'paging swaps the table without a reload').toBe(true);
  expect(await listCount(page)).toEqual({ shown: total, total });

  await page.getByTestId('page-prev').click();
  await expect(page.getByTestId('page-current')).toHaveText('1');
  expect(await rowNames(page)).toEqual(first);

  // Sorting starts again on the first page.
  await page.getByTestId('page-next').click();
  await expect(page.getByTestId('page-current')).toHaveText('2');
  await page.locator('#list-table thead th[data-column]').first().locator('a').click(); // the name column, after the tick column
  await expect(page.getByTestId('page-current')).toHaveText('1');
  await expect.poll(() => new URL(page.url()).searchParams.get('dir')).toBe('desc');
});

test('/crds pages with JavaScript disabled', async ({ newContext }) => {
  const page = await (await newContext({ javaScriptEnabled: false })).newPage();
  await signIn(page, 'admin');
  // Every CRD name has a dot: the filter keeps them all, over one page.
  await page.goto('/crds?q=.');
  const { shown } = await listCount(page);
  expect(shown).toBeGreaterThan(PAGE_SIZE);
  const first = await rowNames(page);
  await Promise.all([page.waitForURL((u) => u.searchParams.get('page') === '2'), page.getByTestId('page-next').click()]);
  expect(new URL(page.url()).searchParams.get('q'), 'the filter is kept').toBe('.');
  const second = await rowNames(page);
  expect(second.length).toBe(Math.min(PAGE_SIZE, shown - PAGE_SIZE));
  for (const n of second) expect(first).not.toContain(n);
});

test('a large CRD page loads its YAML only when it is opened', async ({ page }) => {
  const name = 'workflows.argoproj.io'; // a real CRD whose YAML is megabytes
  await page.goto(`/crds/${name}`);
  await expect(page.getByTestId('yaml')).toHaveCount(0);
  const summary = page.getByTestId('yaml-summary');
  await expect(summary).toContainText('MiB');
  const loaded = page.waitForResponse((r) => r.url().endsWith(`/crds/${name}/yaml`) && r.request().headers()['hx-request'] === 'true');
  await summary.click();
  expect((await loaded).status()).toBe(200);
  await expect(page.getByTestId('yaml')).toContainText(`name: ${name}`);
});

test('a large CRD page links to its YAML without JavaScript', async ({ newContext }) => {
  const page = await (await newContext({ javaScriptEnabled: false })).newPage();
  await signIn(page, 'admin');
  const name = 'workflows.argoproj.io';
  await page.goto(`/crds/${name}`);
  const href = await page.getByTestId('yaml-link').getAttribute('href');
  expect(href).toBe(`/crds/${name}/yaml`);
  const res = await page.request.get(href!);
  expect(res.status()).toBe(200);
  expect(res.headers()['content-type']).toContain('text/plain');
  expect(await res.text()).toContain(`name: ${name}`);
});
