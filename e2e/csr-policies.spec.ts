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
  await policy.getByTestId('csr-policy-agreement').click();
  await expect(page.getByTestId('page-title')).toHaveText('Policy kubelet-serving-own-addresses against past decisions');
  await expect(page.getByTestId('agreement-note')).toContainText('Compared with the');
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'csr-policy-agreement.png'), fullPage: true });
  await page.goBack();
  await policy.getByRole('link', { name: 'kubelet-serving-own-addresses' }).click();
  // The policy's page is the CSRApprovalPolicies kind's detail page.
  await expect(page).toHaveURL(/\/csrapprovalpolicies\/kubelet-serving-own-addresses$/);
  await expect(page.getByTestId('detail-name')).toHaveText('kubelet-serving-own-addresses');
});

test('the policies are a kind: listed with what they decide, each on its page with its CEL', async ({ page }) => {
  await page.goto('/csrapprovalpolicies');
  await expect(page.getByTestId('page-title')).toHaveText('CSRApprovalPolicies');
  const row = page.locator('tr[id="row-csrapprovalpolicies-kubelet-serving-own-addresses"]');
  await expect(row).toContainText('kubernetes.io/kubelet-serving');
  await expect(row).toContainText('Approve');
  await expect(row).toContainText('Runs');
  await expect(page.locator('tr[id="row-csrapprovalpolicies-deny-client-certificates-named-like-system-users"]')).toContainText('Deny');
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'csr-policy-list.png'), fullPage: true });
  await row.getByTestId('row-name').click();
  await expect(page.getByTestId('detail-name')).toHaveText('kubelet-serving-own-addresses');
  await expect(page.getByTestId('policy-expression')).toContainText('node');
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'csr-policy-detail.png'), fullPage: true });
  await page.getByRole('link', { name: 'Compare with past decisions' }).click();
  await expect(page.getByTestId('page-title')).toHaveText('Policy kubelet-serving-own-addresses against past decisions');
});

test('the editor refuses a policy whose CEL does not compile, at the expression\'s line', async ({ page }) => {
  const name = `e2e-broken-policy-${Date.now().toString(36)}`;
  const text = [
    'apiVersion: clusterdesk.io/v1alpha1',
    'kind: CSRApprovalPolicy',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    '  signerNames: [example.com/e2e-editor]',
    '  decision: Deny',
    '  reason: E2eEditor',
    '  expression: |',
    "    request.username != '' &&",
    '    request.nosuch()',
    '',
  ].join('\n');
  await page.goto('/csrapprovalpolicies/new');
  const code = page.getByTestId('editor-code');
  await expect(code).toBeVisible();
  // As typing or pasting would (not fill(): see edit.spec.ts's setText).
  await code.click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
  await page.getByTestId('editor-apply').click();
  const problem = page.getByTestId('editor-problem');
  await expect(problem.getByTestId('editor-problem-title')).toHaveText('The policy would not run');
  await expect(problem.getByTestId('editor-problem-message')).toContainText('nosuch');
  await expect(problem.getByTestId('editor-problem-line')).toHaveAttribute('data-line', '11');
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'csr-policy-editor-cel-error.png'), fullPage: true });
});
