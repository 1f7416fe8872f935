/**
 * No Docker engine runs here: this checks the Dockerfile's structure and runs the commands of
 * its build and production-dependency stages in a temporary copy (offline, from the npm cache),
 * then starts the pruned result the way the image does.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '../../..');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const dockerignore = readFileSync(join(root, '.dockerignore'), 'utf8');

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name: string;
  instructions: Instruction[];
}

const parse = (text: string): Stage[] => {
  const logical = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of logical) {
    const [op, ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (op.toUpperCase() === 'FROM') {
      const [from, , name] = rest;
      stages.push({ from, name: name ?? String(stages.length), instructions: [] });
    } else if (stages.length > 0) stages[stages.length - 1].instructions.push({ op: op.toUpperCase(), args });
  }
  return stages;
};

const stages = parse(dockerfile);
const final = stages[stages.length - 1];
const ops = (stage: Stage, op: string) => stage.instructions.filter((i) => i.op === op).map((i) => i.args);

describe('Dockerfile', () => {
  describe('its stages', () => {
    it('builds with the dev dependencies, installs production dependencies apart, and runs on node 24 slim', () => {
      expect(stages.map((s) => s.name)).toEqual(['build', 'deps', 'runtime']);
      expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-slim$/m);
      expect(stages.every((s) => s.from === '${NODE_IMAGE}')).toBe(true);
      expect(ops(stages[0], 'RUN')).toEqual(expect.arrayContaining([expect.stringMatching(/^npm ci\b/), 'npm run build']));
      expect(ops(stages[1], 'RUN').join(' ')).toMatch(/npm ci --omit=dev/);
    });

    it('applies the kafkajs patch in the build stage, before the build bundles kafkajs', () => {
      expect(ops(stages[0], 'COPY')).toContain('patches ./patches');
      const runs = ops(stages[0], 'RUN');
      const patched = runs.findIndex((r) => /npm ci .*&& npx patch-package/.test(r));
      expect(patched).toBeGreaterThanOrEqual(0);
      expect(runs.indexOf('npm run build')).toBeGreaterThan(patched);
    });

    it('uses a Node major that package.json engines admits', () => {
      const image = Number(/^ARG NODE_IMAGE=node:(\d+)-slim$/m.exec(dockerfile)?.[1]);
      const engines = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
      const least = Number(/^>=\s*(\d+)$/.exec(engines)?.[1]);
      expect(least).toBeGreaterThan(0);
      expect(image).toBeGreaterThanOrEqual(least);
    });

    it('copies only dist, the production node_modules and package.json into the final stage', () => {
      expect(ops(final, 'COPY').sort()).toEqual(['--from=build /app/dist ./dist', '--from=deps /app/node_modules ./node_modules', 'package.json ./']);
      expect(ops(final, 'RUN')).toEqual([]);
    });

    it('runs as a numeric non-root user with node as PID 1 in exec form', () => {
      const users = ops(final, 'USER');
      expect(users).toHaveLength(1);
      expect(users[0]).toMatch(/^[1-9]\d*:[1-9]\d*$/);
      expect(ops(final, 'ENTRYPOINT')).toEqual(['["node", "dist/main.js"]']);
      expect(ops(final, 'CMD')).toEqual(['["run"]']);
      expect(ops(final, 'STOPSIGNAL')).toEqual(['SIGTERM']);
    });
  });

  describe('what it copies', () => {
    it('never copies the whole context, secrets or npm credentials', () => {
      const copies = stages.flatMap((s) => ops(s, 'COPY').concat(ops(s, 'ADD')));
      for (const copy of copies) {
        const sources = copy.split(/\s+/).filter((word) => !word.startsWith('--')).slice(0, -1);
        expect(sources).not.toContain('.');
        expect(sources).not.toContain('./');
        expect(copy).not.toMatch(/\.env|\.npmrc|\.pem|\.key|secret/i);
      }
      expect(stages.flatMap((s) => ops(s, 'ADD'))).toEqual([]);
      expect(stages.flatMap((s) => ops(s, 'ARG').concat(ops(s, 'ENV'))).join(' ')).not.toMatch(/password|secret|token/i);
    });

    it('has a .dockerignore that lets in only what the Dockerfile copies and keeps secrets out', () => {
      const rules = dockerignore.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
      expect(rules[0]).toBe('*');
      const allowed = rules.filter((r) => r.startsWith('!')).map((r) => r.slice(1));
      expect(allowed.sort()).toEqual(['package-lock.json', 'package.json', 'patches', 'patches/**', 'scripts/build.mjs', 'src', 'src/**', 'tsconfig.build.json', 'tsconfig.json']);
      for (const secret of ['**/.env', '**/.npmrc', '**/*.pem', '**/*.key']) expect(rules).toContain(secret);
    });
  });

  describe('when its build and prune steps run in a copy of the project', () => {
    it('starts the pruned build with `node dist/main.js --help`, and its kafkajs is the bundled, patched one', () => {
      const work = mkdtempSync(join(tmpdir(), 'sluice-docker-'));
      const run = (command: string, args: string[], env: Record<string, string> = {}): string => {
        try {
          return execFileSync(command, args, { cwd: work, env: { ...process.env, npm_config_offline: 'true', ...env }, stdio: 'pipe', encoding: 'utf8', timeout: 240_000 });
        } catch (error) {
          const stderr = String((error as { stderr?: unknown }).stderr ?? '');
          const hint = /EUSAGE[\s\S]*in sync/.test(stderr)
            ? 'package-lock.json is out of sync with package.json, so `npm ci` (and the Docker build) refuses it; regenerate the lock with `npm install` against a registry that serves every optional platform package.\n'
            : '';
          throw new Error(`${hint}${command} ${args.join(' ')} failed:\n${stderr.split('\n').slice(0, 12).join('\n')}`);
        }
      };
      try {
        for (const path of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs', 'src', 'patches']) {
          cpSync(join(root, path), join(work, path), { recursive: true });
        }
        run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund']);
        run('npx', ['patch-package']);
        run('npm', ['run', 'build']);
        run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund']);
        expect(existsSync(join(work, 'node_modules/typescript'))).toBe(false);
        // The production install is not patched (--ignore-scripts): the bundle must not read it.
        expect(readFileSync(join(work, 'node_modules/kafkajs/src/protocol/recordBatch/record/v0/decoder.js'), 'utf8')).not.toMatch(/Linear in the number of headers/);
        // `sluice run` checks its kafkajs before it connects: with no broker to reach it stops
        // with exit 2 (unreachable), where an unpatched kafkajs would stop it with exit 3.
        const started = spawnSync('node', ['dist/main.js', 'run'], {
          cwd: work,
          encoding: 'utf8',
          timeout: 60_000,
          env: { ...process.env, NODE_ENV: 'production', SLUICE_KAFKA_BROKERS: '127.0.0.1:1', SLUICE_REDIS_URL: 'redis://127.0.0.1:1', SLUICE_INGRESS_TOPIC: 'in', SLUICE_DOWNSTREAM_TOPIC: 'out', SLUICE_QUOTAS_FILE: join(root, 'config/quotas.yaml'), SLUICE_HTTP_PORT: '0', SLUICE_HTTP_ADMIN_PORT: '0' },
        });
        expect(started.stdout + started.stderr).not.toContain('not patched');
        expect(started.stdout).toContain('cannot reach the Kafka brokers');
        expect(started.status).toBe(2);
        const help = run('node', ['dist/main.js', '--help'], { NODE_ENV: 'production' });
        expect(help).toMatch(/sluice/);
        expect(help).toMatch(/\brun\b/);
        expect(help).toMatch(/\bdrain\b/);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    }, 300_000);
  });
});
