// The editor's "Replay against recorded writes" (issue 45): an admin opens a
// deployed ValidatingAdmissionPolicy's YAML editor, tightens it, and before
// Apply replays the text against the writes the API server reported to the
// console's audit webhook: the CSIDriver the deployed policy admitted shows as
// newly denied, beside the text, which is still the admin's; Preview then
// works on it as it would have before. It runs on the ledger's console, here
// a writable one (support/ledger-console.ts: the editor is refused in
// --read-only).
import fs from 'node:fs';
import path from 'node:path';
import { expect, signInWithToken } from './support/fixtures';
import { test } from './support/ledger-console';
import { SCREENSHOTS_DIR } from './support/env';
import { call } from './support/kube';
import { deployCSIDriverPolicy, removeCSIDriverPolicy } from './support/csidriver-policy';

const API = '/apis/admissionregistration.k8s.io/v1';
const NAME = `e2e-editor-replay-${Date.now().toString(36)}`;
const DEPLOYED = "object.metadata.name != ''";
const DRAFT = "has(object.metadata.labels) && 'team' in object.metadata.labels";

test.use({ instance: 'token', autoLogin: false, ledgerReadOnly: false });

test.afterAll(async () => { await removeCSIDriverPolicy(NAME); });

test("the policy's editor replays the text being edited, and keeps it", async ({ page }) => {
  // Deployed: admits every CSIDriver of this spec's name (only this one matches).
  await deployCSIDriverPolicy(NAME, DEPLOYED);

  await signInWithToken(page, 'admin');
  await expect.poll(async () => (await page.goto(`/validatingadmissionpolicies/${NAME}`))!.status(),
    { message: `the console shows ${NAME}`, timeout: 15_000 }).toBe(200);
  await page.getByTestId('edit-link').click();
  await expect(page.getByTestId('editor-title')).toHaveText(`Edit ${NAME}`);

  // The admin's change, typed into the editor (CodeMirror over the textarea).
  const yaml = page.getByTestId('editor-yaml');
  const text = (await yaml.inputValue()).replace(DEPLOYED, DRAFT);
  expect(text).toContain(DRAFT);
  await page.waitForLoadState('load');
  await page.getByTestId('editor-code').click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
  await expect(yaml).toHaveValue(text);
  await page.getByTestId('editor-replay-window').selectOption('1h');

  // The API server sends its audit events in batches: replay until the
  // driver's write has arrived. Each answer is the editor again with the
  // text, so the next click replays the same text.
  await expect(async () => {
    await page.getByTestId('editor-replay-submit').click();
    await expect(page.getByTestId('replay-newly-denied')).toHaveText('1', { timeout: 3_000 });
  }).toPass({ timeout: 30_000, intervals: [500, 1000, 2000] });
  await expect(page).toHaveURL(new RegExp(`/validatingadmissionpolicies/-/replay\\?name=${NAME}$`));
  await expect(page.getByTestId('editor-replay-basis')).toContainText(`binding "${NAME}"`);
  await expect(page.getByTestId('replay-job'), 'the result replaced the progress bar').toHaveCount(0);
  const group = page.getByTestId('replay-group').filter({ hasText: 'csidrivers.storage.k8s.io' });
  await expect(group).toContainText('1 newly denied');

  // The text is the admin's, in the editor, with the version it started from.
  await expect(page.getByTestId('editor-title')).toHaveText(`Edit ${NAME}`);
  await expect(yaml).toHaveValue(text);
  await expect(page.getByTestId('editor-resource-version')).toHaveAttribute('value', /^\d+$/);

  fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await page.evaluate(() => window.scrollTo(0, 0)); // the sticky header stays on top of a full-page shot
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'editor-replay.png'), fullPage: true });

  // Nothing was applied; Preview goes on from the same text.
  const deployed = await call('GET', `${API}/validatingadmissionpolicies/${NAME}`);
  expect(deployed.json.spec.validations[0].expression).toBe(DEPLOYED);
  await page.getByTestId('editor-preview').click();
  await expect(page.getByTestId('preview-diff')).toContainText("'team' in object.metadata.labels");
  await expect(yaml).toHaveValue(text);
});
