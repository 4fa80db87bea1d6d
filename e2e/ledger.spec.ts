// The durable ledger (issue 29) as an auditor uses it: a client certificate
// request is created, approved with a reason and issued by the cluster's own
// signer, then deleted, all behind the console's back (plain API clients, as
// kubectl would be). The devcluster's API server sends its audit events to the
// console's audit webhook; the read-only auditor then signs in (token mode)
// and finds the request's three steps, who approved it and why, and the
// issued certificate's serial and validity, although the cluster no longer
// holds it.
//
// The spec runs on its own console (support/ledger-console.ts): the one that
// serves as the devcluster's audit webhook backend, with a fresh SQLite ledger.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { expectAccessible } from './support/axe';
import { expect, signInWithToken } from './support/fixtures';
import { test } from './support/ledger-console';
import { API_CLIENT_SIGNER, SCREENSHOTS_DIR } from './support/env';
import { call, createCSR, deleteCSR } from './support/kube';

const CSR_API = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

test.use({ instance: 'token', autoLogin: false });

/** "2026-11-28 13:02:00 UTC" (the ledger's pages) as a Date. */
function pageTime(text: string): Date {
  return new Date(text.trim().replace(' UTC', 'Z').replace(' ', 'T'));
}

/** A serial number as hex without colons or leading zeros, however it was spelled. */
function serialHex(s: string): string {
  return s.replace(/:/g, '').toUpperCase().replace(/^0+/, '');
}

