// Paths and settings shared by the config, the global setup and the tests.
import path from 'node:path';

export const E2E_DIR = path.resolve(__dirname, '..');
export const REPO_ROOT = path.resolve(E2E_DIR, '..');
export const ARTIFACTS_DIR = path.join(E2E_DIR, 'artifacts');
export const SCREENSHOTS_DIR = path.join(ARTIFACTS_DIR, 'screenshots');

// Debian's Chromium; Playwright never downloads a browser here.
export function chromiumPath(): string {
  return process.env.E2E_CHROMIUM || '/usr/bin/chromium';
}

// Without the background-networking flags Chromium's own connections are
// refused by the closed network and show up as noise or delays.
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// admin: the admin kubeconfig in local mode; readonly: the same with --read-only;
// token: --auth token (the admin kubeconfig is only the console's own identity,
// people sign in by pasting a bearer token, see signInWithToken).
// proxy: --auth proxy behind oauth2-proxy, started by oauth2-proxy.spec.ts itself
// (support/oauth2proxy.ts); its URL is oauth2-proxy's, where the browser goes.
// oidc: --auth oidc at the devcluster's OpenID provider; started by oidc.spec.ts
// itself (a devcluster without a provider cannot run it), so not in INSTANCES.
export type Instance = 'admin' | 'readonly' | 'token' | 'proxy' | 'oidc';
export const INSTANCES: Instance[] = ['admin', 'readonly', 'token'];

/** The flags that make an instance (besides --listen and --kubeconfig). */
export function instanceArgs(instance: Instance): string[] {
  switch (instance) {
    case 'readonly': return ['--read-only'];
    // The token console also sends every confirmed cleanup's progress page
    // at once, as the admin console does after 2 s (cleanup.spec's progress test).
    case 'token': return ['--auth', 'token', '--cleanup-progress-after', '1ms'];
    default: return [];
  }
}

// The six kinds the console lists, by URL segment (= home card id).
export const KINDS = ['csrs', 'flowschemas', 'prioritylevels', 'crds', 'validatingwebhooks', 'csidrivers'] as const;
export type Kind = (typeof KINDS)[number];

export const API_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';

// Set by the global setup for the workers.
export const ENV_RUN_DIR = 'E2E_RUN_DIR';
export function envBaseURL(instance: Instance): string {
  return `E2E_${instance.toUpperCase()}_URL`;
}

export function adminKubeconfig(): string {
  const dir = process.env.DEVCLUSTER_DIR;
  if (!dir) throw new Error('DEVCLUSTER_DIR is not set');
  return path.resolve(dir, 'kubeconfigs', 'admin.kubeconfig');
}
