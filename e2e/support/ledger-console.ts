// The console with a ledger that serves as the devcluster's audit webhook
// backend (ready.json's auditWebhook: its address is fixed when the
// devcluster starts), read-only, in token mode (the auditor pastes their
// token), with a fresh SQLite ledger. One per worker, shared by the specs that
// read the ledger or the recorded writes (ledger.spec.ts, replay.spec.ts,
// webhook-replay.spec.ts; editor-replay.spec.ts on a writable one):
// only one process can listen on the webhook's address, and a fixture
// declared once here is one fixture to Playwright in every spec that uses it.
import path from 'node:path';
import { test as base } from './fixtures';
import { adminKubeconfig } from './env';
import type { ConsoleServer } from './server';
import { readyJSON, workerConsole } from './worker-console';

interface AuditWebhook {
  listen: string;
  certFile: string;
  keyFile: string;
  clientCAFile: string;
}

function auditWebhook(): AuditWebhook {
  const ready = readyJSON();
  if (!ready.auditWebhook) {
    throw new Error(`the devcluster in ${process.env.DEVCLUSTER_DIR} sends no audit events to a webhook (ready.json has no auditWebhook): rebuild it (make devcluster)`);
  }
  return ready.auditWebhook;
}

// ledgerReadOnly: a spec that edits (editor-replay.spec.ts) sets it false;
// a worker fixture option, so that Playwright runs that spec in a worker of
// its own, after this console of the other specs has stopped and freed the
// webhook's address.
export const test = base.extend<object, { ledgerConsole: ConsoleServer; ledgerReadOnly: boolean }>({
  ledgerReadOnly: [true, { option: true, scope: 'worker' }],
  ledgerConsole: [async ({ ledgerReadOnly }, use) => {
    const hook = auditWebhook();
    await workerConsole('token', (runDir) => ['--listen', '127.0.0.1:0', '--kubeconfig', adminKubeconfig(),
      '--auth', 'token', ...(ledgerReadOnly ? ['--read-only'] : []), '--ledger', `sqlite:${path.join(runDir, 'ledger.db')}`,
      `--audit-webhook-listen=${hook.listen}`, `--audit-webhook-tls-cert=${hook.certFile}`,
      `--audit-webhook-tls-key=${hook.keyFile}`, `--audit-webhook-client-ca=${hook.clientCAFile}`])({}, use);
  }, { scope: 'worker' }],
  baseURL: async ({ ledgerConsole }, use) => {
    await use(ledgerConsole.baseURL);
  },
});
