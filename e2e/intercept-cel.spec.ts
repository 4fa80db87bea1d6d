// The interception simulator with objects: CEL matchConditions and a
// ValidatingAdmissionPolicy (validations and auditAnnotations) evaluated
// against an object and old object typed as YAML, sent as a POST form. The
// webhook and policy match only namespaces carrying this run's label, which
// no namespace has: no real request reaches them.
import path from 'node:path';
import { SCREENSHOTS_DIR } from './support/env';
import { expect, test } from './support/fixtures';
import { call } from './support/kube';

const run = Date.now().toString(36);
const name = `e2e-cel-${run}`;
const nsLabel = `e2e-cel-${run}`;
const cmRule = { apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] };

test.beforeAll(async () => {
  const hook = (short: string, expression: string) => ({
    name: `${short}.e2e-cel.clusterdesk.dev`, admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: 'Ignore',
    clientConfig: { url: 'https://127.0.0.1:9/never' },
    namespaceSelector: { matchLabels: { [nsLabel]: 'yes' } },
    rules: [{ operations: ['CREATE', 'UPDATE'], ...cmRule }],
    matchConditions: [{ name: short, expression }],
  });
  let res = await call('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name },
    webhooks: [
      hook('data-changed', "request.operation == 'UPDATE' && oldObject.data != object.data"),
      hook('team-blue', "has(object.metadata.labels) && 'team' in object.metadata.labels && object.metadata.labels['team'] == 'blue'"),
    ],
  });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  res = await call('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies', {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { namespaceSelector: { matchLabels: { [nsLabel]: 'yes' } }, resourceRules: [{ operations: ['CREATE', 'UPDATE'], ...cmRule }] },
      validations: [{ expression: "oldObject == null || oldObject.data.mode == object.data.mode", messageExpression: "'mode is immutable, was ' + oldObject.data.mode" }],
      auditAnnotations: [{ key: 'mode-change', valueExpression: "oldObject == null ? '' : string(oldObject.data.mode) + ' -> ' + string(object.data.mode)" }],
    },
  });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  res = await call('POST', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings', {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name },
    spec: { policyName: name, validationActions: ['Deny'] },
  });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
});

test.afterAll(async () => {
  await call('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${name}`);
  await call('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${name}`);
  await call('DELETE', `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`);
});

test('the simulator evaluates matchConditions and a policy against typed objects', async ({ page }, info) => {
  const object = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: e2e-ns-${run}
  labels:
    team: red
data:
  mode: fast
`;
  const oldObject = object.replace('mode: fast', 'mode: safe');
  const fill = async () => {
    await page.goto('/validatingwebhooks/intercept');
    await page.getByTestId('intercept-operation').selectOption('UPDATE');
    await page.getByTestId('intercept-version').fill('v1');
    await page.getByTestId('intercept-resource').fill('configmaps');
    await page.getByTestId('intercept-namespace').fill(`e2e-ns-${run}`);
    await page.getByTestId('intercept-nsLabels').fill(`${nsLabel}=yes`);
    await page.getByTestId('intercept-labels').fill('team=red');
    await page.getByTestId('intercept-oldLabels').fill('team=red');
    await page.getByTestId('intercept-user').fill('jane');
    await page.getByTestId('intercept-object').fill(object);
    await page.getByTestId('intercept-oldObject').fill(oldObject);
    await page.getByTestId('intercept-submit').click();
  };
  // Rows are told by their links (the reasons name the namespace, not the objects).
  const policy = page.getByTestId('intercept-policy-row').filter({ has: page.getByRole('link', { name, exact: true }) });
  // The console's cache sees the new objects within moments.
  await expect(async () => {
    await fill();
    await expect(policy).toHaveCount(1, { timeout: 1000 });
    await expect(page.getByTestId('intercept-row').filter({ has: page.getByRole('link', { name, exact: true }) })).toHaveCount(2, { timeout: 1000 });
  }).toPass({ timeout: 20_000 });

  const hookRow = (short: string) => page.getByTestId('intercept-row').filter({ hasText: `${short}.e2e-cel.clusterdesk.dev` });
  await expect(hookRow('data-changed').locator('td').nth(4)).toHaveText('called');
  await expect(hookRow('data-changed')).toContainText('data-changed: true');
  await expect(hookRow('team-blue').locator('td').nth(4)).toHaveText('skipped by matchConditions');
  await expect(hookRow('team-blue')).toContainText('team-blue: false');

  await expect(policy.locator('td').nth(2)).toHaveText('denies');
  await expect(policy).toContainText('validation 1: fail — mode is immutable, was safe');
  await expect(policy).toContainText(`auditAnnotation ${name}/mode-change → safe -> fast`);
  await expect(page.getByTestId('intercept-policies')).toContainText(`The API server would reject the request: ValidatingAdmissionPolicy '${name}'`);
  // The form keeps what was typed, and the answer came from a POST.
  await expect(page.getByTestId('intercept-object')).toHaveValue(object);
  expect(page.url()).not.toContain('object=');

  await page.setViewportSize({ width: 1280, height: 800 });
  const out = path.join(SCREENSHOTS_DIR, 'intercept-cel.png');
  await page.screenshot({ path: out, fullPage: true });
  await info.attach('intercept-cel.png', { path: out, contentType: 'image/png' });
});
