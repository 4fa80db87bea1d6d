// Proxy mode in its production topology: the browser opens oauth2-proxy, which
// sends it to the devcluster's OpenID provider to sign in and then forwards to
// a console in --auth proxy mode (support/oauth2proxy.ts). The console
// impersonates the OIDC user and groups with the API server's "oidc:"
// prefixes, so Kubernetes RBAC decides and the audit log names the person.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { API_CLIENT_SIGNER } from './support/env';
import { expect, test as base } from './support/fixtures';
import { call, createCSR, deleteCSR } from './support/kube';
import { PROXY_SECRET_HEADER, startProxyPair, type ProxyPair } from './support/oauth2proxy';

let pair: ProxyPair;
const created: string[] = [];

// Playwright settles baseURL before beforeAll starts the pair: pages here go
// to absolute URLs (at()), on oauth2-proxy's origin.
const test = base.extend({ baseURL: async ({}, use) => use(undefined) });
// The provider's certificate comes from devcluster's CA, which Chromium does
// not know (it reads no CA file). oauth2-proxy, which redeems the code and
// verifies the tokens, checks the provider against that CA (caFiles).
test.use({ autoLogin: false, ignoreHTTPSErrors: true });
test.describe.configure({ mode: 'serial' });

/** path on oauth2-proxy, where the browser goes. */
const at = (p: string) => `${pair.proxyURL}${p}`;

