// Every list fits the window at 1280 and 1024 px (issue 19, point 6): no
// sideways scrolling of the page or of any table, the primary columns
// visible, and the worst real shapes present while it is measured: a CSR
// with a 253-character name and 200 SANs, a webhook configuration with a
// 253-character name, a CSR asked by a node whose name is one 63-character
// label without dots (GKE and EKS name nodes like that: nothing to wrap at). Also: a 200-SAN CSR shows 5 SANs and "195 more",
// which opens to all of them, on its page and in the queue. Screenshots of
// the CSR queue, FlowSchemas, webhooks and CRDs at both widths:
// e2e/artifacts/screenshots/width-*.png.
import path from 'node:path';
import type { Page } from '@playwright/test';
import { SCREENSHOTS_DIR } from './support/env';
import { expect, test } from './support/fixtures';
import { call, createCSR, deleteCSR } from './support/kube';

const RUN = `lw19-${Date.now().toString(36)}`;

/** A DNS-subdomain name of exactly 253 characters starting with prefix. */
function longName(prefix: string): string {
  let name = prefix;
  while (name.length < 253) {
    const room = 253 - name.length - 1; // the dot
    if (room < 1) {
      name = name.slice(0, 252) + 'z';
      break;
    }
    name += '.' + 'x'.repeat(Math.min(63, room));
  }
  return name;
}

const CSR_NAME = longName(`${RUN}-csr`);
const WEBHOOK_NAME = longName(`${RUN}-webhook`);
const ISSUER_NAME = `${RUN}-issuer`;
// A node name that is one DNS label of the longest length, no dot to break at.
const NODE_NAME = `gke-${RUN}-default-pool-`.padEnd(63, 'a1b2c3d4');
const NODE_CSR = `${RUN}-node-csr`;
const SANS = Array.from({ length: 200 }, (_, i) => `san-${String(i).padStart(3, '0')}.${RUN}.example.com`);
const WEBHOOK_API = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const ISSUERS_API = '/apis/cert-manager.io/v1/namespaces/default/issuers';

// Each list, and the columns that must stay visible at 1024 px.
const LISTS: { path: string; primary: string[]; shot?: string }[] = [
  { path: '/csrs', primary: ['queue', 'condition', 'checks'], shot: 'csr-queue' },
  { path: '/flowschemas', primary: ['name', 'order', 'prioritylevel', 'rules'], shot: 'flowschemas' },
  { path: '/prioritylevels', primary: ['name', 'type'] },
  { path: '/crds', primary: ['name', 'kind', 'established', 'lints'], shot: 'crds' },
  { path: '/validatingwebhooks', primary: ['name', 'failure', 'lints'], shot: 'validatingwebhooks' },
  { path: '/mutatingwebhooks', primary: ['name', 'failure', 'lints'] },
  { path: '/validatingadmissionpolicies', primary: ['name', 'validations', 'failure'] },
  { path: '/validatingadmissionpolicybindings', primary: ['name', 'policy', 'actions'] },
  { path: '/csidrivers', primary: ['name', 'attach', 'modes', 'fsgroup'] },
  { path: '/priorityclasses', primary: ['name', 'value'] },
  { path: '/crds/issuers.cert-manager.io/instances', primary: ['Name', 'Namespace'] },
];

async function created(res: Promise<{ status: number; json: any }>, what: string): Promise<void> {
  const r = await res;
  expect(r.status, `${what}: ${JSON.stringify(r.json).slice(0, 300)}`).toBeLessThan(300);
}

test.beforeAll(async () => {
  await createCSR(CSR_NAME, 'example.com/lw19-signer', `${RUN}.example.com`, SANS);
  // The admin impersonates the node (only the requester's name matters here).
  await createCSR(NODE_CSR, 'example.com/lw19-signer', `system:node:${NODE_NAME}`, [NODE_NAME],
    { user: `system:node:${NODE_NAME}`, groups: ['system:masters', 'system:nodes', 'system:authenticated'] });
  await created(call('POST', WEBHOOK_API, {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration',
    metadata: { name: WEBHOOK_NAME },
    // Matches only a resource that does not exist, and ignores failures: it
    // never touches another test's requests on the shared cluster.
    webhooks: [{
      name: `check.${RUN}.example.com`,
      clientConfig: { url: `https://${RUN}.example.invalid/validate` },
      rules: [{ operations: ['CREATE'], apiGroups: [`${RUN}.example.com`], apiVersions: ['v1'], resources: ['nothings'] }],
      failurePolicy: 'Ignore', sideEffects: 'None', admissionReviewVersions: ['v1'], timeoutSeconds: 5,
    }],
  }), 'create the long-named webhook configuration');
  await created(call('POST', ISSUERS_API, {
    apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: ISSUER_NAME, namespace: 'default' }, spec: { selfSigned: {} },
  }), 'create an Issuer');
});

test.afterAll(async () => {
  await deleteCSR(CSR_NAME);
  await deleteCSR(NODE_CSR);
  await call('DELETE', `${WEBHOOK_API}/${WEBHOOK_NAME}`);
  await call('DELETE', `${ISSUERS_API}/${ISSUER_NAME}`);
});

