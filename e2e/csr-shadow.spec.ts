// Shadow mode in the CSR queue: three approval policies for a signer of the
// test's own (one approves, one denies, one does not compile) put a chip per
// verdict on each pending row; the policy filter keeps what a policy
// approves; "approve everything it approves" previews exactly those requests
// and, confirmed, approves them on the API server as the signed-in user.
import path from 'node:path';
import { SCREENSHOTS_DIR } from './support/env';
import { expect, test } from './support/fixtures';
import { call, createCSR, deleteCSR } from './support/kube';

const CSR_API = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const POLICY_API = '/apis/clusterdesk.io/v1alpha1/csrapprovalpolicies';

async function createPolicy(name: string, signer: string, expression: string, decision: string) {
  const res = await call('POST', POLICY_API, {
    apiVersion: 'clusterdesk.io/v1alpha1', kind: 'CSRApprovalPolicy', metadata: { name },
    spec: { signerNames: [signer], expression, decision, reason: 'E2eShadow', message: `${name} says ${decision}` },
  });
  if (res.status !== 201) throw new Error(`creating policy ${name}: HTTP ${res.status}: ${JSON.stringify(res.json).slice(0, 300)}`);
}

async function conditions(name: string): Promise<string> {
  const res = await call('GET', `${CSR_API}/${name}`);
  expect(res.status).toBe(200);
  return (res.json.status?.conditions ?? []).map((c: any) => `${c.type}:${c.message}`).join(',');
}

test('policy verdicts show as chips, filter the queue, and drive a bulk approval', async ({ page }) => {
  const stamp = Date.now().toString(36);
  const signer = `example.com/e2e-shadow-${stamp}`;
  const approve = `e2e-shadow-approve-${stamp}`;
  const deny = `e2e-shadow-deny-${stamp}`;
  const broken = `e2e-shadow-broken-${stamp}`;
  const ok = [`e2e-shadow-ok-${stamp}-1`, `e2e-shadow-ok-${stamp}-2`];
  const bad = `e2e-shadow-bad-${stamp}-1`;
  const policies = [approve, deny, broken];
  try {
    await createPolicy(approve, signer, 'request.subject.commonName.startsWith("e2e-shadow-ok")', 'Approve');
    await createPolicy(deny, signer, 'request.subject.commonName.startsWith("e2e-shadow-bad")', 'Deny');
    await createPolicy(broken, signer, "request.username != '' &&\n  request.nosuch()", 'Deny');
    for (const name of [...ok, bad]) await createCSR(name, signer);

    // Chips, once the policy cache has the three.
    const row = page.locator(`[data-testid="list-row"][data-name="${ok[0]}"]`);
    await expect.poll(async () => {
      await page.goto(`/csrs?signer=${encodeURIComponent(signer)}&state=pending`);
      return row.getByTestId('verdict-chip').count();
    }, { message: 'the row shows its two verdicts', timeout: 20_000 }).toBe(2);
    const chip = row.locator(`[data-testid="verdict-chip"][data-policy="${approve}"]`);
    await expect(chip).toHaveAttribute('data-verdict', 'approve');
    await expect(chip).toHaveAttribute('title', /E2eShadow/);
    await expect(row.locator(`[data-policy="${broken}"]`)).toHaveAttribute('data-verdict', 'error');
    await expect(page.locator(`[data-testid="list-row"][data-name="${bad}"] [data-policy="${deny}"]`)).toHaveAttribute('data-verdict', 'deny');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'csr-shadow-chips.png') });

    // The filter, chosen in the form (htmx swaps the table).
    await page.getByTestId('filter-policy').selectOption(approve);
    await page.getByTestId('filter-verdict').selectOption('approve');
    await expect(page).toHaveURL(new RegExp(`policy=${approve}`));
    await expect(page.getByTestId('list-row')).toHaveCount(2);
    await expect(page.locator(`[data-testid="list-row"][data-name="${bad}"]`)).toHaveCount(0);

    // The bulk action: its preview lists exactly the two; confirmed, the
    // API server holds their approvals naming the policy, and nothing else.
    await page.getByTestId('policy-approve').click();
    await expect(page.getByTestId('policy-approve-page')).toBeVisible();
    const previewed = page.getByTestId('policy-approve-row');
    await expect(previewed).toHaveCount(2);
    expect((await previewed.evaluateAll((els) => els.map((e) => e.getAttribute('data-name')))).sort()).toEqual([...ok].sort());
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'csr-shadow-preview.png'), fullPage: true });
    await page.getByTestId('policy-approve-confirm').click();
    await expect(page.getByText('Approved', { exact: false }).first()).toBeVisible();
    for (const name of ok) {
      expect(await conditions(name)).toContain(`Approved:Approved by`);
      // The policy's version it evaluated (issue 47, item 4: csrpolicy.VersionText).
      expect(await conditions(name)).toMatch(new RegExp(`following policy ${approve} \\(generation 1, expression [0-9a-f]{12}\\) \\(shadow\\)`));
    }
    expect(await conditions(bad)).toBe('');
    await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'csr-shadow-result.png'), fullPage: true });
  } finally {
    for (const name of [...ok, bad]) await deleteCSR(name).catch(() => {});
    for (const name of policies) await call('DELETE', `${POLICY_API}/${name}`).catch(() => {});
  }
});
