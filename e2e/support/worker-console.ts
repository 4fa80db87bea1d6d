// A console of the spec's own, one per worker, for the specs that need a
// console started with flags the global setup's consoles do not have (an
// auth mode, the audit webhook's one address): a worker fixture, so it
// exists before any test's page (and its baseURL) does. Its run directory
// (mailbox, ledger, secrets) is a fresh temporary one, removed afterwards;
// a console that died meanwhile fails the worker.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Instance } from './env';
import { REPO_ROOT } from './env';
import { ConsoleServer } from './server';

// readyJSON is the devcluster's ready.json (DEVCLUSTER_DIR).
export function readyJSON(): Record<string, any> {
  const dir = process.env.DEVCLUSTER_DIR;
  if (!dir) throw new Error('DEVCLUSTER_DIR is not set');
  return JSON.parse(fs.readFileSync(path.join(dir, 'ready.json'), 'utf8'));
}

// workerConsole is the fixture function of such a console: args gets the run
// directory (to put files the flags name) and returns the console's flags.
export function workerConsole(instance: Instance, args: (runDir: string) => string[]) {
  return async ({}, use: (server: ConsoleServer) => Promise<void>) => {
    const runDir = fs.mkdtempSync(path.join(os.tmpdir(), `clusterdesk-e2e-${instance}-`));
    const server = new ConsoleServer({
      instance,
      binary: path.resolve(REPO_ROOT, process.env.E2E_CLUSTERDESK_BIN || 'bin/clusterdesk'),
      cwd: REPO_ROOT,
      args: args(runDir),
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
  };
}
