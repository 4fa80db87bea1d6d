// Why pending (issue 47): each pending row of the CSR queue says why no
// automation decided it (the "Why pending" column, its line as the cell's
// title), and the why= filter, chosen in the form, keeps the rows pending
// for that reason.
import path from 'node:path';
import { SCREENSHOTS_DIR } from './support/env';
import { expect, test } from './support/fixtures';
import { call, createCSR, deleteCSR } from './support/kube';

const POLICY_API = '/apis/clusterdesk.io/v1alpha1/csrapprovalpolicies';

test('the queue says why each request is pending and filters by the reason', async ({ page }) => {
  const stamp = Date.now().toString(36);
  const signer = `example.com/e2e-why-${stamp}`;
  const policy = `e2e-why-${stamp}`;
  const ok = `e2e-why-ok-${stamp}`;
  const other = `e2e-why-other-${stamp}`;
  try {
    const res = await call('POST', POLICY_API, {
      apiVersion: 'clusterdesk.io/v1alpha1', kind: 'CSRApprovalPolicy', metadata: { name: policy },
      spec: { signerNames: [signer], expression: 'request.subject.commonName.startsWith("e2e-why-ok") && request.keyBits > 0', decision: 'Approve', reason: 'E2eWhy' },
    });
    expect(res.status).toBe(201);
    for (const name of [ok, other]) await createCSR(name, signer);

    const cell = (name: string) => page.locator(`[data-testid="list-row"][data-name="${name}"] [data-column="why"]`);
    await expect.poll(async () => {
      await page.goto(`/csrs?signer=${encodeURIComponent(signer)}&state=pending`);
      return (await cell(other).textContent())?.trim();
    }, { message: 'the policy cache holds the policy', timeout: 20_000 }).toBe('no policy matches');
    await expect(cell(other)).toHaveAttribute('title', /clause 1 of 2 `request\.subject\.commonName\.startsWith\("e2e-why-ok"\)` is false/);
    // No approver runs on the devcluster: the policy would approve, nobody does.
    await expect(cell(ok)).toHaveText(/no approver installed/);
    await expect(cell(ok)).toHaveAttribute('title', new RegExp(`${policy} would approve it`));
    await page.setViewportSize({ width: 1400, height: 800 });
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'csr-why-column.png') });

    await page.getByTestId('filter-why').selectOption('ClauseFalse');
    await expect(page).toHaveURL(/why=ClauseFalse/);
    await expect(page.locator(`[data-testid="list-row"][data-name="${other}"]`)).toHaveCount(1);
    await expect(page.locator(`[data-testid="list-row"][data-name="${ok}"]`)).toHaveCount(0);
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'csr-why-filter.png') });
  } finally {
    for (const name of [ok, other]) await deleteCSR(name).catch(() => {});
    await call('DELETE', `${POLICY_API}/${policy}`).catch(() => {});
  }
});
