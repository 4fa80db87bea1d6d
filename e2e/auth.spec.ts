// Signing in with the one-time URL; no page without a session.
import { KINDS } from './support/env';
import { claimLoginURL, expect, signInInBrowser, test } from './support/fixtures';

test.use({ autoLogin: false });

test('the one-time login URL signs in once and redirects home', async ({ page, context, baseURL, newContext }) => {
  const loginURL = await claimLoginURL('admin');
  expect(loginURL.startsWith(`${baseURL}/login?token=`)).toBe(true);

  const res = await page.goto(loginURL);
  const login = res!.request().redirectedFrom();
  expect(login, 'GET /login?token=… should redirect').not.toBeNull();
  const loginRes = await login!.response();
  expect(loginRes!.status()).toBe(303);
  expect(loginRes!.headers()['location']).toBe('/');
  expect(res!.status()).toBe(200);
  await expect(page).toHaveURL(`${baseURL}/`); // the token is not left in the address bar

  const session = (await context.cookies()).find((c) => c.name === 'clusterdesk_session');
  expect(session, 'session cookie').toBeDefined();
  expect(session!.httpOnly).toBe(true);
  expect(session!.sameSite).toBe('Strict');

  for (const kind of KINDS) await expect(page.getByTestId(`home-kind-${kind}`)).toBeVisible();
  await expect(page.getByTestId('readonly-badge')).toHaveCount(0);

  // The same URL a second time (another browser): refused, no session.
  const other = await (await newContext()).newPage();
  const again = await other.goto(loginURL);
  expect(again!.status()).toBe(401);
  await expect(other.getByTestId('login')).toBeVisible();
  expect((await other.context().cookies()).some((c) => c.name === 'clusterdesk_session')).toBe(false);
});

test('without a session every page answers 401 with the login page', async ({ page }) => {
  for (const path of ['/csrs', '/', '/flowschemas?q=system', '/csrs/any-name']) {
    const res = await page.goto(path);
    expect(res!.status(), `GET ${path}`).toBe(401);
    await expect(page.getByTestId('login')).toBeVisible();
    await expect(page.getByTestId('list-table')).toHaveCount(0);
    await expect(page.getByTestId('nav')).toHaveCount(0);
  }
});

// Issue 14 point 4: "Log out" ends the session in every tab, not only the one
// that clicked it: another tab's live updates are told session-expired within
// seconds (and stop), and the cookie they share no longer opens a page.
test('logging out ends the session in every tab of it', async ({ page, context }) => {
  await signInInBrowser(page, 'admin');
  const other = await context.newPage();
  await other.goto('/csrs');
  await expect(other.locator('body')).toHaveAttribute('data-live-state', 'connected');
  const saved = (await context.cookies()).find((c) => c.name === 'clusterdesk_session');
  expect(saved, 'session cookie').toBeDefined();

  await page.goto('/');
  await page.getByTestId('logout').locator('button[type="submit"]').click();
  await expect(page.getByTestId('login')).toBeVisible();

  await expect(other.getByTestId('banner-session-expired')).toBeVisible({ timeout: 5_000 });
  await expect(other.locator('body')).toHaveAttribute('data-live-state', 'ended');

  // The browser dropped the cookie at logout; a copy of it is refused.
  await context.addCookies([saved!]);
  const res = await other.goto('/csrs');
  expect(res!.status(), 'the saved cookie after logout').toBe(401);
  await expect(other.getByTestId('login')).toBeVisible();
});
