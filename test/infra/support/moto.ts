import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/**
 * A real moto server on loopback for one test file: installed by scripts/ensure-moto.sh
 * (pinned, cached venv), started on a free port, stopped by PID.
 */
export interface Moto {
  readonly endpoint: string;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export async function startMoto(): Promise<Moto> {
  const python = execFileSync('bash', ['scripts/ensure-moto.sh'], { encoding: 'utf8' }).trim();
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(python, ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(port)], {
    env: { ...process.env, MOTO_IAM_LOAD_MANAGED_POLICIES: 'true' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-4000)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const res = await fetch(`${endpoint}/moto-api/`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill();
      throw new Error(`moto did not start on ${endpoint}: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    endpoint,
    async reset() {
      await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(child.pid!, 'SIGTERM');
      await exited;
    },
  };
}

/** Dummy credentials for the emulator, set in this test process only. */
export function useDummyCredentials(): void {
  process.env.AWS_ACCESS_KEY_ID = 'testing';
  process.env.AWS_SECRET_ACCESS_KEY = 'testing';
  process.env.AWS_SESSION_TOKEN = 'testing';
  delete process.env.AWS_PROFILE;
}
