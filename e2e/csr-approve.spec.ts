// Approving a pending kube-apiserver-client CSR as admin; the real signer issues it.
import { API_CLIENT_SIGNER } from './support/env';
import { expect, test } from './support/fixtures';
import { pendingCSR } from './support/csrs';
import { deleteCSR } from './support/kube';

test('approve a pending kube-apiserver-client CSR from its page', async ({ page }, info) => {
  const { name, created } = await pendingCSR(page, info, 'e2e-approve', API_CLIENT_SIGNER);
  try {
    // Open it from the list, as a person would.
    await page.goto(`/csrs?q=${encodeURIComponent(name)}`);
    await page.getByTestId('list-row').locator('th[scope=row] a', { hasText: name }).first().click();
    await expect(page.getByTestId('detail-name')).toHaveText(name);
    await expect(page.getByTestId('detail-status')).toHaveText('Pending');
    await expect(page.getByTestId('field-signer')).toContainText(API_CLIENT_SIGNER);
    await expect(page.getByTestId('action-deny')).toBeVisible();

    const message = `approved by the clusterdesk e2e suite (${new Date().toISOString()})`;
    await page.getByTestId('action-approve-message').fill(message);
    let question = '';
    page.once('dialog', async (d) => {
      question = `${d.type()}: ${d.message()}`;
      await d.accept();
    });
    const post = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/csrs/${name}/approve`);
    const back = page.waitForResponse((r) => r.request().method() === 'GET' && r.request().isNavigationRequest());
    await page.getByTestId('action-approve').click();
    expect((await post).status(), 'POST approve answers with a redirect').toBe(303);
    expect((await back).status()).toBe(200);
    expect(question).toMatch(/^confirm: .*Approve/);
    expect(question).toContain(name);
    expect(new URL(page.url()).pathname).toBe(`/csrs/${name}`);
    await expect(page.getByTestId('toast-result')).toContainText(/approved/i);

    // The signer in kube-controller-manager issues within a second or two.
    await expect.poll(async () => {
      await page.reload();
      return (await page.getByTestId('detail-status').textContent())?.trim();
    }, { message: `${name} becomes "Approved, Issued"`, timeout: 20_000, intervals: [250, 500, 1000] }).toBe('Approved, Issued');

    const approved = page.getByTestId('conditions').locator('[data-testid="condition"][data-type="Approved"]');
    await expect(approved).toContainText(message);
    await expect(approved).toContainText('ClusterdeskApproved');
    await expect(page.getByTestId('issued-certificate')).toBeVisible();
    // A decided CSR offers no further decision.
    await expect(page.getByTestId('action-approve')).toHaveCount(0);
    await expect(page.getByTestId('action-deny')).toHaveCount(0);
  } finally {
    if (created) await deleteCSR(name);
  }
});