/** Widths that overflow: the page's, and each table's beyond its scroll container. */
async function overflow(page: Page): Promise<{ doc: number; win: number; tables: string[] }> {
  return page.evaluate(() => {
    const tables: string[] = [];
    document.querySelectorAll('table').forEach((t, i) => {
      const box = t.parentElement!;
      if (t.scrollWidth <= box.clientWidth + 1) return;
      // Name the widest cell of each column, so a failure says what to fix.
      const widest = new Map<string, { w: number; text: string }>();
      t.querySelectorAll('tbody tr > *').forEach((c) => {
        const key = (c as HTMLElement).dataset.column || `#${(c as HTMLTableCellElement).cellIndex}`;
        const w = (c as HTMLElement).getBoundingClientRect().width;
        if (w > (widest.get(key)?.w ?? 0)) widest.set(key, { w: Math.round(w), text: (c.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 80) });
      });
      const cols = [...widest].map(([k, v]) => `${k} ${v.w}px "${v.text}"`).join('; ');
      tables.push(`table ${i}: ${t.scrollWidth} > ${box.clientWidth}; widest cells: ${cols}`);
    });
    return { doc: document.documentElement.scrollWidth, win: window.innerWidth, tables };
  });
}

for (const width of [1280, 1024]) {
  test(`every list fits ${width} px without sideways scrolling`, async ({ page }, info) => {
    test.setTimeout(180_000);
    await page.setViewportSize({ width, height: 800 });
    for (const list of LISTS) {
      // The worst shapes on the page being measured: the 253-character names.
      const url = list.path === '/csrs' ? `/csrs?q=${RUN}` : list.path === '/validatingwebhooks' ? `/validatingwebhooks?q=${RUN}` : list.path;
      for (const u of new Set([url, list.path])) {
        const res = await page.goto(u);
        expect(res!.status(), `GET ${u}`).toBe(200);
        await expect(page.getByTestId('list-row').first(), `${u} has rows`).toBeVisible();
        const o = await overflow(page);
        expect(o.doc, `${u} at ${width} px: document ${o.doc} wider than the window ${o.win}`).toBeLessThanOrEqual(o.win);
        expect(o.tables, `${u} at ${width} px: tables wider than their containers`).toEqual([]);
        for (const key of list.primary) {
          const th = page.locator(`thead th[data-column="${key}"]`).or(page.locator('thead th', { hasText: new RegExp(`^${key}$`) }));
          await expect(th.first(), `${u} at ${width} px: primary column ${key}`).toBeVisible();
        }
      }
      if (list.shot) {
        await page.goto(url);
        const file = `width-${list.shot}-${width}.png`;
        await page.screenshot({ path: path.join(SCREENSHOTS_DIR, file) });
        await info.attach(file, { path: path.join(SCREENSHOTS_DIR, file), contentType: 'image/png' });
      }
    }
    // The long names are cut short, whole in the title.
    await page.goto(`/validatingwebhooks?q=${RUN}`);
    await expect(page.locator('th[scope=row]', { hasText: RUN }).first()).toHaveAttribute('title', WEBHOOK_NAME);
  });
}

test('a 200-SAN CSR shows 5 and "195 more", which opens to all of them', async ({ page }) => {
  await page.goto(`/csrs/${CSR_NAME}`);
  const dns = page.getByTestId('field-dns-names');
  await expect(dns).toContainText(SANS[0]);
  await expect(dns).toContainText(SANS[4]);
  const more = dns.getByTestId('more-values');
  await expect(more.getByTestId('more-summary')).toHaveText('195 more');
  await expect(more.getByTestId('more-value').first()).toBeHidden();
  await more.getByTestId('more-summary').click();
  await expect(more.getByTestId('more-value')).toHaveCount(195);
  await expect(more.getByTestId('more-value').last()).toBeVisible();
  await expect(more.getByTestId('more-value').last()).toHaveText(SANS[199]);

  // The queue row: the first SANs in the subject line, the rest behind "195 more",
  // fetched only when it opens (a page of 200-SAN rows stays small).
  await page.goto(`/csrs?q=${RUN}`);
  const row = page.locator(`[data-name="${CSR_NAME}"]`);
  await expect(row.getByTestId('row-subject')).toContainText(SANS[4]);
  await expect(row.getByTestId('row-subject')).not.toContainText(SANS[5]);
  const rowMore = row.getByTestId('more-values');
  await expect(rowMore.getByTestId('more-summary')).toHaveText('195 more');
  expect(await page.content()).not.toContain(SANS[199]);
  const fetched = page.waitForResponse((r) => r.url().includes(`/csrs/${CSR_NAME}/sans?uid=`) && r.status() === 200);
  await rowMore.getByTestId('more-summary').click();
  await fetched;
  await expect(rowMore.getByTestId('more-value')).toHaveCount(195);
  await expect(rowMore.getByTestId('more-value').last()).toHaveText(`DNS ${SANS[199]}`);
});
