/**
 * A real kube-apiserver + etcd on 127.0.0.1 for tests, in the spirit of
 * controller-runtime's envtest: no controllers, no nodes, just the API server
 * with its validation (OpenAPI schemas, CEL rules, strict field validation).
 *
 * The binaries are built from pinned Go modules by scripts/ensure-kube.sh and
 * cached in the user's cache dir; see test/apiserver/go/.
 *
 * Usage from a vitest globalSetup: `startApiServer({ crdFiles })`; from tests,
 * `attachApiServer(inject('kubeconfig'), inject('kubeBinDir'))` then
 * `dryRunApply(server, file)`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** What tests need to talk to a running server. */
export interface ApiServerClient {
  /** Path of a kubeconfig file whose current context is the test server. */
  readonly kubeconfig: string;
  /** Directory holding kube-apiserver, kubectl and etcd. */
  readonly binDir: string;
  /** Runs the pinned kubectl against the server; never throws on a non-zero exit. */
  kubectl(args: readonly string[], input?: string): Promise<KubectlResult>;
}

export interface ApiServer extends ApiServerClient {
  /** Root of the temp dir (logs, certs, etcd data); removed by stop(). */
  readonly workDir: string;
  readonly url: string;
  /** Kills kube-apiserver then etcd by PID (SIGTERM, then SIGKILL) and removes workDir. Idempotent. */
  stop(): Promise<void>;
}

export interface StartApiServerOptions {
  /** CRD manifests to install (server-side apply) and wait for until Established. */
  readonly crdFiles?: readonly string[];
  /**
   * Namespaces to create besides the built-in ones (default, kube-system, ...).
   * @default ['argocd']
   */
  readonly namespaces?: readonly string[];
  /**
   * How long to wait for etcd and the API server to become ready.
   * @default 120_000
   */
  readonly readyTimeoutMs?: number;
}

export interface DryRunResult {
  /** true when kubectl exited 0 and the server returned no warning. */
  readonly ok: boolean;
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Every "Warning: ..." line kubectl printed (e.g. unknown or duplicate fields). */
  readonly warnings: readonly string[];
}

const STOP_GRACE_MS = 10_000;

/** Walks up from the cwd to the repository holding scripts/ensure-kube.sh. */
export function findRepoRoot(from: string = process.cwd()): string {
  let dir = resolve(from);
  for (;;) {
    if (existsSync(join(dir, 'scripts', 'ensure-kube.sh'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) {
      throw new Error(`scripts/ensure-kube.sh must exist in ${from} or a parent directory, got none`);
    }
    dir = parent;
  }
}

/**
 * Builds the binaries if they are not cached yet (several minutes when cold)
 * and returns their directory. Build progress goes to this process's stderr.
 */
export async function ensureKubeBinaries(repoRoot: string = findRepoRoot()): Promise<string> {
  const script = join(repoRoot, 'scripts', 'ensure-kube.sh');
  const res = await run('bash', [script], { cwd: repoRoot, stderrTo: process.stderr });
  if (res.code !== 0) {
    throw new Error(`scripts/ensure-kube.sh failed with exit code ${res.code}:\n${tail(res.stderr, 40)}`);
  }
  const binDir = res.stdout.trim().split('\n').pop()?.trim() ?? '';
  for (const bin of ['kube-apiserver', 'kubectl', 'etcd']) {
    if (!existsSync(join(binDir, bin))) {
      throw new Error(`scripts/ensure-kube.sh must print a bin dir holding ${bin}, got "${binDir}"`);
    }
  }
  return binDir;
}

/** A client for a server started elsewhere (e.g. by the vitest globalSetup). */
export function attachApiServer(kubeconfig: string, binDir: string): ApiServerClient {
  if (!kubeconfig || !binDir) {
    throw new Error(
      `attachApiServer needs a kubeconfig and a bin dir, got "${kubeconfig}" and "${binDir}" ` +
        '(is test/support/apiserver-global-setup.ts in the vitest globalSetup?)',
    );
  }
  const cacheDir = join(dirname(kubeconfig), 'kubectl-cache');
  return {
    kubeconfig,
    binDir,
    kubectl: (args, input) =>
      run(join(binDir, 'kubectl'), ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args], { input }),
  };
}

/**
 * `kubectl apply --dry-run=server --validate=strict -f file`: the server runs
 * schema, CEL and strict field validation but persists nothing. Any warning
 * counts as a failure.
 */
export async function dryRunApply(server: ApiServerClient, file: string): Promise<DryRunResult> {
  const res = await server.kubectl(['apply', '--dry-run=server', '--validate=strict', '-f', file]);
  const warnings = `${res.stderr}\n${res.stdout}`
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('Warning:'));
  return { ok: res.code === 0 && warnings.length === 0, ...res, warnings };
}

