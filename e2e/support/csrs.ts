// Finding (or, on a devcluster whose seeded CSRs were already decided,
// creating) a pending CertificateSigningRequest to work on.
import type { Page, TestInfo } from '@playwright/test';
import { expect } from './fixtures';
import { createCSR } from './kube';
import { columnKeys, readRows } from './pages';

/** Names of pending CSRs listed by the console, optionally only for one signer. */
export async function pendingCSRs(page: Page, signer?: string): Promise<string[]> {
  const res = await page.goto(`/csrs?q=${encodeURIComponent(signer ?? 'pending')}`);
  expect(res!.status()).toBe(200);
  const keys = await columnKeys(page);
  for (const k of ['signer', 'condition']) expect(keys, `CSR list columns (data-column) include "${k}"`).toContain(k);
  return (await readRows(page))
    .filter((r) => /\bPending\b/.test(r.cells.condition) && (!signer || r.cells.signer === signer))
    .map((r) => r.name);
}

/**
 * A pending CSR's name: the first one the console lists whose page does not
 * say it cannot be decided (the devcluster seeds one with an invalid request,
 * which the API server refuses to approve or deny; once the other seeded ones
 * are decided it would be listed first), or a new one made through the API
 * (then returned with created: true, for the caller to delete).
 */
export async function pendingCSR(page: Page, info: TestInfo, prefix: string, signer: string, anySigner = false): Promise<{ name: string; created: boolean }> {
  const listed = await pendingCSRs(page, anySigner ? undefined : signer);
  for (const name of listed) {
    await page.goto(`/csrs/${name}`);
    if ((await page.getByText('It cannot be approved or denied').count()) === 0) return { name, created: false };
  }

  const name = `${prefix}-${Date.now().toString(36)}`;
  info.annotations.push({ type: 'note', description: `no pending ${anySigner ? '' : signer + ' '}CSR was listed; created ${name} through the API` });
  await createCSR(name, signer);
  // Wait until the console's cache has it.
  await expect.poll(async () => (await page.goto(`/csrs/${name}`))!.status(), {
    message: `the console lists the new CSR ${name}`, timeout: 15_000,
  }).toBe(200);
  return { name, created: true };
}
