// Uploading the certificate an external CA issued for an approved CSR of a
// custom signer, through the page's plain form (a file), and seeing it issued.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SCREENSHOTS_DIR } from './support/env';
import { expect, test } from './support/fixtures';
import { call, createCSR, deleteCSR } from './support/kube';

const SIGNER = 'example.com/helper-signer';
const CSR_API = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

/** Signs the CSR's request with a fresh openssl CA, as an external CA would: the leaf and the CA as PEM files. */
function issueWithOpenSSL(dir: string, requestPEM: string): { leaf: string; ca: string } {
  const f = (n: string) => path.join(dir, n);
  fs.writeFileSync(f('req.pem'), requestPEM);
  fs.writeFileSync(f('ext.cnf'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n');
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', f('ca.key'),
    '-out', f('ca.pem'), '-subj', '/CN=helper e2e root', '-days', '1');
  openssl('x509', '-req', '-in', f('req.pem'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial',
    '-out', f('leaf.pem'), '-days', '1', '-extfile', f('ext.cnf'));
  return { leaf: f('leaf.pem'), ca: f('ca.pem') };
}

async function shot(page: import('@playwright/test').Page, file: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, file), fullPage: true });
}

test('upload the certificate an external CA issued for a custom signer', async ({ page }) => {
  const name = `helper-issue-e2e-${Date.now().toString(36)}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdesk-issue-'));
  await createCSR(name, SIGNER);
  try {
    // Approve it through the approval subresource, as admin.
    const got = await call('GET', `${CSR_API}/${name}`);
    expect(got.status).toBe(200);
    const csr = got.json;
    csr.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'E2E', message: 'approved by the e2e suite' }] };
    const approved = await call('PUT', `${CSR_API}/${name}/approval`, csr);
    expect(approved.status, JSON.stringify(approved.json).slice(0, 300)).toBe(200);
    const files = issueWithOpenSSL(dir, Buffer.from(csr.spec.request, 'base64').toString('utf8'));

    await expect.poll(async () => {
      await page.goto(`/csrs/${name}`);
      return page.getByTestId('issue-form').count();
    }, { message: `${name}'s page offers the upload once the console sees it approved`, timeout: 15_000 }).toBe(1);
    await expect(page.getByTestId('detail-status')).toHaveText('Approved, not issued');
    await page.setViewportSize({ width: 1280, height: 900 });
    await shot(page, 'csr-issue-form-1280.png');
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width, 'no horizontal scrolling at 1280 px').toBeLessThanOrEqual(1280);

    // A paste that is no certificate: refused beside the form, the text kept, nothing written.
    await page.getByTestId('issue-chain').fill('not a certificate');
    const refused = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/csrs/${name}/issue`);
    await page.getByTestId('issue-submit').click();
    expect((await refused).status(), 'garbage is refused with 422').toBe(422);
    await expect(page.getByTestId('issue-error')).toContainText('no PEM CERTIFICATE block');
    await expect(page.getByTestId('issue-chain')).toHaveValue('not a certificate');
    await shot(page, 'csr-issue-refused-1280.png');
    await page.getByTestId('issue-chain').fill('');

    await page.getByTestId('issue-chain-file').setInputFiles(files.leaf);
    await page.getByTestId('issue-bundle-details').locator('summary').click();
    await page.getByTestId('issue-bundle-file').setInputFiles(files.ca);
    const post = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/csrs/${name}/issue`);
    await page.getByTestId('issue-submit').click();
    expect((await post).status(), 'POST issue answers with a redirect').toBe(303);
    await expect(page).toHaveURL(new RegExp(`/csrs/${name}$`));
    await expect(page.getByTestId('toast-result')).toContainText('certificate was written');
    await expect(page.getByTestId('detail-status')).toHaveText('Approved, Issued');
    await expect(page.getByTestId('issued-certificate')).toContainText('CN=helper e2e root');
    await expect(page.getByTestId('issue-form')).toHaveCount(0);
    await expect(page.getByTestId('certificate-download')).toBeVisible();
    await shot(page, 'csr-issue-issued-1280.png');

    const after = await call('GET', `${CSR_API}/${name}`);
    const written = Buffer.from(after.json.status.certificate, 'base64').toString('utf8');
    expect(written.trim()).toBe(fs.readFileSync(files.leaf, 'utf8').trim());
  } finally {
    await deleteCSR(name);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