export async function startApiServer(opts: StartApiServerOptions = {}): Promise<ApiServer> {
  const binDir = await ensureKubeBinaries();
  const readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;
  const workDir = mkdtempSync(join(tmpdir(), 'karpenter-gitops-apiserver-'));
  const procs: ChildProcess[] = [];
  const logs = { etcd: join(workDir, 'etcd.log'), apiserver: join(workDir, 'kube-apiserver.log') };

  const killAllSync = (): void => {
    for (const p of procs) if (p.exitCode === null && p.signalCode === null && p.pid) safeKill(p.pid, 'SIGKILL');
  };
  // If the test runner dies without calling stop(), do not leave servers behind.
  process.once('exit', killAllSync);

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // API server first so it does not spin on a vanished etcd.
    for (const p of [...procs].reverse()) await terminate(p, STOP_GRACE_MS);
    process.removeListener('exit', killAllSync);
    rmSync(workDir, { recursive: true, force: true });
  };

  try {
    const [etcdClientPort, etcdPeerPort, securePort] = await freePorts(3);
    const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
    const etcd = startProcess(join(binDir, 'etcd'), [
      '--name=test',
      `--data-dir=${join(workDir, 'etcd-data')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-cluster=test=http://127.0.0.1:${etcdPeerPort}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ], logs.etcd);
    procs.push(etcd);
    await waitFor('etcd', etcd, readyTimeoutMs, async () => (await httpGet(`${etcdUrl}/health`)).status === 200);

    const { publicKey, privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    });
    const saPub = join(workDir, 'sa.pub');
    const saKey = join(workDir, 'sa.key');
    writeFileSync(saPub, publicKey);
    writeFileSync(saKey, privateKey, { mode: 0o600 });
    const token = randomBytes(24).toString('hex');
    const tokenFile = join(workDir, 'tokens.csv');
    writeFileSync(tokenFile, `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });

    const url = `https://127.0.0.1:${securePort}`;
    const apiserver = startProcess(join(binDir, 'kube-apiserver'), [
      `--etcd-servers=${etcdUrl}`,
      `--cert-dir=${join(workDir, 'certs')}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${securePort}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--allow-privileged=true',
      `--service-account-key-file=${saPub}`,
      `--service-account-signing-key-file=${saKey}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--token-auth-file=${tokenFile}`,
      '--authorization-mode=RBAC',
      // ServiceAccount admission waits for token controllers that do not run here.
      '--disable-admission-plugins=ServiceAccount',
      '--profiling=false',
    ], logs.apiserver);
    procs.push(apiserver);
    await waitFor('kube-apiserver', apiserver, readyTimeoutMs, async () =>
      (await httpGet(`${url}/readyz`, token)).status === 200,
    );

    const kubeconfig = join(workDir, 'kubeconfig');
    writeFileSync(kubeconfig, kubeconfigYaml(url, token), { mode: 0o600 });
    const client = attachApiServer(kubeconfig, binDir);
    const must = async (what: string, args: string[]): Promise<KubectlResult> => {
      const res = await client.kubectl(args);
      if (res.code !== 0) throw new Error(`${what} failed (kubectl ${args.join(' ')}):\n${res.stderr}${res.stdout}`);
      return res;
    };

    const crdFiles = opts.crdFiles ?? [];
    if (crdFiles.length > 0) {
      // Server-side: the ApplicationSet CRD exceeds the last-applied annotation limit.
      await must('installing CRDs', [
        'apply', '--server-side', '--force-conflicts', '--field-manager=karpenter-gitops-tests',
        ...crdFiles.flatMap((f) => ['-f', f]),
      ]);
      await waitEstablished(client, 60_000);
    }
    for (const ns of opts.namespaces ?? ['argocd']) {
      await must(`creating namespace ${ns}`, ['create', 'namespace', ns]);
    }

    return { ...client, workDir, url, stop };
  } catch (err) {
    const detail = [logs.etcd, logs.apiserver]
      .filter((f) => existsSync(f))
      .map((f) => `--- last lines of ${f} ---\n${tail(readFileSync(f, 'utf8'), 30)}`)
      .join('\n');
    await stop();
    throw new Error(`${(err as Error).message}\n${detail}`, { cause: err });
  }
}

/**
 * `kubectl wait --for=condition=Established crd --all`, retried: a CRD the
 * apiextensions controller has not processed yet has no status.conditions and
 * kubectl wait fails at once on it ("accessor error") instead of waiting.
 */
async function waitEstablished(client: ApiServerClient, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = Math.max(1, Math.ceil((deadline - Date.now()) / 1000));
    const res = await client.kubectl(['wait', '--for=condition=Established', 'crd', '--all', `--timeout=${left}s`]);
    if (res.code === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`CRDs were not Established after ${timeoutMs} ms (kubectl wait):\n${res.stderr}${res.stdout}`);
    }
    await sleep(200);
  }
}

function kubeconfigYaml(server: string, token: string): string {
  // Loopback only, self-signed serving cert: skipping verification is fine here.
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: test',
    '  cluster:',
    `    server: ${server}`,
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: admin',
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: test',
    '  context:',
    '    cluster: test',
    '    user: admin',
    'current-context: test',
    '',
  ].join('\n');
}

function startProcess(bin: string, args: string[], logFile: string): ChildProcess {
  const fd = openSync(logFile, 'a');
  try {
    const child = spawn(bin, args, { stdio: ['ignore', fd, fd] });
    child.on('error', () => undefined); // surfaced through exitCode/waitFor
    return child;
  } finally {
    closeSync(fd); // the child has its own copy
  }
}

async function waitFor(
  name: string,
  proc: ChildProcess,
  timeoutMs: number,
  probe: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`${name} exited during startup (code ${proc.exitCode}, signal ${proc.signalCode})`);
    }
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${name} was not ready after ${timeoutMs} ms`);
    await sleep(100);
  }
}

