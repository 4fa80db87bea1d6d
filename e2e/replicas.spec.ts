// Live updates across replicas: two consoles behind a real HAProxy (round
// robin, no stickiness; e2e/fleet runs them in token mode with shared session
// keys). The user signs in once through the balancer. The replica serving a
// page's event stream is killed; a CSR is created while the stream is down;
// the page reconnects through the balancer to the other replica, whose event
// ids the page's Last-Event-ID means nothing to, which tells it to resync: the
// new row shows without a reload, and the user is still signed in.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { expect, test } from '@playwright/test';
import { API_CLIENT_SIGNER, REPO_ROOT, adminKubeconfig } from './support/env';
import { bearerToken, createCSR, deleteCSR } from './support/kube';

interface FleetInfo {
  url: string;
  replicas: { name: string; url: string }[];
}

// Fleet drives e2e/fleet over its stdin: one command, one answer line.
class Fleet {
  info!: FleetInfo;
  private lines: string[] = [];
  private waiters: ((l: string) => void)[] = [];
  private child: ChildProcessWithoutNullStreams;
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdesk-e2e-fleet-'));

  constructor() {
    this.child = spawn('go', ['run', './e2e/fleet', '--binary', path.join(REPO_ROOT, 'bin/clusterdesk'),
      '--kubeconfig', adminKubeconfig(), '--replicas', '2', '--dir', this.dir], { cwd: REPO_ROOT });
    this.child.stderr.on('data', (d) => process.stderr.write(`e2e fleet: ${d}`));
    readline.createInterface({ input: this.child.stdout }).on('line', (l) => {
      const w = this.waiters.shift();
      if (w) w(l); else this.lines.push(l);
    });
  }

  private next(timeoutMs: number): Promise<string> {
    const l = this.lines.shift();
    if (l !== undefined) return Promise.resolve(l);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`e2e/fleet said nothing within ${timeoutMs} ms (logs in ${this.dir})`)), timeoutMs);
      this.waiters.push((line) => { clearTimeout(t); resolve(line); });
    });
  }

  async start() {
    this.info = JSON.parse(await this.next(120_000));
  }

  async ask(cmd: string): Promise<string> {
    this.child.stdin.write(cmd + '\n');
    const answer = await this.next(20_000);
    if (answer.startsWith('error:')) throw new Error(`e2e/fleet ${cmd}: ${answer}`);
    return answer;
  }

  async stop() {
    this.child.stdin.end();
    await new Promise((r) => this.child.once('exit', r));
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

let fleet: Fleet;

test.beforeAll(async () => {
  test.setTimeout(150_000);
  fleet = new Fleet();
  await fleet.start();
});

test.afterAll(async () => {
  if (fleet) await fleet.stop();
});

test('a page whose stream moves to another replica resyncs and shows the change made meanwhile', async ({ page }) => {
  test.setTimeout(60_000);
  const prefix = `e2e-replicas-${Date.now().toString(36)}`;
  const first = `${prefix}-a`;
  const second = `${prefix}-b`;
  await createCSR(first, API_CLIENT_SIGNER);
  try {
    // One sign-in: the form from one replica, the token posted to the next.
    await page.goto(`${fleet.info.url}/login`);
    await page.getByTestId('token-input').fill(bearerToken('admin'));
    await page.getByTestId('token-submit').click();
    await page.waitForURL((u) => u.pathname === '/');
    await expect(page.getByTestId('user')).toHaveText('admin');

    // The list, narrowed to this test's requests, through the balancer.
    const list = `${fleet.info.url}/csrs?q=${prefix}`;
    await expect.poll(async () => {
      await page.goto(list);
      return page.locator(`[id="row-csrs-${first}"]`).count();
    }, { message: `the console lists ${first}`, timeout: 20_000 }).toBe(1);
    const body = page.locator('body');
    await expect(body).toHaveAttribute('data-live-state', 'connected');
    await page.evaluate(() => { document.documentElement.dataset.e2eMark = 'not-reloaded'; });

    // The home page's stream (after sign-in) ends once the replica sees its
    // connection closed: wait until only this page's stream is left.
    let holder = '';
    await expect.poll(async () => {
      holder = await fleet.ask('holder');
      return holder.split(' ').filter(Boolean).length;
    }, { message: 'one replica serves the page\'s stream', timeout: 10_000 }).toBe(1);
    await fleet.ask(`kill ${holder}`);
    await expect(body, 'the page noticed its stream is gone').toHaveAttribute('data-live-state', 'reconnecting');
    // The change while the page has no stream: only a resync can bring it.
    await createCSR(second, API_CLIENT_SIGNER);

    await expect(body, 'the stream came back').toHaveAttribute('data-live-state', 'connected', { timeout: 20_000 });
    const now = await fleet.ask('holder');
    expect(now, 'the stream moved to the replica left').not.toBe(holder);
    expect(now).not.toBe('');
    await expect(page.locator(`[id="row-csrs-${second}"]`), 'the row created while the stream was down').toBeVisible({ timeout: 15_000 });
    await expect(page.locator(`[id="row-csrs-${first}"]`)).toBeVisible();
    expect(await page.evaluate(() => document.documentElement.dataset.e2eMark), 'the page was not reloaded').toBe('not-reloaded');
    // Still signed in, on the replica left.
    const again = await page.goto(list);
    expect(again!.status()).toBe(200);
    await expect(page.getByTestId('user')).toHaveText('admin');
  } finally {
    await deleteCSR(first);
    await deleteCSR(second);
  }
});
