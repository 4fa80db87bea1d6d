// The console with a ledger that serves as the devcluster's audit webhook
// backend (ready.json's auditWebhook: its address is fixed when the
// devcluster starts), read-only, in token mode (the auditor pastes their
// token), with a fresh SQLite ledger. One per worker, shared by the specs that
// read the ledger or the recorded writes (ledger.spec.ts, replay.spec.ts,
// webhook-replay.spec.ts):
// only one process can listen on the webhook's address, and a fixture
// declared once here is one fixture to Playwright in every spec that uses it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test as base } from './fixtures';
import { REPO_ROOT, adminKubeconfig } from './env';
import { ConsoleServer } from './server';

interface AuditWebhook {
  listen: string;
  certFile: string;
  keyFile: string;
  clientCAFile: string;
}

function auditWebhook(): AuditWebhook {
  const dir = process.env.DEVCLUSTER_DIR;
  if (!dir) throw new Error('DEVCLUSTER_DIR is not set');
  const ready = JSON.parse(fs.readFileSync(path.join(dir, 'ready.json'), 'utf8'));
  if (!ready.auditWebhook) {
    throw new Error(`the devcluster in ${dir} sends no audit events to a webhook (ready.json has no auditWebhook): rebuild it (make devcluster)`);
  }
  return ready.auditWebhook;
}

export const test = base.extend<object, { ledgerConsole: ConsoleServer }>({
  ledgerConsole: [async ({}, use) => {
    const hook = auditWebhook();
    const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdesk-e2e-ledger-'));
    const server = new ConsoleServer({
      instance: 'token',
      binary: path.resolve(REPO_ROOT, process.env.E2E_CLUSTERDESK_BIN || 'bin/clusterdesk'),
      cwd: REPO_ROOT,
      args: ['--listen', '127.0.0.1:0', '--kubeconfig', adminKubeconfig(), '--auth', 'token', '--read-only',
        '--ledger', `sqlite:${path.join(runDir, 'ledger.db')}`,
        `--audit-webhook-listen=${hook.listen}`, `--audit-webhook-tls-cert=${hook.certFile}`,
        `--audit-webhook-tls-key=${hook.keyFile}`, `--audit-webhook-client-ca=${hook.clientCAFile}`],
      mailbox: path.join(runDir, 'mailbox'),
    });
    try {
      await server.start(60_000);
      await use(server);
    } finally {
      const died = await server.stop();
      fs.rmSync(runDir, { recursive: true, force: true });
      if (died) throw new Error(died);
    }
  }, { scope: 'worker' }],
  baseURL: async ({ ledgerConsole }, use) => {
    await use(ledgerConsole.baseURL);
  },
});

