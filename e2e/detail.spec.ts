// Detail pages, opened from each list; unknown names are a 404 page.
import { KINDS } from './support/env';
import { expect, test } from './support/fixtures';
import { openList, rows } from './support/pages';

for (const kind of KINDS) {
  test(`/${kind}: the first row opens its detail page`, async ({ page }) => {
    await openList(page, kind);
    const link = rows(page).first().locator('th[scope=row] a');
    const name = (await link.textContent())!.trim();
    const [res] = await Promise.all([page.waitForResponse((r) => r.request().isNavigationRequest()), link.click()]);
    expect(res.status()).toBe(200);
    expect(decodeURIComponent(new URL(page.url()).pathname)).toBe(`/${kind}/${name}`);

    await expect(page.getByTestId('detail-name')).toHaveText(name);
    await expect(page.getByTestId('detail-status')).toBeVisible();
    await expect(page.getByTestId('detail-status')).toHaveText(/\S/);
    const yaml = page.getByTestId('yaml');
    await expect(yaml).toBeVisible();
    await expect(yaml).toContainText(name);
    await expect(yaml).toContainText(/^\s*kind: \w+/m);
    // The breadcrumb leads back to the list.
    await expect(page.getByTestId('breadcrumbs').locator(`a[href="/${kind}"]`)).toBeVisible();
  });
}

test('an unknown name or kind is a 404 page', async ({ page }) => {
  for (const path of [...KINDS.map((k) => `/${k}/zz-e2e-no-such-object`), '/no-such-kind', '/no-such-kind/x']) {
    const res = await page.goto(path);
    expect(res!.status(), `GET ${path}`).toBe(404);
    await expect(page.getByTestId('error-status')).toContainText('404');
    await expect(page.getByTestId('error-title')).toBeVisible();
    await expect(page.getByTestId('detail-name')).toHaveCount(0);
    await expect(page.getByTestId('nav'), 'a signed-in error page keeps the navigation').toBeVisible();
  }
});
