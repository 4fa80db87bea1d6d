// The home page says first what needs attention (issue 30, point 5): the
// demo data's pending CSRs per signer, and kubelet-serving, which nobody is
// granted to approve in particular. Each entry links its filtered view. The
// auditor, who may not list ClusterRoles, is told why signers nobody
// approves are not shown, instead of being shown them.
import path from 'node:path';
import { SCREENSHOTS_DIR } from './support/env';
import { expect, test } from './support/fixtures';

const SERVING = 'kubernetes.io/kubelet-serving';

test('the home page shows what needs attention, each entry linking its filtered view', async ({ page }) => {
  await page.goto('/');
  const pending = page.getByTestId('attention-pending-csrs');
  await expect(pending).toContainText('pending CertificateSigningRequests');
  await expect(page.getByTestId('attention-unapproved-signers').getByTestId('attention-entry').filter({ hasText: SERVING })).toHaveCount(1);
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, `home-attention-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });

  await pending.getByRole('link', { name: SERVING }).click();
  await expect(page).toHaveURL((u) => u.pathname === '/csrs' && u.searchParams.get('signer') === SERVING && u.searchParams.get('state') === 'pending');
  const rows = page.locator('[data-csr-row]');
  await expect(rows.first()).toBeVisible();
  for (const text of await rows.allInnerTexts()) expect(text).toContain(SERVING);
});

test.describe('as the auditor', () => {
  test.use({ instance: 'token' });
  test('sees the items of what it may list, and why signers nobody approves are missing', async ({ page }) => {
    await page.goto('/');
    await expect(page.getByTestId('attention-pending-csrs')).toBeVisible();
    await expect(page.getByTestId('attention-unapproved-signers')).toHaveCount(0);
    await expect(page.getByTestId('attention-note').filter({ hasText: 'Signers nothing approves are not shown' })).toHaveCount(1);
  });
});
