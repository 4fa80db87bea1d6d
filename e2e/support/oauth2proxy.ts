// The production topology of proxy mode, for oauth2-proxy.spec.ts: the real
// oauth2-proxy (`make oauth2-proxy`, from the Go module proxy) signs people in
// at the devcluster's OpenID provider and forwards to a console in
// --auth proxy mode, which trusts it by a shared secret header and
// impersonates the user and groups it names, with the API server's "oidc:"
// prefixes. Both listen on loopback only (the secret is honoured only from
// loopback or over TLS). Started by the spec, stopped at its end.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { ARTIFACTS_DIR, REPO_ROOT, adminKubeconfig } from './env';
import { ConsoleServer } from './server';

/** What devcluster writes to DIR/oidc/oidc.json (devcluster/README.md). */
export interface OIDCDetails {
  issuer: string;
  caFile: string;
  usernamePrefix: string;
  groupsPrefix: string;
  clients: Record<string, { id: string; secret: string }>;
  users: Record<string, { password: string; groups?: string[]; kubernetesUser: string; kubernetesGroups: string[] }>;
}

export function oidcDetails(): OIDCDetails {
  const dir = process.env.DEVCLUSTER_DIR;
  if (!dir) throw new Error('DEVCLUSTER_DIR is not set');
  const ready = JSON.parse(fs.readFileSync(path.join(dir, 'ready.json'), 'utf8'));
  if (!ready.oidc) {
    throw new Error(`${dir}/ready.json names no OpenID provider (oidc): this devcluster was started before devcluster had one, ` +
      'or runs Kubernetes 1.28; start a fresh one (scripts/with-devcluster.sh)');
  }
  return JSON.parse(fs.readFileSync(ready.oidc, 'utf8'));
}

export function oauth2ProxyBinary(): string {
  const bin = path.resolve(REPO_ROOT, process.env.E2E_OAUTH2_PROXY_BIN || '.cache/bin/oauth2-proxy');
  if (!fs.existsSync(bin)) throw new Error(`${bin} does not exist: run \`make oauth2-proxy\` (part of make e2e-deps)`);
  return bin;
}

/** A free loopback port (oauth2-proxy cannot report the port it was given for :0). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** The alpha configuration: provider, upstream and the headers oauth2-proxy sets (stripping what the browser sent under those names). */
function alphaConfig(o: { oidc: OIDCDetails; port: number; upstream: string; secretFile: string; clientSecretFile: string; secretHeader: string }): string {
  const client = o.oidc.clients['oauth2-proxy'];
  // JSON is YAML: no quoting mistakes.
  return JSON.stringify({
    server: { bindAddress: `127.0.0.1:${o.port}` },
    upstreamConfig: { upstreams: [{ id: 'clusterdesk', path: '/', uri: o.upstream, flushInterval: '100ms', passHostHeader: true }] },
    providers: [{
      id: 'devcluster', provider: 'oidc', name: 'devcluster',
      clientID: client.id, clientSecretFile: o.clientSecretFile,
      caFiles: [o.oidc.caFile], useSystemTrustStore: false,
      scope: 'openid profile groups', code_challenge_method: 'S256',
      // The provider's sub is the username and its users have no e-mail:
      // oauth2-proxy's mandatory "email" is the sub too.
      oidcConfig: { issuerURL: o.oidc.issuer, emailClaim: 'sub', userIDClaim: 'sub', groupsClaim: 'groups', audienceClaims: ['aud'] },
    }],
    injectRequestHeaders: [
      { name: 'X-Forwarded-User', values: [{ claimSource: { claim: 'user' } }] },
      { name: 'X-Forwarded-Groups', values: [{ claimSource: { claim: 'groups' } }] },
      // The console's proof that the request came through this proxy.
      { name: o.secretHeader, values: [{ secretSource: { fromFile: o.secretFile } }] },
    ],
  }, null, 2);
}

export interface ProxyPair {
  /** oauth2-proxy's URL: what the browser opens. */
  proxyURL: string;
  /** The console's own URL, which only the proxy should use. */
  consoleURL: string;
  secret: string;
  oidc: OIDCDetails;
  stop(): Promise<string[]>;
}

export const PROXY_SECRET_HEADER = 'X-Clusterdesk-Proxy-Secret';

