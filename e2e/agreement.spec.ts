// The agreement with the API server (issue 45 item 3): an auditor opens a
// ValidatingAdmissionPolicy whose binding audits; its page fetches the
// "Agreement with the API server" section after it is shown, which replays
// the deployed version over the recorded writes and compares each request
// with the API server's own audit annotation. A CSIDriver the policy admits
// is written once the deployed version is in force: compared, agreeing, no
// disagreement. (The Go tests on the devcluster list real disagreements.)
// It runs on the ledger's console (support/ledger-console.ts).
import fs from 'node:fs';
import path from 'node:path';
import { expect, signInWithToken } from './support/fixtures';
import { test } from './support/ledger-console';
import { SCREENSHOTS_DIR } from './support/env';
import { call } from './support/kube';

const API = '/apis/admissionregistration.k8s.io/v1';
const NAME = `e2e-agreement-${Date.now().toString(36)}`;

test.use({ instance: 'token', autoLogin: false });

test.afterAll(async () => {
  await call('DELETE', `/apis/storage.k8s.io/v1/csidrivers/${NAME}-ok`);
  await call('DELETE', `${API}/validatingadmissionpolicybindings/${NAME}`);
  await call('DELETE', `${API}/validatingadmissionpolicies/${NAME}`);
});

test('a policy page shows its agreement with the API server', async ({ page }) => {
  const created = [
    await call('POST', `${API}/validatingadmissionpolicies`, {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: NAME },
      spec: {
        failurePolicy: 'Fail',
        // This spec's CSIDrivers only, even while the API server keeps it after the spec.
        matchConstraints: { resourceRules: [{ apiGroups: ['storage.k8s.io'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['csidrivers'],
          resourceNames: [`${NAME}-ok`, `${NAME}-bad`] }] },
        validations: [{ expression: "!object.metadata.name.endsWith('-bad')", message: 'a bad name' }],
      },
    }),
    await call('POST', `${API}/validatingadmissionpolicybindings`, {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: NAME },
      spec: { policyName: NAME, validationActions: ['Audit'] },
    }),
  ];
  for (const r of created) expect(r.status, JSON.stringify(r.json).slice(0, 300)).toBe(201);
  // The comparison starts a second after the deployed version's last change
  // (the API server keeps its times to the second): write after it.
  const since = Math.max(...created.map((r) => Date.parse((r.json as { metadata: { creationTimestamp: string } }).metadata.creationTimestamp))) + 2_000;
  await expect.poll(() => Date.now(), { message: 'the deployed version in force', timeout: 5_000 }).toBeGreaterThan(since);
  const driver = await call('POST', '/apis/storage.k8s.io/v1/csidrivers', {
    apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: `${NAME}-ok` }, spec: {},
  });
  expect(driver.status).toBe(201);

  await signInWithToken(page, 'auditor');
  await expect.poll(async () => (await page.goto(`/validatingadmissionpolicies/${NAME}`))!.status(),
    { message: `the console shows ${NAME}`, timeout: 15_000 }).toBe(200);
  const section = page.getByTestId('policy-agreement');
  await expect(section).toContainText('Agreement with the API server');

  // The API server sends its audit events in batches: reload until the
  // driver's write is compared (htmx fetches the section after each load).
  await expect(async () => {
    await page.reload();
    await expect(section.getByTestId('field-requests-compared').locator('dd > div').first()).toHaveText(/^\s*[1-9]\d*\s*$/, { timeout: 5_000 });
  }).toPass({ timeout: 30_000, intervals: [500, 1000, 2000] });
  await expect(section.getByTestId('field-agreement')).toContainText('100.0%');
  await expect(section.getByTestId('field-disagreeing')).toContainText('0');
  await expect(section).toContainText('No disagreement.');
  await expect(section.getByTestId('field-bindings-compared')).toContainText(`${NAME}: `);
  await expect(page, 'the section came in place').toHaveURL(new RegExp(`/validatingadmissionpolicies/${NAME}$`));

  fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await section.scrollIntoViewIfNeeded();
  await section.screenshot({ path: path.join(SCREENSHOTS_DIR, 'agreement.png') });
});
