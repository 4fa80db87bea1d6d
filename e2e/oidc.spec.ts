// OIDC sign-in (--auth oidc) through the devcluster's OpenID provider: the
// spec starts its own console (the global setup's consoles run on devclusters
// that may have no provider), signs in on the provider's own form and checks
// that the console then acts as that person: alice (admins) sees her name and
// the data, dave (no group) gets the API server's refusals as Forbidden banners.
import fs from 'node:fs';
import path from 'node:path';
import { expect, test as base } from './support/fixtures';
import { adminKubeconfig } from './support/env';
import type { ConsoleServer } from './support/server';
import { readyJSON, workerConsole } from './support/worker-console';
import type { Page } from '@playwright/test';

interface Provider {
  issuer: string;
  caFile: string;
  clients: Record<string, { secret: string }>;
  users: Record<string, { password: string }>;
}

function provider(): Provider {
  const ready = readyJSON();
  if (!ready.oidc) throw new Error(`the devcluster in ${process.env.DEVCLUSTER_DIR} runs no OpenID provider (ready.json names none)`);
  return JSON.parse(fs.readFileSync(ready.oidc, 'utf8'));
}

// The console in oidc mode, one for the spec's worker (support/worker-console.ts).
const test = base.extend<object, { oidcConsole: ConsoleServer }>({
  oidcConsole: [async ({}, use) => {
    const idp = provider();
    await workerConsole('oidc', (runDir) => {
      const secret = path.join(runDir, 'client-secret');
      fs.writeFileSync(secret, idp.clients.clusterdesk.secret, { mode: 0o600 });
      return ['--listen', '127.0.0.1:0', '--kubeconfig', adminKubeconfig(), '--auth', 'oidc',
        '--oidc-issuer-url', idp.issuer, '--oidc-client-id', 'clusterdesk',
        '--oidc-client-secret-file', secret, '--oidc-ca-file', idp.caFile];
    })({}, use);
  }, { scope: 'worker' }],
  baseURL: async ({ oidcConsole }, use) => {
    await use(oidcConsole.baseURL);
  },
});

test.use({ instance: 'oidc', autoLogin: false });
// The provider's certificate comes from devcluster's CA, which Chromium does
// not know; the console itself verifies the issuer (--oidc-ca-file).
test.use({ ignoreHTTPSErrors: true });

/** Signs in as username on the provider's form, from the console's sign-in page. */
async function signInAt(page: Page, baseURL: string, username: string) {
  const home = await page.goto('/');
  expect(home!.status()).toBe(401);
  await page.getByTestId('oidc-signin').click();
  await page.waitForURL((u) => u.origin === new URL(provider().issuer).origin);
  await page.locator('input[name="username"]').fill(username);
  await page.locator('input[name="password"]').fill(provider().users[username].password);
  await page.locator('button[name="signin"]').click();
  // Back through the callback, whose page goes on to the console's home.
  await page.waitForURL((u) => u.origin === baseURL && u.pathname === '/');
}

test('alice signs in at the OpenID provider and the console names her', async ({ page, baseURL }) => {
  await signInAt(page, baseURL!, 'alice');
  await expect(page.getByTestId('user')).toHaveText('oidc:alice');
  // No cookie the page's JavaScript can read holds the session or a token.
  expect(await page.evaluate(() => document.cookie)).toBe('');
  const list = await page.goto('/flowschemas');
  expect(list!.status()).toBe(200);
  await expect(page.getByTestId('banner-forbidden')).toHaveCount(0);
  await expect(page.locator('[data-testid="list-row"]').first()).toBeVisible();

  // Signing out ends the session: the next page asks to sign in again.
  await page.getByTestId('logout').getByRole('button').click();
  await expect(page.getByTestId('oidc-signin')).toBeVisible();
  const again = await page.goto('/');
  expect(again!.status()).toBe(401);
});

test('dave, who may do nothing, sees the API server refuse him', async ({ page, baseURL }) => {
  await signInAt(page, baseURL!, 'dave');
  await expect(page.getByTestId('user')).toHaveText('oidc:dave');
  // The list the API server does not let him read: 403 with the Forbidden banner.
  const list = await page.goto('/flowschemas');
  expect(list!.status()).toBe(403);
  await expect(page.getByTestId('banner-forbidden')).toBeVisible();
  await expect(page.locator('[data-testid="list-row"]')).toHaveCount(0);
});

test('declining at the provider shows why nobody is signed in', async ({ page, baseURL }) => {
  await page.goto('/login');
  await page.getByTestId('oidc-signin').click();
  await page.waitForURL((u) => u.origin === new URL(provider().issuer).origin);
  await page.locator('button[name="deny"]').click();
  await page.waitForURL((u) => u.origin === baseURL);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Sign-in was declined');
  await expect(page.getByTestId('oidc-signin')).toBeVisible();
});