/** Starts the console in proxy mode, then oauth2-proxy in front of it; both ready within timeoutMs. */
export async function startProxyPair(runDir: string, timeoutMs = 60_000): Promise<ProxyPair> {
  const oidc = oidcDetails();
  const binary = path.resolve(REPO_ROOT, process.env.E2E_CLUSTERDESK_BIN || 'bin/clusterdesk');
  const o2p = oauth2ProxyBinary();
  fs.mkdirSync(runDir, { recursive: true });
  const secret = crypto.randomBytes(24).toString('hex');
  const secretFile = path.join(runDir, 'proxy-secret');
  fs.writeFileSync(secretFile, secret, { mode: 0o600 }); // no newline: oauth2-proxy sends the file as it is
  const clientSecretFile = path.join(runDir, 'client-secret');
  fs.writeFileSync(clientSecretFile, oidc.clients['oauth2-proxy'].secret, { mode: 0o600 });

  const server = new ConsoleServer({
    instance: 'proxy', binary, cwd: REPO_ROOT, mailbox: path.join(runDir, 'mailbox'),
    args: ['--listen', '127.0.0.1:0', '--kubeconfig', adminKubeconfig(), '--auth', 'proxy',
      '--proxy-secret-file', secretFile, '--proxy-secret-header', PROXY_SECRET_HEADER,
      '--proxy-user-prefix', oidc.usernamePrefix, '--proxy-groups-prefix', oidc.groupsPrefix],
  });
  try {
    await server.start(timeoutMs);
  } catch (e) {
    await server.stop(2_000);
    throw e;
  }

  const port = await freePort();
  const configFile = path.join(runDir, 'oauth2-proxy.yaml');
  fs.writeFileSync(configFile, alphaConfig({ oidc, port, upstream: server.baseURL, secretFile, clientSecretFile, secretHeader: PROXY_SECRET_HEADER }), { mode: 0o600 });
  const proxy = new OAuth2Proxy(o2p, [
    '--alpha-config', configFile,
    // Flags the alpha configuration does not hold.
    '--cookie-secret', crypto.randomBytes(16).toString('hex'),
    '--cookie-secure=false', // plain HTTP on loopback in the test; TLS in production
    '--email-domain=*',
    '--skip-provider-button',
    '--redirect-url', `http://127.0.0.1:${port}/oauth2/callback`,
    '--request-logging=true',
  ]);
  const proxyURL = `http://127.0.0.1:${port}`;
  try {
    await proxy.waitReady(proxyURL, timeoutMs);
  } catch (e) {
    await proxy.stop();
    await server.stop(2_000);
    throw e;
  }
  return {
    proxyURL, consoleURL: server.baseURL, secret, oidc,
    async stop() {
      const problems: string[] = [];
      const died = proxy.exitedEarly();
      if (died) problems.push(died);
      await proxy.stop();
      const c = await server.stop();
      if (c) problems.push(c);
      problems.push(...server.errorLines().map((l) => `clusterdesk (proxy) logged: ${l}`));
      fs.rmSync(runDir, { recursive: true, force: true });
      return problems;
    },
  };
}

/** One oauth2-proxy process, its output kept in e2e/artifacts/oauth2-proxy.log. */
class OAuth2Proxy {
  private child: ChildProcess;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private stopping = false;
  private exited: Promise<void>;
  private readonly logFile = path.join(ARTIFACTS_DIR, 'oauth2-proxy.log');

  constructor(binary: string, args: string[]) {
    fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
    const log = fs.createWriteStream(this.logFile);
    log.write(`$ ${binary} ${args.map((a) => (/^[0-9a-f]{32}$/.test(a) ? '<cookie secret>' : a)).join(' ')}\n`);
    this.child = spawn(binary, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
    this.child.stdout!.pipe(log, { end: false });
    this.child.stderr!.pipe(log, { end: false });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => { this.exit = { code, signal }; log.end(); resolve(); });
      this.child.on('error', () => { this.exit = { code: null, signal: null }; log.end(); resolve(); });
    });
  }

  private tail(): string {
    try {
      return fs.readFileSync(this.logFile, 'utf8').split('\n').slice(-15).map((l) => `    ${l}`).join('\n');
    } catch {
      return '    (no log)';
    }
  }

  /** Waits for oauth2-proxy's /ping to answer 200. */
  async waitReady(url: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      if (this.exit) throw new Error(`oauth2-proxy exited (code ${this.exit.code}) before it was ready; log ${this.logFile}:\n${this.tail()}`);
      try {
        const res = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(2_000) });
        last = `${res.status}`;
        if (res.status === 200) return;
      } catch (e) {
        last = (e as Error).message;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`oauth2-proxy was not ready within ${timeoutMs} ms (GET /ping: ${last}); log ${this.logFile}:\n${this.tail()}`);
  }

  exitedEarly(): string | null {
    return this.exit && !this.stopping ? `oauth2-proxy exited during the tests (code ${this.exit.code}); log ${this.logFile}:\n${this.tail()}` : null;
  }

  async stop(graceMs = 5_000): Promise<void> {
    this.stopping = true;
    if (this.exit || !this.child.pid) return;
    this.child.kill('SIGTERM');
    const killer = setTimeout(() => { if (!this.exit) this.child.kill('SIGKILL'); }, graceMs);
    await this.exited;
    clearTimeout(killer);
  }
}
