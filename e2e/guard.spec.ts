// Self-test of the harness: the guard that every other test relies on does
// see CSP violations, console errors and uncaught exceptions, and does not
// count a page whose error status the test asked for.
import { Guard, expect, test } from './support/fixtures';

test('the browser guard catches CSP violations, console errors and exceptions', async ({ browser, baseURL }) => {
  const guard = new Guard();
  const ctx = await browser.newContext({ baseURL });
  try {
    await guard.attach(ctx);
    const page = await ctx.newPage();
    const res = await page.goto('/csrs');
    expect(res!.status()).toBe(401); // the login page, with its stylesheet and script
    await expect(page.getByTestId('login')).toBeVisible();
    expect(guard.problems(), 'a 401 page the test navigated to is not a problem by itself').toEqual([]);

    await page.evaluate(() => {
      const style = document.createElement('style');
      style.textContent = 'body { outline: 1px solid red; }';
      document.head.append(style);
      const script = document.createElement('script');
      script.textContent = 'window.__inline = true;';
      document.head.append(script);
      console.error('e2e: deliberate console error');
      setTimeout(() => { throw new Error('e2e: deliberate exception'); }, 0);
    });
    for (const needle of [/style-src/, /script-src/, /deliberate console error/, /deliberate exception/]) {
      await expect.poll(() => guard.problems().join('\n'), { message: `guard reports ${needle}` }).toMatch(needle);
    }
    expect(await page.evaluate(() => (window as any).__inline), 'the CSP blocked the inline script').toBeUndefined();
  } finally {
    await ctx.close();
  }
});
