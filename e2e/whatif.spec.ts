// The APF what-if (issue 46): an admin opens the FlowSchemas, goes to
// "What if…", pastes a draft that sends every authenticated user's requests
// (but the exempt ones) to a level of its own, and runs it over the last
// hour of traffic the API server reported to the console's audit webhook.
// The run is a background job whose progress comes over the page's event
// stream; its result shows the flows moved and a plot per changed level.
// It runs on the ledger's writable console (the draft is dry-run as the
// user: support/ledger-console.ts).
import fs from 'node:fs';
import path from 'node:path';
import { expect, signInWithToken } from './support/fixtures';
import { test } from './support/ledger-console';
import { SCREENSHOTS_DIR } from './support/env';
import { expectAccessible } from './support/axe';

const NAME = `e2e-whatif-${Date.now().toString(36)}`;

test.use({ instance: 'token', autoLogin: false, ledgerReadOnly: false });

const draft = `apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata:
  name: ${NAME}
spec:
  priorityLevelConfiguration:
    name: ${NAME}
  matchingPrecedence: 2
  distinguisherMethod:
    type: ByUser
  rules:
  - subjects:
    - kind: Group
      group:
        name: system:authenticated
    resourceRules:
    - verbs: ["*"]
      apiGroups: ["*"]
      resources: ["*"]
      namespaces: ["*"]
      clusterScope: true
    nonResourceRules:
    - verbs: ["*"]
      nonResourceURLs: ["*"]
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata:
  name: ${NAME}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 5
    lendablePercent: 0
    borrowingLimitPercent: 0
    limitResponse:
      type: Queue
      queuing:
        queues: 16
        handSize: 4
        queueLengthLimit: 10
`;

test('a draft moving the authenticated users to a level of their own shows the moved flows and the plot', async ({ page, newContext }) => {
  // Traffic that is not exempt: the console asks the API server as the
  // signed-in auditor (access reviews, reads) while they browse.
  const auditor = await (await newContext()).newPage();
  await signInWithToken(auditor, 'auditor');
  for (const p of ['/flowschemas', '/prioritylevels', '/csrs', '/flowschemas']) await auditor.goto(p);

  await signInWithToken(page, 'admin');
  await page.goto('/flowschemas');
  await page.getByTestId('whatif-link').click();
  await expect(page).toHaveURL(/\/prioritylevels\/-\/whatif$/);
  await page.getByTestId('whatif-draft').fill(draft);
  await page.getByTestId('whatif-window').selectOption('1h');

  // The audit webhook receives events in batches: run until some traffic
  // of the window has arrived and a flow moves.
  await expect(async () => {
    await page.getByTestId('whatif-submit').click();
    await expect(page.getByTestId('whatif-summary')).toBeVisible({ timeout: 10_000 });
    await expect(page.getByTestId('whatif-moved').getByTestId('whatif-flow').first()).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: 60_000, intervals: [1000, 2000, 4000] });
  await expect(page, 'htmx swapped the outcome in place').toHaveURL(/\/prioritylevels\/-\/whatif$/);
  await expect(page.getByTestId('replay-job'), 'the result replaced the progress bar').toHaveCount(0);
  await expect(page.getByTestId('whatif-moved').getByTestId('whatif-flow-after').first()).toContainText(`${NAME} → ${NAME}`);

  const level = page.locator(`[data-testid=whatif-level][data-level="${NAME}"]`);
  const plot = level.getByTestId('whatif-plot');
  await expect(plot.locator('svg[role=img] title')).toHaveText(`Seats in use in ${NAME} over the window`);
  await expect(plot.locator('polyline[data-series=after-seats]')).toHaveCount(1);
  await expect(page.getByTestId('whatif-left-out')).toContainText('A LIST weighs the seats');
  // The result, its tables and its SVG plots pass axe as every page does.
  await expectAccessible(page, 'the what-if result');

  fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await plot.scrollIntoViewIfNeeded();
  await plot.screenshot({ path: path.join(SCREENSHOTS_DIR, 'whatif-plot.png') });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(SCREENSHOTS_DIR, 'whatif.png'), fullPage: true });
});

test("a priority level's page runs the backtest over the last day and comes back to say it", async ({ page }) => {
  await signInWithToken(page, 'admin');
  await page.goto('/prioritylevels/global-default');
  await expect(page.getByTestId('whatif-backtest')).toBeVisible();
  await page.getByTestId('action-whatif-backtest-run').click();
  // The job's page follows the run over its event stream, then sends the
  // browser back to the level (HX-Redirect of the ended job's fetch).
  await page.waitForURL((u) => u.pathname === '/prioritylevels/global-default', { timeout: 60_000 });
  await expect(page.getByTestId('whatif-backtest')).toContainText('Over the last day this model predicted');
  await expect(page.getByTestId('whatif-backtest')).toContainText('the API server answered');
});