async function screenshot(page: Page, file: string) {
  fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, file), fullPage: true });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${file}: horizontal overflow`).toBeLessThanOrEqual(0);
}

test('an auditor finds the three-step history of a CSR the cluster no longer holds', async ({ page }) => {
  test.setTimeout(150_000); // axe on two pages in two schemes; the history now shows each step's diff (the watch's)
  const stamp = Date.now().toString(36);
  const name = `e2e-ledger-${stamp}`;
  // Two people no other test is: the requester and the approver (the admin
  // impersonates them, as superusers: only their names matter here).
  const requester = `e2e-ledger-requester-${stamp}`;
  const approver = `e2e-ledger-approver-${stamp}`;
  const as = (user: string) => ({ user, groups: ['system:masters', 'system:authenticated'] });
  const reason = `ticket OPS-42-${stamp}: the requester's manager confirmed`;

  // 1. Created by the requester.
  await createCSR(name, API_CLIENT_SIGNER, `${name}.example.com`, [`${name}.example.com`], as(requester));
  let certificate: crypto.X509Certificate;
  try {
    // 2. Approved with a reason, through the approval subresource as kubectl would.
    const got = await call('GET', `${CSR_API}/${name}`);
    expect(got.status).toBe(200);
    const csr = got.json;
    csr.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'E2ELedgerChecked', message: reason }] };
    const approved = await call('PUT', `${CSR_API}/${name}/approval`, csr, as(approver));
    expect(approved.status, JSON.stringify(approved.json).slice(0, 300)).toBe(200);

    // 3. Issued by the controller manager's signer.
    let pem = '';
    await expect.poll(async () => {
      const r = await call('GET', `${CSR_API}/${name}`);
      pem = r.json?.status?.certificate ? Buffer.from(r.json.status.certificate, 'base64').toString('utf8') : '';
      return pem !== '';
    }, { message: `${name} is issued`, timeout: 20_000, intervals: [250, 500, 1000] }).toBe(true);
    certificate = new crypto.X509Certificate(pem);
  } finally {
    // Then deleted: from here on only the ledger knows it.
    await deleteCSR(name);
  }
  expect((await call('GET', `${CSR_API}/${name}`)).status).toBe(404);

  // The auditor signs in and filters the ledger by who approved: the API
  // server batches its audit events (1 s), so the row may take a moment.
  await signInWithToken(page, 'auditor');
  const res = await page.goto('/ledger');
  expect(res!.status()).toBe(200);
  await expect(page.getByTestId('nav-ledger')).toHaveAttribute('aria-current', 'page');
  await expect(page.getByTestId('ledger-backend')).toHaveText('SQLite (embedded)');
  await page.getByTestId('ledger-user').fill(approver);
  await page.getByTestId('ledger-action-approve').check();
  const row = page.getByTestId('ledger-row').filter({ hasText: name });
  await expect(async () => {
    await page.getByTestId('ledger-apply').click();
    await expect(row).toHaveCount(1, { timeout: 1_000 });
  }).toPass({ timeout: 20_000, intervals: [250, 500, 1000] });
  await expect(page.getByTestId('page-title')).toHaveText(`What ${approver} did`);
  await expect(row.getByTestId('ledger-reason')).toContainText(reason);
  await expect(row.getByTestId('ledger-signer-link')).toHaveText(API_CLIENT_SIGNER);
  await screenshot(page, 'ledger-user-1280.png');
  await expectAccessible(page, 'the ledger page');

  // The request's history: gone from the cluster, every step kept.
  await row.getByTestId('ledger-history-link').click();
  await expect(page.getByTestId('page-title')).toHaveText(`History of ${name}`);
  await expect(page.getByTestId('ledger-gone')).toBeVisible();
  await expect.poll(async () => {
    await page.reload();
    return page.getByTestId('ledger-step').evaluateAll((steps) => steps.map((s) => s.getAttribute('data-action')));
  }, { message: 'the four steps arrive', timeout: 15_000, intervals: [500, 1000] }).toEqual(['create', 'approve', 'issue', 'delete']);
  const steps = page.getByTestId('ledger-step');
  await expect(steps.nth(0).getByTestId('ledger-step-user')).toHaveText(requester);
  await expect(steps.nth(1).getByTestId('ledger-step-user')).toHaveText(approver);
  await expect(steps.nth(1).getByTestId('ledger-step-reason')).toContainText(reason);
  // The issue has no reason of its own (its object still carries the
  // approval's condition, which is the approval's).
  await expect(steps.nth(2).getByTestId('ledger-step-reason')).toHaveCount(0);

  // What it asked for, who decided and why, what was issued.
  const request = page.getByTestId('ledger-csr-request');
  await expect(request).toContainText(`CN=${name}.example.com`);
  await expect(request).toContainText(`${name}.example.com`);
  await expect(request).toContainText('client auth');
  await expect(request).toContainText(requester);
  const decision = page.getByTestId('ledger-csr-decision');
  await expect(decision).toHaveCount(1);
  await expect(decision).toContainText(approver);
  await expect(decision.getByTestId('ledger-csr-reason')).toContainText(reason);
  expect(serialHex(await page.getByTestId('ledger-csr-serial').innerText())).toBe(serialHex(certificate!.serialNumber));
  expect(pageTime(await page.getByTestId('ledger-csr-not-before').innerText()).getTime()).toBe(new Date(certificate!.validFrom).getTime());
  expect(pageTime(await page.getByTestId('ledger-csr-not-after').innerText()).getTime()).toBe(new Date(certificate!.validTo).getTime());
  await screenshot(page, 'ledger-history-1280.png');
  await expectAccessible(page, "the CSR's history");

  // Nothing on the page writes: no form but the sign-out's.
  await expect(page.locator('form[method="post"]:not([action="/logout"])')).toHaveCount(0);

  // The history's export: one JSON object a line, the same four steps.
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('ledger-export-ndjson').click(),
  ]);
  expect(download.suggestedFilename()).toMatch(/^clusterdesk-ledger-csrs-.*\.ndjson$/);
  const lines = fs.readFileSync((await download.path())!, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  expect(lines.map((l) => l.action)).toEqual(['create', 'approve', 'issue', 'delete']);
  expect(lines[1].user).toBe(approver);
});