test.beforeAll(async () => {
  test.setTimeout(90_000);
  pair = await startProxyPair(fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdesk-e2e-o2p-')));
});

test.afterAll(async () => {
  for (const name of created) await deleteCSR(name);
  const problems = pair ? await pair.stop() : [];
  expect(problems, 'the console and oauth2-proxy ran without dying or logging errors').toEqual([]);
});

/** Opens oauth2-proxy, follows it to the provider's sign-in form, signs in as user and lands on the console. */
async function signInThroughProxy(page: Page, user: string): Promise<void> {
  await page.goto(at('/'));
  // oauth2-proxy sent the browser to the provider (another origin: the issuer).
  const issuer = new URL(pair.oidc.issuer);
  await page.waitForURL((u) => u.origin === issuer.origin && u.pathname === '/login');
  await page.locator('input[name="username"]').fill(user);
  await page.locator('input[name="password"]').fill(pair.oidc.users[user].password);
  await page.locator('button[name="signin"]').click();
  // Back through /oauth2/callback to the console's home, on oauth2-proxy's origin.
  await page.waitForURL((u) => u.origin === new URL(pair.proxyURL).origin && u.pathname === '/');
  await expect(page.getByTestId('user')).toHaveText(`oidc:${user}`);
}

/** A fresh pending kube-apiserver-client CSR created as admin, deleted after the spec. */
async function freshCSR(prefix: string): Promise<{ name: string; uid: string }> {
  const name = `${prefix}-oauth2proxy-${Date.now().toString(36)}`;
  await createCSR(name, API_CLIENT_SIGNER);
  created.push(name);
  const res = await call('GET', `/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}`);
  expect(res.status).toBe(200);
  return { name, uid: res.json.metadata.uid };
}

/** The API server's audit events (DEVCLUSTER_DIR/audit.log) for the approval of name. */
function approvalEvents(name: string): any[] {
  const file = path.join(process.env.DEVCLUSTER_DIR!, 'audit.log');
  return fs.readFileSync(file, 'utf8').split('\n')
    .filter((l) => l.includes(name))
    .map((l) => JSON.parse(l))
    .filter((e) => e.stage === 'ResponseComplete' && e.objectRef?.name === name && e.objectRef?.subresource === 'approval' && e.verb === 'update');
}

test('bob signs in at the OpenID provider through oauth2-proxy and approves a CSR as oidc:bob', async ({ page }) => {
  await signInThroughProxy(page, 'bob');

  // Live updates pass through oauth2-proxy: the queue joins its event stream,
  // and a CSR made meanwhile appears without a reload.
  expect((await page.goto(at('/csrs')))!.status()).toBe(200);
  await expect(page.locator('body'), 'the page joined the event stream').toHaveAttribute('data-live-state', 'connected');
  await page.evaluate(() => { (window as any).e2eSamePage = true; });
  const { name } = await freshCSR('e2e-bob');
  await expect(page.locator(`[id="row-csrs-${name}"]`), 'the new CSR arrives over the stream').toBeVisible({ timeout: 15_000 });
  expect(await page.evaluate(() => (window as any).e2eSamePage), 'no reload').toBe(true);

  expect((await page.goto(at(`/csrs/${name}`)))!.status()).toBe(200);
  await expect(page.getByTestId('detail-status')).toHaveText('Pending');
  await page.getByTestId('action-approve-message').fill('approved through oauth2-proxy');
  page.once('dialog', (d) => d.accept());
  const post = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/csrs/${name}/approve`);
  await page.getByTestId('action-approve').click();
  expect((await post).status(), 'POST approve answers with a redirect').toBe(303);
  await expect(page.getByTestId('toast-result')).toContainText(/approved/i);
  const approved = page.getByTestId('conditions').locator('[data-testid="condition"][data-type="Approved"]');
  await expect(approved).toContainText('Approved by oidc:bob via clusterdesk');

  // The API server saw the approval as oidc:bob in oidc:clusterdesk-approvers,
  // impersonated by the console's own identity (the audit log names both).
  await expect.poll(() => approvalEvents(name).length, { message: `the audit log has the approval of ${name}`, timeout: 10_000 }).toBeGreaterThan(0);
  const events = approvalEvents(name);
  expect(events).toHaveLength(1);
  const [e] = events;
  expect(e.responseStatus.code).toBe(200);
  expect(e.impersonatedUser?.username).toBe('oidc:bob');
  expect(e.impersonatedUser?.groups).toContain('oidc:clusterdesk-approvers');
  expect(e.user.username).not.toBe('oidc:bob');
});

test('carol (auditor) sees the lists but a write is refused with the API server\'s Forbidden', async ({ page }) => {
  const { name, uid } = await freshCSR('e2e-carol');
  // A header the browser sends under the proxy's names is replaced by oauth2-proxy.
  await page.context().setExtraHTTPHeaders({ 'X-Forwarded-User': 'alice', 'X-Forwarded-Groups': 'clusterdesk-admins' });
  await signInThroughProxy(page, 'carol');

  const list = await page.goto(at('/flowschemas'));
  expect(list!.status()).toBe(200);
  await expect(page.getByTestId('banner-forbidden')).toHaveCount(0);
  await expect(page.locator('[data-testid="list-row"]').first()).toBeVisible();
  await expect.poll(async () => (await page.goto(at(`/csrs/${name}`)))!.status(), { timeout: 15_000 }).toBe(200);
  await expect(page.getByTestId('detail-status')).toHaveText('Pending');
  // The console offers her no decision...
  await expect(page.getByTestId('action-approve')).toHaveCount(0);

  // ...and when she posts one anyway (her page's own CSRF token, same origin),
  // the API server refuses it and the console shows the API server's message.
  const res = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/csrs/${name}/approve`);
  await page.evaluate(({ name, uid }) => {
    const form = document.createElement('form');
    form.method = 'POST';
    form.action = `/csrs/${name}/approve`;
    const token = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')!.content;
    for (const [k, v] of Object.entries({ _csrf: token, uid, message: 'carol tries' })) {
      const input = document.createElement('input');
      input.type = 'hidden';
      input.name = k;
      input.value = v;
      form.appendChild(input);
    }
    document.body.appendChild(form);
    form.submit();
  }, { name, uid });
  expect((await res).status()).toBe(403);
  await expect(page.locator('body')).toContainText(
    `certificatesigningrequests.certificates.k8s.io "${name}" is forbidden: User "oidc:carol" cannot update resource "certificatesigningrequests/approval"`);
  const still = await call('GET', `/apis/certificates.k8s.io/v1/certificatesigningrequests/${name}`);
  expect(still.json.status?.conditions ?? []).toEqual([]);
  expect(approvalEvents(name).map((e) => [e.impersonatedUser?.username, e.responseStatus.code])).toEqual([['oidc:carol', 403]]);
});

test('the console\'s own port refuses whoever bypasses oauth2-proxy', async () => {
  const direct = async (headers: Record<string, string>) => {
    const res = await fetch(`${pair.consoleURL}/csrs`, { headers: { 'X-Forwarded-User': 'alice', 'X-Forwarded-Groups': 'clusterdesk-admins', ...headers }, redirect: 'manual' });
    return res.status;
  };
  expect(await direct({}), 'no secret').toBe(401);
  expect(await direct({ [PROXY_SECRET_HEADER]: `${pair.secret}x` }), 'a wrong secret').toBe(401);
  expect(await direct({ [PROXY_SECRET_HEADER]: pair.secret.slice(0, 16) }), 'a prefix of the secret').toBe(401);
  // The secret itself works (from loopback): the refusals above are the secret's doing.
  expect(await direct({ [PROXY_SECRET_HEADER]: pair.secret })).toBe(200);
  // Through oauth2-proxy without signing in: sent to sign in, never to the console's pages.
  const res = await fetch(`${pair.proxyURL}/csrs`, { headers: { 'X-Forwarded-User': 'alice', [PROXY_SECRET_HEADER]: pair.secret }, redirect: 'manual' });
  expect(res.status).toBe(302);
  expect(new URL(res.headers.get('location')!).origin).toBe(new URL(pair.oidc.issuer).origin);
});
