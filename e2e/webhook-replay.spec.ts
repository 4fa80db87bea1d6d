// The webhook configurations' replay (issue 45): an auditor opens a
// ValidatingWebhookConfiguration whose webhook is sent nothing, goes to
// "Replay a draft…", widens its objectSelector to a recorded CSIDriver's
// label and makes its failurePolicy Fail, and replays: the driver's create
// shows as newly sent and newly failing if the webhook were unreachable,
// naming the webhook, linking its ledger history. It runs on the ledger's
// console (support/ledger-console.ts), as replay.spec does.
import fs from 'node:fs';
import path from 'node:path';
import { expect, signInWithToken } from './support/fixtures';
import { test } from './support/ledger-console';
import { SCREENSHOTS_DIR } from './support/env';
import { call } from './support/kube';

const API = '/apis/admissionregistration.k8s.io/v1';
const NAME = `e2e-whreplay-${Date.now().toString(36)}`;
const HOOK = 'check.whreplay.e2e';

test.use({ instance: 'token', autoLogin: false });

test.afterAll(async () => {
  await call('DELETE', `/apis/storage.k8s.io/v1/csidrivers/${NAME}`);
  await call('DELETE', `${API}/validatingwebhookconfigurations/${NAME}`);
});

test('a draft that would send a recorded write to its webhook shows it as newly sent', async ({ page }) => {
  const created = [
    // Deployed: selects objects labelled e2e=never, which nothing is; port 1
    // refuses, so it is never called and, under Ignore, harms no one.
    await call('POST', `${API}/validatingwebhookconfigurations`, {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: NAME },
      webhooks: [{
        name: HOOK, clientConfig: { url: 'https://127.0.0.1:1/check' }, failurePolicy: 'Ignore', sideEffects: 'None',
        admissionReviewVersions: ['v1'], objectSelector: { matchLabels: { e2e: 'never' } },
        rules: [{ apiGroups: ['storage.k8s.io'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['csidrivers'] }],
      }],
    }),
    await call('POST', '/apis/storage.k8s.io/v1/csidrivers', {
      apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name: NAME, labels: { e2e: NAME } }, spec: {},
    }),
  ];
  for (const r of created) expect(r.status, JSON.stringify(r.json).slice(0, 300)).toBe(201);

  await signInWithToken(page, 'auditor');
  await expect.poll(async () => (await page.goto(`/validatingwebhooks/${NAME}`))!.status(),
    { message: `the console shows ${NAME}`, timeout: 15_000 }).toBe(200);
  await page.getByTestId('replay-link').click();
  await expect(page.getByTestId('replay-title')).toContainText(NAME);
  await expect(page).toHaveURL(new RegExp(`/validatingwebhooks/${NAME}/replay$`));

  // The draft: the driver's label selected, and Fail.
  const draft = page.getByTestId('replay-draft');
  const text = await draft.inputValue();
  expect(text).toContain('e2e: never');
  await draft.fill(text.replace('e2e: never', `e2e: ${NAME}`).replace('failurePolicy: Ignore', 'failurePolicy: Fail'));
  await page.getByTestId('replay-window').selectOption('1h');

  // The API server sends its audit events in batches: replay until the
  // driver's write has arrived.
  await expect(async () => {
    await page.getByTestId('replay-submit').click();
    await expect(page.getByTestId('replay-newly-sent')).toHaveText('1', { timeout: 3_000 });
  }).toPass({ timeout: 30_000, intervals: [500, 1000, 2000] });
  await expect(page.getByTestId('replay-newly-failing')).toHaveText('1');

  const group = page.getByTestId('replay-group').filter({ hasText: 'csidrivers.storage.k8s.io' });
  await expect(group).toContainText('1 newly sent, 1 newly failing if unreachable');
  await group.locator('summary').click();
  const request = group.getByTestId('replay-request');
  await expect(request).toContainText(NAME);
  await expect(request).toContainText(`webhook ${HOOK}`);
  await expect(request).toContainText('sent (Fail) / not sent');
  await expect(request.getByTestId('replay-request-ledger')).toHaveAttribute('href', `/ledger/csidrivers/${NAME}`);

  fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'webhook-replay.png'), fullPage: true });
});
