// The --read-only console: it says so, offers no action, and refuses writes.
import { API_CLIENT_SIGNER } from './support/env';
import { expect, test } from './support/fixtures';
import { pendingCSR } from './support/csrs';
import { deleteCSR } from './support/kube';

test.use({ instance: 'readonly' });

test('read-only: badge, no action forms, forged POSTs refused with 403', async ({ page }, info) => {
  expect((await page.goto('/'))!.status()).toBe(200);
  await expect(page.getByTestId('readonly-badge')).toBeVisible();
  await expect(page.getByTestId('readonly-badge')).toContainText(/read-only/i);

  const { name, created } = await pendingCSR(page, info, 'e2e-readonly', API_CLIENT_SIGNER, true);
  try {
    const res = await page.goto(`/csrs/${name}`);
    expect(res!.status()).toBe(200);
    await expect(page.getByTestId('detail-status')).toHaveText('Pending');
    await expect(page.getByTestId('readonly-badge')).toBeVisible();
    await expect(page.locator('form[action*="/approve"], form[action*="/deny"]')).toHaveCount(0);
    await expect(page.locator('[data-testid^="action-"]')).toHaveCount(0);
    await expect(page.getByTestId('actions')).toHaveCount(0);

    // A forged request from the signed-in page, with a valid CSRF token: the
    // server itself refuses it, whatever the page showed.
    const csrf = await page.locator('meta[name="csrf-token"]').getAttribute('content');
    expect(csrf, 'the page carries a CSRF token').toBeTruthy();
    for (const verb of ['approve', 'deny']) {
      const forged = await page.request.post(`/csrs/${name}/${verb}`, {
        form: { _csrf: csrf!, message: 'forged by the e2e suite' },
        headers: { 'X-CSRF-Token': csrf! },
        maxRedirects: 0,
      });
      expect(forged.status(), `POST /csrs/${name}/${verb}`).toBe(403);
      expect(await forged.text(), 'refused for read-only mode, not for CSRF').toMatch(/read-only/i);
    }

    await page.reload();
    await expect(page.getByTestId('detail-status')).toHaveText('Pending');
  } finally {
    if (created) await deleteCSR(name);
  }
});
