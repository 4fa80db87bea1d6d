// The admin pages issue 19 added fit 1280 and 1024 px with the worst shapes
// on them (list pages have their own spec, list-widths.spec.ts): the CSR page
// of an approved custom-signer CSR with a 253-character name and 200 SANs
// (with its certificate upload form and its Edit YAML / Delete actions), its
// delete page with the propagation choices, a cleanup preview of 25
// CSIDrivers with 253-character names, a list answering a bad label
// selector, and the interception simulator. No sideways scrolling of the
// page, no table wider than its container; screenshots of each at both
// widths in e2e/artifacts/screenshots/admin-*.png.
import path from 'node:path';
import type { Page } from '@playwright/test';
import { SCREENSHOTS_DIR } from './support/env';
import { expect, test } from './support/fixtures';
import { call, createCSR, deleteCSR } from './support/kube';

const RUN = `aw19-${Date.now().toString(36)}`;
const CSR_API = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const DRIVERS_API = '/apis/storage.k8s.io/v1/csidrivers';
const LABEL = 'clusterdesk-admin-widths-e2e';

/** A DNS-subdomain name of exactly 253 characters starting with prefix. */
function longName(prefix: string): string {
  let name = prefix;
  while (name.length < 253) {
    const room = 253 - name.length - 1;
    if (room < 1) return name.slice(0, 252) + 'z';
    name += '.' + 'x'.repeat(Math.min(63, room));
  }
  return name;
}

const CSR_NAME = longName(`${RUN}-csr`);
const SANS = Array.from({ length: 200 }, (_, i) => `san-${String(i).padStart(3, '0')}.${RUN}.example.com`);
const DRIVERS = Array.from({ length: 25 }, (_, i) => longName(`${RUN}-${String(i).padStart(2, '0')}`));

test.beforeAll(async () => {
  await createCSR(CSR_NAME, 'example.com/aw19-signer', `${RUN}.example.com`, SANS);
  const got = await call('GET', `${CSR_API}/${CSR_NAME}`);
  expect(got.status).toBe(200);
  const csr = got.json;
  csr.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'E2E', message: 'approved by the e2e suite' }] };
  const approved = await call('PUT', `${CSR_API}/${CSR_NAME}/approval`, csr);
  expect(approved.status, JSON.stringify(approved.json).slice(0, 300)).toBe(200);
  for (const name of DRIVERS) {
    const res = await call('POST', DRIVERS_API, {
      apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver',
      metadata: { name, labels: { [LABEL]: RUN } }, spec: { attachRequired: false },
    });
    expect(res.status, `create ${name.slice(0, 40)}…`).toBe(201);
  }
});

test.afterAll(async () => {
  await deleteCSR(CSR_NAME);
  for (const name of DRIVERS) await call('DELETE', `${DRIVERS_API}/${name}`);
});

/** Fails when the page or a table scrolls sideways; saves a screenshot. */
async function fits(page: Page, what: string, width: number): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, `admin-${what}-${width}.png`), fullPage: true });
  const o = await page.evaluate(() => {
    const tables: string[] = [];
    document.querySelectorAll('table').forEach((t, i) => {
      const box = t.parentElement!;
      if (t.scrollWidth > box.clientWidth + 1) tables.push(`table ${i}: ${t.scrollWidth} > ${box.clientWidth}`);
    });
    return { doc: document.documentElement.scrollWidth, win: window.innerWidth, tables };
  });
  expect(o.doc, `${what} at ${width} px: document ${o.doc} wider than the window ${o.win}`).toBeLessThanOrEqual(o.win);
  expect(o.tables, `${what} at ${width} px: tables wider than their containers`).toEqual([]);
}

for (const width of [1280, 1024]) {
  test(`issue 19's admin pages fit ${width} px with the worst shapes`, async ({ page }) => {
    test.setTimeout(120_000);
    await page.setViewportSize({ width, height: 800 });

    // The CSR page: actions, 5 SANs and "195 more", the upload form.
    let res = await page.goto(`/csrs/${CSR_NAME}`);
    expect(res!.status()).toBe(200);
    await expect(page.getByRole('link', { name: 'Edit YAML' })).toBeVisible();
    await expect(page.getByRole('link', { name: 'Delete' })).toBeVisible();
    await expect(page.getByTestId('field-dns-names').getByTestId('more-summary')).toHaveText('195 more');
    await expect(page.getByText('Upload issued certificate').first()).toBeVisible();
    await fits(page, 'csr', width);

    // Its delete page: three propagation choices, each explained.
    res = await page.goto(`/csrs/${CSR_NAME}/delete`);
    expect(res!.status()).toBe(200);
    for (const policy of ['Background', 'Foreground', 'Orphan']) {
      await expect(page.locator(`input[type=radio][value=${policy}]`)).toHaveCount(1);
    }
    await fits(page, 'csr-delete', width);

    // A cleanup preview of 25 long-named CSIDrivers: the count to type.
    res = await page.goto(`/csidrivers/-/cleanup?selector=${encodeURIComponent(`${LABEL}=${RUN}`)}`);
    expect(res!.status()).toBe(200);
    await expect(page.getByText('25 objects will be deleted')).toBeVisible();
    await expect(page.getByText('type their number')).toBeVisible();
    await fits(page, 'cleanup-preview', width);

    // A list answering a bad label selector: 400, the parser's words, the page usable.
    res = await page.goto(`/csidrivers?selector=${encodeURIComponent('app in (web')}`);
    expect(res!.status()).toBe(400);
    await expect(page.locator('input[name=selector]')).toHaveValue('app in (web');
    await fits(page, 'selector-error', width);

    // The interception simulator's form.
    res = await page.goto('/validatingwebhooks/intercept');
    expect(res!.status()).toBe(200);
    await fits(page, 'intercept', width);
  });
}
