// The CSR approval queue: a person moves through the pending requests with
// j/k, ticks one with x, approves it with a, and sees it move to Issued once
// the real signer in kube-controller-manager has issued the certificate.
import { API_CLIENT_SIGNER } from './support/env';
import { expect, test } from './support/fixtures';
import { createCSR, deleteCSR } from './support/kube';

test('approve a pending CSR from the queue with the keyboard; it moves to Issued', async ({ page }) => {
  // A fresh request of our own, so the test neither depends on nor spends the seeded ones.
  const name = `e2e-queue-${Date.now().toString(36)}`;
  await createCSR(name, API_CLIENT_SIGNER);
  try {
    const row = page.locator(`[data-testid="list-row"][data-name="${name}"]`);
    await expect.poll(async () => {
      await page.goto('/csrs?state=pending');
      return row.count();
    }, { message: `the queue lists ${name} under Pending`, timeout: 15_000 }).toBe(1);
    await expect(page.getByTestId('tab-pending')).toHaveAttribute('aria-current', 'page');
    await expect(row.getByTestId('row-select')).not.toBeChecked();

    // j moves down row by row. Pending requests are listed oldest first, so
    // ours is the last one that can be decided (requests that do not decode,
    // which nobody can decide, come after it).
    const names = await page.getByTestId('list-row').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-name')));
    const selectable = await page.locator('[data-testid="list-row"]:has([data-testid="row-select"])')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-name')));
    expect(selectable.at(-1), 'the newest decidable pending request is the last of them').toBe(name);
    const index = names.indexOf(name);
    for (let i = 0; i <= index; i++) await page.keyboard.press('j');
    await expect(row).toHaveAttribute('data-current', '');
    await expect(page.locator('[data-testid="list-row"][data-current]')).toHaveCount(1);
    if (index > 0) {
      // k goes back up, j down again.
      await page.keyboard.press('k');
      await expect(page.locator('[data-testid="list-row"][data-current]')).toHaveAttribute('data-name', names[index - 1]!);
      await page.keyboard.press('j');
      await expect(row).toHaveAttribute('data-current', '');
    }

    await page.keyboard.press('x');
    await expect(row.getByTestId('row-select')).toBeChecked();
    await expect(page.getByTestId('bulk-count')).toHaveText('1 request selected.');
    await page.getByTestId('bulk-message').fill('approved from the queue by the e2e suite');
    await page.getByTestId('bulk-message').blur(); // keys typed into a field are text, not commands

    let question = '';
    page.once('dialog', async (d) => {
      question = `${d.type()}: ${d.message()}`;
      await d.accept();
    });
    const post = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/csrs/bulk');
    await page.keyboard.press('a');
    expect((await post).status(), 'the bulk decision succeeded').toBe(200);
    expect(question).toBe(`confirm: Approve ${name}? Each signer will issue a certificate.`);

    const result = page.locator(`[data-testid="bulk-result"][data-name="${name}"]`);
    await expect(result).toHaveAttribute('data-ok', 'true');
    await expect(page.getByTestId('bulk-summary')).toHaveText('Approved 1 of 1');
    // The address bar names the queue view again, not the POST: a reload or a
    // live refresh asks for the queue.
    await expect.poll(() => new URL(page.url()).pathname + new URL(page.url()).search).toBe('/csrs?state=pending');

    // The signer issues within a second or two; the Issued tab then lists it.
    await expect.poll(async () => {
      await page.goto(`/csrs?state=issued&q=${encodeURIComponent(name)}`);
      return row.count();
    }, { message: `${name} moves to Issued`, timeout: 20_000, intervals: [250, 500, 1000] }).toBe(1);
    await expect(row.locator('td[data-column="condition"]')).toContainText('Approved, Issued');
    await expect(page.getByTestId('tab-issued')).toHaveAttribute('aria-current', 'page');

    await page.goto(`/csrs?state=pending&q=${encodeURIComponent(name)}`);
    await expect(page.getByTestId('list-empty')).toBeVisible();

    // The detail page offers the issued certificate as a PEM download.
    await page.goto(`/csrs/${name}`);
    const download = page.waitForEvent('download');
    await page.getByTestId('certificate-download').click();
    expect((await download).suggestedFilename()).toBe(`${name}.crt`);
  } finally {
    await deleteCSR(name);
  }
});
