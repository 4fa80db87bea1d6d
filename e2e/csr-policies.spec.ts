// A CSR's page shows what each approval policy naming its signer would do
// (shadow mode), loaded after the page; the devcluster seeds two demo
// policies with their CRD.
import path from 'node:path';
import { SCREENSHOTS_DIR } from './support/env';
import { expect, test } from './support/fixtures';

test('a kubelet-serving CSR\'s page shows the demo policy\'s verdict, and the policy opens', async ({ page }) => {
  await page.goto('/csrs/demo-worker-1-serving');
  const panel = page.getByTestId('csr-policies');
  await expect(panel).toBeVisible();
  await expect(page.getByTestId('csr-policies-placeholder')).toHaveCount(0);
  const policy = panel.locator('[data-testid="csr-policy"][data-policy="kubelet-serving-own-addresses"]');
  // worker-1 is no Node of the devcluster: the policy's `node != null` is false.
  await expect(policy).toContainText('does not decide');
  await expect(panel.getByTestId('csr-policies-note')).toContainText('Shadow mode');
  await panel.screenshot({ path: path.join(SCREENSHOTS_DIR, 'csr-policies-panel.png') });
  await policy.getByRole('link', { name: 'kubelet-serving-own-addresses' }).click();
  await expect(page.getByTestId('detail-name')).toHaveText('kubelet-serving-own-addresses');
});
