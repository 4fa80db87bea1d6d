// ValidatingAdmissionPolicies and their bindings: kinds added through the kind
// registry (editable since the editor replays a draft: editor-replay.spec.ts). The list, the detail pages (linked both ways), the "g v"
// shortcut and live rows, on a policy and binding this spec creates.
import { expect, test } from './support/fixtures';
import { call } from './support/kube';
import { rows } from './support/pages';

const API = '/apis/admissionregistration.k8s.io/v1';
const suffix = Date.now().toString(36);
const POLICY = `registry-e2e-policy-${suffix}`;
const BINDING = `registry-e2e-binding-${suffix}`;
const LATE_BINDING = `registry-e2e-late-${suffix}`;

/** A binding that affects no request: it matches only a label nothing sets. */
function binding(name: string) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name },
    spec: {
      policyName: POLICY, validationActions: ['Warn', 'Audit'],
      matchResources: { objectSelector: { matchLabels: { 'clusterdesk.dev/never-set': 'true' } } },
    },
  };
}

async function create(resource: string, body: unknown) {
  const res = await call('POST', `${API}/${resource}`, body);
  expect(res.status, JSON.stringify(res.json)).toBe(201);
}

test.beforeAll(async () => {
  await create('validatingadmissionpolicies', {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: POLICY },
    spec: {
      failurePolicy: 'Ignore',
      matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }] },
      matchConditions: [{ name: 'not-system', expression: '!request.userInfo.username.startsWith("system:")' }],
      variables: [{ name: 'replicas', expression: 'object.spec.replicas' }],
      validations: [{ expression: 'variables.replicas <= 5', message: 'at most 5 replicas', reason: 'Forbidden' }],
      auditAnnotations: [{ key: 'replicas', valueExpression: 'string(object.spec.replicas)' }],
    },
  });
  await create('validatingadmissionpolicybindings', binding(BINDING));
});

test.afterAll(async () => {
  for (const b of [BINDING, LATE_BINDING]) await call('DELETE', `${API}/validatingadmissionpolicybindings/${b}`);
  await call('DELETE', `${API}/validatingadmissionpolicies/${POLICY}`);
});

test('the policy list opens the policy, which links its binding and back', async ({ page }, testInfo) => {
  await expect.poll(async () => {
    await page.goto(`/validatingadmissionpolicies?q=${POLICY}`);
    return rows(page).count();
  }, { message: `the console lists ${POLICY}`, timeout: 15_000 }).toBe(1);
  await expect(page.getByTestId('nav-validatingadmissionpolicies')).toHaveAttribute('aria-current', 'page');
  await expect(rows(page).first()).toContainText('Ignore');
  await expect(page.locator('a[href="/validatingadmissionpolicies/new"]'), 'New: the editor replays a draft first').toHaveCount(1);

  await rows(page).first().locator('th[scope=row] a').click();
  await expect(page).toHaveURL(new RegExp(`/validatingadmissionpolicies/${POLICY}$`));
  await expect(page.getByTestId('detail-name')).toHaveText(POLICY);
  await expect(page.getByTestId('policy-validations')).toContainText('variables.replicas <= 5');
  await expect(page.getByTestId('policy-validations')).toContainText('Forbidden');
  await expect(page.getByTestId('policy-match')).toContainText('deployments');
  await expect(page.getByTestId('policy-variables')).toContainText('variables.replicas');
  await expect(page.getByTestId('policy-audit-annotations')).toContainText('replicas');
  await expect(page.getByTestId('yaml')).toContainText('kind: ValidatingAdmissionPolicy');
  await expect(page.locator(`a[href="/validatingadmissionpolicies/${POLICY}/edit"]`), 'the editor').toHaveCount(1);
  await page.screenshot({ path: testInfo.outputPath('vap-detail.png'), fullPage: true });

  await page.getByTestId('policy-bindings').getByRole('link', { name: BINDING }).click();
  await expect(page.getByTestId('detail-name')).toHaveText(BINDING);
  await expect(page.getByTestId('binding-summary')).toContainText('Warn, Audit');
  await page.getByTestId('binding-summary').getByRole('link', { name: POLICY }).click();
  await expect(page.getByTestId('detail-name')).toHaveText(POLICY);
});

test('g then v opens the policies; a new binding appears in the open list without reload', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('home-kind-validatingadmissionpolicies')).toBeVisible();
  await page.keyboard.press('g');
  await page.keyboard.press('v');
  await expect(page).toHaveURL(/\/validatingadmissionpolicies$/);

  await page.goto(`/validatingadmissionpolicybindings?q=registry-e2e`);
  await expect(page.locator('body')).toHaveAttribute('data-live-state', 'connected');
  await page.evaluate(() => { document.documentElement.dataset.e2eMark = 'same'; });
  await create('validatingadmissionpolicybindings', binding(LATE_BINDING));
  await expect(page.locator(`[id="row-validatingadmissionpolicybindings-${LATE_BINDING}"]`)).toContainText(POLICY, { timeout: 10_000 });
  expect(await page.evaluate(() => document.documentElement.dataset.e2eMark), 'the page was not reloaded').toBe('same');
});
