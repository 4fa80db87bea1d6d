// Runs one bin/clusterdesk process for the suite: waits for its login URL and
// for /readyz, keeps its logs under e2e/artifacts/, and hands each one-time
// login URL it prints to the test workers through a one-file mailbox.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ARTIFACTS_DIR, type Instance } from './env';

// Local mode prints a one-time token; token mode prints the bare sign-in page.
const LOGIN_LINE = /^clusterdesk: open (http:\/\/127\.0\.0\.1:\d+)\/login(?:\?token=([A-Za-z0-9_-]+))?\s*$/;

export interface ServerOptions {
  instance: Instance;
  binary: string;
  args: string[];
  cwd: string;
  /** directory whose file "login-url" always holds the newest unclaimed login URL */
  mailbox: string;
}

export class ConsoleServer {
  readonly instance: Instance;
  baseURL = '';
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private child: ChildProcess;
  private stderrTail: string[] = [];
  private stopping = false;
  private exited: Promise<void>;
  private readonly stderrLog: string;
  private readonly stdoutLog: string;
  private firstURL: Promise<string>;

  constructor(private readonly opts: ServerOptions) {
    this.instance = opts.instance;
    fs.mkdirSync(opts.mailbox, { recursive: true });
    this.stderrLog = path.join(ARTIFACTS_DIR, `clusterdesk-${opts.instance}.stderr.log`);
    this.stdoutLog = path.join(ARTIFACTS_DIR, `clusterdesk-${opts.instance}.stdout.log`);
    const stderrFile = fs.createWriteStream(this.stderrLog);
    const stdoutFile = fs.createWriteStream(this.stdoutLog);

    // Flags only: no CLUSTERDESK_* from the caller's environment may change the run.
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CLUSTERDESK_')) env[k] = v;

    this.child = spawn(opts.binary, opts.args, { cwd: opts.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    stdoutFile.write(`$ ${opts.binary} ${opts.args.join(' ')}\n`);

    let resolveURL!: (u: string) => void;
    let rejectURL!: (e: Error) => void;
    this.firstURL = new Promise((res, rej) => { resolveURL = res; rejectURL = rej; });
    this.firstURL.catch(() => {}); // reported by start()

    let pending = '';
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (chunk: string) => {
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        const m = LOGIN_LINE.exec(line);
        if (m && m[2]) {
          this.post(`${m[1]}/login?token=${m[2]}`);
          resolveURL(m[1]);
          stdoutFile.write(line.replace(m[2], '<token>') + '\n'); // tokens stay out of the artifacts
        } else if (m) {
          resolveURL(m[1]);
          stdoutFile.write(line + '\n');
        } else {
          stdoutFile.write(line + '\n');
        }
      }
    });
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (chunk: string) => {
      stderrFile.write(chunk);
      this.stderrTail.push(...chunk.split('\n').filter(Boolean));
      if (this.stderrTail.length > 40) this.stderrTail.splice(0, this.stderrTail.length - 40);
    });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exit = { code, signal };
        rejectURL(new Error(`clusterdesk (${this.instance}) exited (code ${code}, signal ${signal}) before printing a login URL`));
        stdoutFile.end();
        stderrFile.end();
        resolve();
      });
      this.child.on('error', (err) => {
        this.exit = { code: null, signal: null };
        rejectURL(new Error(`could not start ${opts.binary}: ${err.message}`));
        resolve();
      });
    });
  }

  /** Puts the newest login URL in the mailbox (write, then rename: readers never see half a file). */
  private post(url: string) {
    const tmp = path.join(this.opts.mailbox, `.login-url.${process.pid}.tmp`);
    fs.writeFileSync(tmp, url + '\n');
    fs.renameSync(tmp, path.join(this.opts.mailbox, 'login-url'));
  }

  get pid() {
    return this.child.pid;
  }

  describe(): string {
    const where = `logs: ${path.relative(process.cwd(), this.stderrLog)}`;
    const tail = this.stderrTail.slice(-15).map((l) => `    ${l}`).join('\n');
    return `${where}\n  last stderr lines:\n${tail || '    (none)'}`;
  }

  /** Waits for the login URL on stdout, then for GET /readyz to answer 200 (caches synced). */
  async start(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const timer = new Promise<never>((_, rej) =>
      setTimeout(() => rej(new Error(`clusterdesk (${this.instance}) printed no login URL within ${timeoutMs} ms`)), timeoutMs).unref(),
    );
    try {
      this.baseURL = await Promise.race([this.firstURL, timer]);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n  ${this.describe()}`);
    }
    let last = '';
    while (Date.now() < deadline) {
      if (this.exit) throw new Error(`clusterdesk (${this.instance}) exited while waiting for /readyz (code ${this.exit.code})\n  ${this.describe()}`);
      try {
        const res = await fetch(`${this.baseURL}/readyz`, { signal: AbortSignal.timeout(2_000) });
        last = `${res.status} ${(await res.text()).trim().replace(/\n/g, '; ')}`;
        if (res.status === 200) return;
      } catch (e) {
        last = (e as Error).message;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`clusterdesk (${this.instance}) was not ready within ${timeoutMs} ms: GET /readyz last answered: ${last}\n  ${this.describe()}`);
  }

  /** SIGTERM, then SIGKILL after graceMs. Returns an error text if the process had died on its own. */
  async stop(graceMs = 8_000): Promise<string | null> {
    const diedEarly = this.exit && !this.stopping
      ? `clusterdesk (${this.instance}) exited during the tests (code ${this.exit.code}, signal ${this.exit.signal})\n  ${this.describe()}`
      : null;
    this.stopping = true;
    if (!this.exit && this.child.pid) {
      this.child.kill('SIGTERM');
      const killer = setTimeout(() => { if (!this.exit) this.child.kill('SIGKILL'); }, graceMs);
      await this.exited;
      clearTimeout(killer);
    }
    return diedEarly;
  }

  /** Kills at once (the runner is exiting). */
  killNow() {
    if (!this.exit && this.child.pid) this.child.kill('SIGKILL');
  }

  /** Lines the server logged at level ERROR (request failures, render errors). */
  errorLines(): string[] {
    try {
      return fs.readFileSync(this.stderrLog, 'utf8').split('\n').filter((l) => /\blevel=ERROR\b|\bpanic\b/.test(l));
    } catch {
      return [];
    }
  }
}
