// Starts three consoles on the devcluster that `make test` brought up: one with
// the admin kubeconfig, one with --read-only and one with --auth token. The returned function is the
// global teardown: it stops them and fails the run if one died on its own.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FullConfig } from '@playwright/test';
import {
  ARTIFACTS_DIR, ENV_RUN_DIR, INSTANCES, REPO_ROOT, SCREENSHOTS_DIR, adminKubeconfig, chromiumPath, envBaseURL, instanceArgs,
  type Instance,
} from './support/env';
import { ConsoleServer } from './support/server';

function fail(msg: string): never {
  throw new Error(`\n\ne2e setup: ${msg}\n`);
}

export default async function globalSetup(_config: FullConfig) {
  const dir = process.env.DEVCLUSTER_DIR;
  if (!dir) {
    fail('DEVCLUSTER_DIR is not set. The browser tests need a running, seeded devcluster: run `make test`, or\n' +
      '  scripts/with-devcluster.sh .cache/devcluster-e2e --seed npm run e2e');
  }
  if (!fs.existsSync(dir)) fail(`DEVCLUSTER_DIR=${dir} does not exist.`);
  const kubeconfig = adminKubeconfig();
  if (!fs.existsSync(kubeconfig)) fail(`the admin kubeconfig ${kubeconfig} does not exist (is the devcluster in ${dir} up?).`);
  const binary = path.resolve(REPO_ROOT, process.env.E2E_CLUSTERDESK_BIN || 'bin/clusterdesk');
  if (!fs.existsSync(binary)) fail(`${binary} does not exist: run \`make build\` first.`);
  if (!fs.existsSync(chromiumPath())) fail(`${chromiumPath()} does not exist: run \`make e2e-deps\` (installs Debian's chromium).`);

  fs.rmSync(ARTIFACTS_DIR, { recursive: true, force: true });
  fs.mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdesk-e2e-'));

  const servers = INSTANCES.map((instance: Instance) => new ConsoleServer({
    instance,
    binary,
    cwd: REPO_ROOT,
    args: ['--listen', '127.0.0.1:0', '--kubeconfig', kubeconfig, ...instanceArgs(instance)],
    mailbox: path.join(runDir, instance),
  }));
  const onExit = () => servers.forEach((s) => s.killNow());
  process.on('exit', onExit);

  const started = Date.now();
  try {
    await Promise.all(servers.map((s) => s.start(60_000)));
  } catch (e) {
    await Promise.all(servers.map((s) => s.stop(2_000)));
    fs.rmSync(runDir, { recursive: true, force: true });
    fail((e as Error).message);
  }
  for (const s of servers) process.env[envBaseURL(s.instance)] = s.baseURL;
  process.env[ENV_RUN_DIR] = runDir;
  console.log(`e2e: ${servers.map((s) => `${s.instance} console ${s.baseURL} (pid ${s.pid})`).join(', ')}; ready in ${Date.now() - started} ms`);

  return async () => {
    const problems = (await Promise.all(servers.map((s) => s.stop()))).filter((p): p is string => !!p);
    process.off('exit', onExit);
    fs.rmSync(runDir, { recursive: true, force: true });
    for (const s of servers) {
      const errors = s.errorLines();
      if (errors.length) {
        console.log(`e2e: clusterdesk (${s.instance}) logged ${errors.length} ERROR line(s):\n${errors.slice(0, 10).map((l) => `  ${l}`).join('\n')}`);
      }
    }
    if (problems.length) throw new Error(problems.join('\n'));
  };
}
