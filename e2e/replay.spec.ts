// The replay (issue 45): an auditor opens a ValidatingAdmissionPolicy, goes
// to "Replay a draft…", tightens the draft and replays it against the writes
// the API server reported to the console's audit webhook; the CSIDriver the
// deployed policy admitted shows as newly denied, in its group, linking its
// ledger history. The replay runs as a background job whose end the page
// learns over its event stream. It runs on the ledger's console
// (support/ledger-console.ts).
import fs from 'node:fs';
import path from 'node:path';
import { expect, signInWithToken } from './support/fixtures';
import { test } from './support/ledger-console';
import { SCREENSHOTS_DIR } from './support/env';
import { deployCSIDriverPolicy, removeCSIDriverPolicy } from './support/csidriver-policy';

const NAME = `e2e-replay-${Date.now().toString(36)}`;

test.use({ instance: 'token', autoLogin: false });

test.afterAll(async () => { await removeCSIDriverPolicy(NAME); });

test('a draft that would deny a recorded write shows it as newly denied', async ({ page }) => {
  // Deployed: admits every CSIDriver of this spec's name (only this one matches).
  await deployCSIDriverPolicy(NAME, "object.metadata.name != ''");

  await signInWithToken(page, 'auditor');
  await expect.poll(async () => (await page.goto(`/validatingadmissionpolicies/${NAME}`))!.status(),
    { message: `the console shows ${NAME}`, timeout: 15_000 }).toBe(200);
  await page.getByTestId('replay-link').click();
  await expect(page.getByTestId('replay-title')).toContainText(NAME);

  // The draft: the same policy, now requiring a label the driver lacks.
  const draft = page.getByTestId('replay-draft');
  const text = await draft.inputValue();
  expect(text).toContain("object.metadata.name != ''");
  await draft.fill(text.replace("object.metadata.name != ''", "has(object.metadata.labels) && 'team' in object.metadata.labels"));
  await page.getByTestId('replay-window').selectOption('1h');

  // The API server sends its audit events in batches: replay until the
  // driver's write has arrived. Each replay runs in the background: the POST
  // answers with its progress bar, the page's event stream says when it is
  // done and the result replaces the bar (htmx swaps the outcome in place).
  await expect(async () => {
    await page.getByTestId('replay-submit').click();
    await expect(page.getByTestId('replay-newly-denied')).toHaveText('1', { timeout: 3_000 });
  }).toPass({ timeout: 30_000, intervals: [500, 1000, 2000] });
  await expect(page, 'htmx swapped the outcome in place').toHaveURL(new RegExp(`/validatingadmissionpolicies/${NAME}/replay$`));
  await expect(page.getByTestId('replay-job'), 'the result replaced the progress bar').toHaveCount(0);

  const group = page.getByTestId('replay-group').filter({ hasText: 'csidrivers.storage.k8s.io' });
  await expect(group).toContainText('1 newly denied');
  await group.locator('summary').click();
  const request = group.getByTestId('replay-request');
  await expect(request).toContainText(NAME);
  await expect(request).toContainText('a team label is required');
  await expect(request.getByTestId('replay-request-ledger')).toHaveAttribute('href', `/ledger/csidrivers/${NAME}`);

  fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await page.evaluate(() => window.scrollTo(0, 0)); // the sticky header stays on top of a full-page shot
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'replay.png'), fullPage: true });
});
