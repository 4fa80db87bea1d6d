// "Who approves this signer?": from the queue's link to the overview of every
// signer, to one signer's answer; and the CSR page's panel, which htmx loads
// after the page. Read from the devcluster's real RBAC as the admin.
import path from 'node:path';
import { SCREENSHOTS_DIR } from './support/env';
import { expect, test } from './support/fixtures';

test('from the queue to who approves each signer, and one signer\'s answer', async ({ page }) => {
  await page.goto('/csrs');
  await page.getByTestId('approvers-overview-link').click();
  await expect(page).toHaveURL(/\/csrs\/-\/approvers$/);
  const serving = page.locator('[data-testid="signer-row"][data-signer="kubernetes.io/kubelet-serving"]');
  await expect(serving.getByTestId('signer-only-admins')).toContainText('nobody is granted this one');
  // The seeded policy naming the signer, and whom it covers (issue 47, item 2).
  await expect(serving.locator('[data-testid="approver-policy"][data-policy="kubelet-serving-own-addresses"]'))
    .toContainText('Approve, covers every requester');
  const client = page.locator('[data-testid="signer-row"][data-signer="kubernetes.io/kube-apiserver-client"]');
  await expect(client).toContainText('granted this signer');
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'approvers-overview.png'), fullPage: true });

  await client.getByRole('link', { name: 'kubernetes.io/kube-apiserver-client' }).click();
  await expect(page.getByTestId('page-title')).toHaveText('Who approves kubernetes.io/kube-apiserver-client?');
  await expect(page.locator('[data-testid="approver"][data-kind="User"]', { hasText: 'approver' }).first()).toContainText('via clusterdesk:approver');
  await expect(page.getByTestId('approvers-only-admins')).toHaveCount(0);
});

test('a kubelet-serving CSR\'s page loads who approves its signer after itself', async ({ page }) => {
  await page.goto('/csrs/demo-worker-1-serving');
  const panel = page.getByTestId('approvers');
  await expect(panel).toBeVisible();
  await expect(page.getByTestId('approvers-placeholder')).toHaveCount(0);
  await expect(panel.getByTestId('approvers-only-admins')).toContainText('will stay pending');
  await expect(panel.locator('[data-testid="approver"]', { hasText: 'system:masters' })).toContainText('bypasses authorization');
  await panel.getByTestId('approvers-partial').locator('summary').click();
  await expect(panel.getByTestId('approvers-partial')).toContainText('holds update on certificatesigningrequests/approval');
  await panel.screenshot({ path: path.join(SCREENSHOTS_DIR, 'approvers-csr-panel.png') });
});

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false });
  test('the CSR page links the answer', async ({ page }) => {
    await page.goto('/csrs/demo-worker-1-serving');
    await page.getByTestId('approvers-link').getByRole('link').click();
    await expect(page.getByTestId('page-title')).toHaveText('Who approves kubernetes.io/kubelet-serving?');
  });
});
