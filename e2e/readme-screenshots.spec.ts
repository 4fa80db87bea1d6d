// The README's screenshots: docs/screenshots/{home,csr-queue,flowschemas,detail}.png
// at 1280x800, taken against the seeded demo cluster in the light theme. They
// are committed; a run rewrites them (ages and counts in them change, which is fine).
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { REPO_ROOT } from './support/env';
import { expect, test } from './support/fixtures';
import { openList, rows } from './support/pages';

const OUT = path.join(REPO_ROOT, 'docs', 'screenshots');

async function shoot(page: Page, file: string) {
  // No blinking caret, no running transition, the mouse out of the way.
  await page.mouse.move(0, 0);
  await page.screenshot({ path: path.join(OUT, file), animations: 'disabled', caret: 'hide' });
  const size = fs.statSync(path.join(OUT, file)).size;
  expect(size, `${file} is a real picture`).toBeGreaterThan(10_000);
}

test('README screenshots: home, CSR queue, FlowSchemas, a detail page', async ({ page }) => {
  fs.mkdirSync(OUT, { recursive: true });
  expect(page.viewportSize()).toEqual({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'reduce' });

  await page.goto('/');
  await expect(page.getByTestId('home-kind-csrs').getByTestId('kind-count')).toHaveText(/\d/);
  await shoot(page, 'home.png');

  await openList(page, 'csrs');
  await shoot(page, 'csr-queue.png');

  await openList(page, 'flowschemas');
  await shoot(page, 'flowschemas.png');

  // The first FlowSchema in evaluation order: its rules and the priority level it uses.
  await rows(page).first().locator('th[scope=row] a').click();
  await expect(page.getByTestId('detail-name')).toBeVisible();
  await expect(page.getByTestId('yaml')).toBeVisible();
  await shoot(page, 'detail.png');
});
