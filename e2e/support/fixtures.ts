// The test object every spec uses. It adds:
//  - instance: which console a test talks to ('admin' or 'readonly'), set with test.use;
//  - a page that is already signed in through a one-time login URL (autoLogin: false to opt out);
//  - a guard on every page of every context the test opens: console errors, uncaught
//    exceptions and Content-Security-Policy violations fail the test;
//  - newContext(): more browser contexts (e.g. JavaScript disabled) under the same guard.
import fs from 'node:fs';
import path from 'node:path';
import { test as base, expect, type BrowserContext, type BrowserContextOptions, type Page } from '@playwright/test';
import { ENV_RUN_DIR, envBaseURL, type Instance } from './env';
import { bearerToken } from './kube';

export { expect };

export function consoleURL(instance: Instance): string {
  const url = process.env[envBaseURL(instance)];
  if (!url) throw new Error(`${envBaseURL(instance)} is not set: the global setup did not start the ${instance} console`);
  return url;
}

/**
 * Takes the newest one-time login URL the console printed. The global setup
 * keeps it in <run dir>/<instance>/login-url; renaming the file claims it, so
 * no URL is handed out twice. The console prints the next one only after this
 * one is redeemed, so redeem it right away.
 */
export async function claimLoginURL(instance: Instance, timeoutMs = 10_000): Promise<string> {
  const runDir = process.env[ENV_RUN_DIR];
  if (!runDir) throw new Error(`${ENV_RUN_DIR} is not set: the global setup did not run`);
  const file = path.join(runDir, instance, 'login-url');
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; ; i++) {
    const claimed = `${file}.claimed.${process.pid}.${Date.now()}.${i}`;
    try {
      fs.renameSync(file, claimed);
      const url = fs.readFileSync(claimed, 'utf8').trim();
      fs.rmSync(claimed, { force: true });
      return url;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    if (Date.now() > deadline) {
      throw new Error(`no unused login URL from the ${instance} console within ${timeoutMs} ms ` +
        '(it prints the next one only after the previous one was redeemed)');
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Signs a page's context in: redeems the one-time URL (local mode) with the
 * context's own request API, or pastes the devcluster auditor's token (token
 * mode). The page stays where it was (a new page: about:blank).
 *
 * Why not open the URL in the page: the console's answer is a 303 to the home
 * page, which most tests leave at once; drawing it cost Chromium about
 * 0.3 CPU-s a test (lists and auth specs, 23 tests: 53 CPU-s before, 45-49
 * after, stop 61), on the CI's 2 cores that every layer shares. The request shares
 * the context's cookie jar, so the session cookie it gets is the one the
 * page's later navigations send. signInInBrowser is the flow as a person
 * goes through it; auth.spec.ts tests that one. */
export async function signIn(page: Page, instance: Instance): Promise<void> {
  if (instance === 'token') return signInWithToken(page, 'auditor');
  const url = await claimLoginURL(instance);
  const res = await page.context().request.get(url, { maxRedirects: 0 });
  expect(res.status(), 'GET /login?token=… should answer 303 to the home page').toBe(303);
  expect(new URL(res.headers()['location'], url).pathname).toBe('/');
  const cookies = await page.context().cookies(url);
  expect(cookies.map((c) => c.name), 'the session cookie from the login URL').toContain('clusterdesk_session');
}

/** Signs a page's context in as a person would: opening the one-time URL in
 * the page, which ends on the home page. */
export async function signInInBrowser(page: Page, instance: Instance): Promise<void> {
  const url = await claimLoginURL(instance);
  const res = await page.goto(url);
  expect(res, 'login navigation').not.toBeNull();
  expect(res!.status(), `GET /login?token=… should end on the home page`).toBe(200);
  expect(new URL(page.url()).pathname).toBe('/');
}

/** Token mode: pastes the devcluster identity's bearer token into the sign-in form. */
export async function signInWithToken(page: Page, identity: string): Promise<void> {
  const res = await page.goto('/login');
  expect(res!.status()).toBe(200);
  await page.getByTestId('token-input').fill(bearerToken(identity));
  await page.getByTestId('token-submit').click();
  await page.waitForURL((u) => u.pathname === '/');
  await expect(page.getByTestId('user')).toHaveText(identity);
}

interface ConsoleEntry {
  page: string;
  type: string;
  text: string;
  url: string;
}

// Reports CSP violations as console errors even where Chromium would not
// (the listener is installed by Playwright, outside the page's CSP).
const CSP_LISTENER = `document.addEventListener('securitypolicyviolation', (e) => {
  console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') +
    ' in ' + e.sourceFile + ':' + e.lineNumber);
});`;

/** Collects what must not happen in any page a test opens. */
export class Guard {
  private entries: ConsoleEntry[] = [];
  private pageErrors: string[] = [];
  // Status of every document (and htmx) response, to recognise Chromium's
  // "Failed to load resource" line for a page whose 4xx status the test expects.
  // One URL may answer with several (a form POST refused with 409, then accepted).
  private documentStatus = new Map<string, Set<number>>();

  async attach(context: BrowserContext): Promise<void> {
    await context.addInitScript({ content: CSP_LISTENER });
    context.on('page', (p) => this.watch(p));
    for (const p of context.pages()) this.watch(p);
  }

  private watch(page: Page) {
    page.on('console', (msg) => {
      const text = msg.text();
      if (msg.type() === 'error' || /Content.Security.Policy/i.test(text)) {
        this.entries.push({ page: page.url(), type: msg.type(), text, url: msg.location().url });
      }
    });
    page.on('pageerror', (err) => this.pageErrors.push(`uncaught exception on ${page.url()}: ${err.stack || err.message}`));
    page.on('response', (res) => {
      // htmx requests too: a fragment answered with an expected 4xx (a list's
      // bad label selector is a 400 the page shows).
      if (res.request().resourceType() !== 'document' && !res.request().headers()['hx-request']) return;
      const seen = this.documentStatus.get(res.url()) ?? new Set<number>();
      this.documentStatus.set(res.url(), seen.add(res.status()));
    });
  }

  problems(): string[] {
    const out = [...this.pageErrors];
    for (const e of this.entries) {
      const failed = /^Failed to load resource: the server responded with a status of (\d+)/.exec(e.text);
      // A page the test navigated to with an error status (401 login, 404, ...):
      // the test asserts that status itself.
      if (failed && this.documentStatus.get(e.url)?.has(Number(failed[1]))) continue;
      out.push(`console.${e.type} on ${e.page}: ${e.text}${e.url ? ` (${e.url})` : ''}`);
    }
    return out;
  }
}

type Fixtures = {
  instance: Instance;
  autoLogin: boolean;
  guard: Guard;
  newContext: (options?: BrowserContextOptions) => Promise<BrowserContext>;
};

export const test = base.extend<Fixtures>({
  instance: ['admin', { option: true }],
  autoLogin: [true, { option: true }],
  baseURL: async ({ instance }, use) => {
    await use(consoleURL(instance));
  },
  guard: [
    async ({}, use) => {
      const guard = new Guard();
      await use(guard);
      const problems = guard.problems();
      if (problems.length) {
        throw new Error(`the browser reported ${problems.length} problem(s) (console errors, uncaught exceptions or CSP violations):\n` +
          problems.map((p) => `  - ${p}`).join('\n'));
      }
    },
    { auto: true },
  ],
  context: async ({ context, guard }, use) => {
    await guard.attach(context);
    await use(context);
  },
  page: async ({ page, autoLogin, instance }, use) => {
    if (autoLogin) await signIn(page, instance);
    await use(page);
  },
  newContext: async ({ browser, guard, baseURL, viewport }, use) => {
    const made: BrowserContext[] = [];
    await use(async (options = {}) => {
      const ctx = await browser.newContext({ baseURL, viewport, ...options });
      await guard.attach(ctx);
      made.push(ctx);
      return ctx;
    });
    for (const ctx of made) await ctx.close();
  },
});
