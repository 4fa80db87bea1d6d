// Screenshots (1280x800) of the home, a list and a detail page for people to
// look at: e2e/artifacts/screenshots/*.png (git-ignored).
import path from 'node:path';
import { SCREENSHOTS_DIR } from './support/env';
import { expect, test } from './support/fixtures';
import { openList, rows } from './support/pages';

test('screenshots of home, a list page and a detail page', async ({ page }, info) => {
  expect(page.viewportSize()).toEqual({ width: 1280, height: 800 });
  const shoot = async (file: string) => {
    const out = path.join(SCREENSHOTS_DIR, file);
    await page.screenshot({ path: out });
    await info.attach(file, { path: out, contentType: 'image/png' });
  };

  await page.goto('/');
  await expect(page.getByTestId('home-kind-csrs')).toBeVisible();
  await shoot('home.png');

  await openList(page, 'csrs');
  await shoot('list-csrs.png');

  await rows(page).first().locator('th[scope=row] a').click();
  await expect(page.getByTestId('detail-name')).toBeVisible();
  await expect(page.getByTestId('yaml')).toBeVisible();
  await shoot('detail-csr.png');
});