async function terminate(proc: ChildProcess, graceMs: number): Promise<void> {
  if (!proc.pid || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((res) => proc.once('exit', () => res()));
  safeKill(proc.pid, 'SIGTERM');
  const timer = sleep(graceMs).then(() => 'timeout' as const);
  if ((await Promise.race([exited, timer])) === 'timeout') {
    safeKill(proc.pid, 'SIGKILL');
    await exited;
  }
}

function safeKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone: idempotently succeeded
  }
}

async function freePorts(n: number): Promise<number[]> {
  // Hold all listeners open together so the n ports are distinct.
  const servers = await Promise.all(
    Array.from({ length: n }, () =>
      new Promise<Server>((res, rej) => {
        const s = createServer();
        s.once('error', rej);
        s.listen(0, '127.0.0.1', () => res(s));
      }),
    ),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((res) => s.close(res))));
  return ports;
}

function httpGet(url: string, token?: string): Promise<{ status: number; body: string }> {
  const get = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((res, rej) => {
    const req = get(
      url,
      {
        method: 'GET',
        rejectUnauthorized: false,
        timeout: 2_000,
        headers: token ? { Authorization: `Bearer ${token}` } : {},
      },
      (resp) => {
        let body = '';
        resp.setEncoding('utf8');
        resp.on('data', (c: string) => (body += c));
        resp.on('end', () => res({ status: resp.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', rej);
    req.end();
  });
}

function run(
  cmd: string,
  args: readonly string[],
  opts: { cwd?: string; input?: string; stderrTo?: NodeJS.WritableStream } = {},
): Promise<KubectlResult> {
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
      opts.stderrTo?.write(c);
    });
    child.on('error', rej);
    child.on('close', (code, signal) => res({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
    child.stdin.on('error', () => undefined); // EPIPE when the command ignores stdin
    child.stdin.end(opts.input ?? '');
  });
}

function tail(text: string, lines: number): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function sleep(ms: number): Promise<void> {
  return new Promise((res) => setTimeout(res, ms));
}
