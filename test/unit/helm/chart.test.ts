/** The Helm chart, rendered by the real helm binary (see scripts/install-helm.sh). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadConfig, settingsTable } from '../../../src/config';
import { byKind, chartDir, one, render, runHelm, type Manifest } from './helm-binary';

const envOfKey = new Map(settingsTable().map((row) => [row.env, row.key]));
const secretEnvs = settingsTable().filter((row) => row.sensitive).map((row) => row.env);
type Container = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const podSpec = (m: Manifest) => (m.kind === 'Job' || m.kind === 'Deployment' ? m.spec.template.spec : m.spec);
const container = (m: Manifest, name: string): Container => podSpec(m).containers.find((c: Container) => c.name === name);

/** every SLUICE_* variable a container gets: from the settings ConfigMap (envFrom) and its env list. */
const sluiceEnv = (manifests: Manifest[], c: Container): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) Object.assign(env, one(manifests, 'ConfigMap', from.configMapRef.name).data);
  for (const e of c.env ?? []) env[e.name] = e.value ?? `<secret ${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}>`;
  return env;
};

const expectHardened = (m: Manifest, c: Container) => {
  expect(podSpec(m).securityContext).toMatchObject({ runAsNonRoot: true });
  expect(podSpec(m).automountServiceAccountToken).toBe(false);
  expect(c.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
};

/** the quota file is reached through a directory mount of the quotas ConfigMap (never subPath). */
const expectQuotasDirectory = (manifests: Manifest[], m: Manifest, c: Container, env: Record<string, string>) => {
  const mount = c.volumeMounts.find((v: Container) => v.name === 'quotas');
  expect(mount.subPath).toBeUndefined();
  expect(env.SLUICE_QUOTAS_FILE).toBe(`${mount.mountPath}/quotas.yaml`);
  const volume = podSpec(m).volumes.find((v: Container) => v.name === 'quotas');
  const configMap = one(manifests, 'ConfigMap', volume.configMap.name);
  expect(Object.keys(configMap.data ?? {})).toEqual(['quotas.yaml']);
  expect(parse(configMap.data!['quotas.yaml'])).toHaveProperty('default.rate');
};

/** what sluice itself would make of these variables (the convict schema, with secrets filled in). */
const expectAcceptedBySluice = (env: Record<string, string>) => {
  const filled = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.startsWith('<secret') ? 'from-a-secret' : v]));
  expect(() => loadConfig({ env: filled })).not.toThrow();
};

describe('helm chart', () => {
  describe('when linted strictly', () => {
    it.each([[[]], [['-f', 'ci/standalone-values.yaml']], [['-f', 'ci/sidecar-values.yaml']]])('passes with %j', (args) => {
      const result = runHelm(['lint', '--strict', '.', ...args]);
      expect(`${result.stdout}${result.stderr}`).toContain('0 chart(s) failed');
      expect(result.status).toBe(0);
    });
  });

  describe('when rendered with the default values', () => {
    const manifests = render('sluice');
    const deployment = one(manifests, 'Deployment');
    const c = container(deployment, 'sluice');
    const env = sluiceEnv(manifests, c);

    it('is a standalone Deployment with a Service and a PodDisruptionBudget, no Job and no ServiceMonitor', () => {
      expect(manifests.map((m) => m.kind).sort()).toEqual(['ConfigMap', 'ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Service']);
      expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
      expect(c.args).toEqual(['run']);
    });

    it('gives the container only SLUICE_* variables that are settings keys, with placeholder topics', () => {
      for (const name of Object.keys(env)) expect(envOfKey.has(name) ? name : `${name} (not a settings key)`).toBe(name);
      expect(env).toMatchObject({ SLUICE_INGRESS_TOPIC: 'events', SLUICE_DOWNSTREAM_TOPIC: 'events.throttled' });
      expectAcceptedBySluice(env);
    });

    it('serves HTTP on the settings port with liveness on /healthz and readiness on /readyz', () => {
      expect(c.ports).toEqual([{ name: 'http', containerPort: Number(env.SLUICE_HTTP_PORT), protocol: 'TCP' }]);
      expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(one(manifests, 'Service').spec.ports[0]).toMatchObject({ targetPort: 'http', port: 9464 });
    });

    it('keeps the admin listener (/v1/*) on loopback: neither a container port nor in the Service', () => {
      expect(env).toMatchObject({ SLUICE_HTTP_ADMIN_HOST: '127.0.0.1', SLUICE_HTTP_ADMIN_PORT: '9465' });
      expect(c.ports.map((p: Container) => p.containerPort)).not.toContain(9465);
      expect(one(manifests, 'Service').spec.ports).toHaveLength(1);
    });

    it('runs non-root with a read-only root filesystem and no capabilities, with resources set', () => {
      expectHardened(deployment, c);
      expect(c.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
      expect(c.resources.limits.memory).toBeDefined();
      expect(c.volumeMounts).toEqual(expect.arrayContaining([{ name: 'tmp', mountPath: '/tmp' }]));
    });

    it('mounts the quotas ConfigMap as a directory so edits are reloaded', () => {
      expectQuotasDirectory(manifests, deployment, c, env);
    });

    it('lets at most one replica be disrupted at a time and selects its own pods', () => {
      const pdb = one(manifests, 'PodDisruptionBudget');
      expect(pdb.spec.maxUnavailable).toBe(1);
      expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    });
  });

  describe('when rendered standalone with SASL, a Redis password, a ServiceMonitor and the drain Job', () => {
    const manifests = render('orders', ['-f', 'ci/standalone-values.yaml']);
    const deployment = one(manifests, 'Deployment');
    const c = container(deployment, 'sluice');
    const env = sluiceEnv(manifests, c);

    it('takes both passwords from Secrets and never from values', () => {
      expect(c.env).toEqual(
        expect.arrayContaining([
          { name: 'SLUICE_KAFKA_SASL_PASSWORD', valueFrom: { secretKeyRef: { name: 'sluice-kafka', key: 'sasl-password' } } },
          { name: 'SLUICE_REDIS_PASSWORD', valueFrom: { secretKeyRef: { name: 'sluice-redis', key: 'redis-password' } } },
        ]),
      );
      for (const m of byKind(manifests, 'ConfigMap')) for (const name of secretEnvs) expect(m.data ?? {}).not.toHaveProperty(name);
      expectAcceptedBySluice(env);
    });

    it('renders large numbers as plain integers', () => {
      expect(env.SLUICE_HOLD_MAX_MESSAGES).toBe('1000000');
      expect(deployment.spec.replicas).toBe(3);
    });

    it('scrapes /metrics through a ServiceMonitor on the http port', () => {
      const monitor = one(manifests, 'ServiceMonitor');
      expect(monitor.metadata.labels).toMatchObject({ release: 'prometheus' });
      expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'http', path: '/metrics' })]);
    });

    it('runs `sluice drain` on the dead-letter topic in a hardened Job with the same settings and quotas', () => {
      const job = one(manifests, 'Job');
      const drain = container(job, 'drain');
      expect(drain.args).toEqual(['drain', '--topic', 'orders.dlq']);
      expect(job.spec.template.spec.restartPolicy).toBe('Never');
      expect(sluiceEnv(manifests, drain)).toEqual(env);
      expectHardened(job, drain);
      expectQuotasDirectory(manifests, job, drain, env);
    });

    it('drains the retry tiers instead when asked, with the flags passed through', () => {
      const job = one(render('orders', ['-f', 'ci/standalone-values.yaml', '--set', 'drain.tiers=true,drain.force=true,drain.ignoreDelay=true,drain.max=500']), 'Job');
      expect(container(job, 'drain').args).toEqual(['drain', '--ignore-delay', '--max', '500', '--force']);
    });
  });

  describe('when rendered in sidecar mode', () => {
    const manifests = render('orders', ['-f', 'ci/sidecar-values.yaml']);

    it('renders only the settings and quotas ConfigMaps for the workload to reference', () => {
      expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual(['ConfigMap/orders-sluice-quotas', 'ConfigMap/orders-sluice-settings']);
      const data = one(manifests, 'ConfigMap', 'settings').data!;
      for (const name of Object.keys(data)) expect(envOfKey.has(name) ? name : `${name} (not a settings key)`).toBe(name);
      expect(data).toMatchObject({ SLUICE_INGRESS_TOPIC: 'app.out', SLUICE_REDIS_KEY_PREFIX: 'sluice-app:' });
    });

    it.each([
      ['native-sidecar.yaml', 'initContainers'],
      ['classic-sidecar.yaml', 'containers'],
    ])('documents %s with a sluice container wired to those ConfigMaps', (file, list) => {
      const example = parse(readFileSync(join(chartDir, 'examples', file), 'utf8')) as Manifest;
      const pod = example.spec.template.spec;
      const sluice: Container = pod[list].find((x: Container) => x.name === 'sluice');
      if (list === 'initContainers') expect(sluice.restartPolicy).toBe('Always');
      else expect(pod.containers.map((x: Container) => x.name)).toEqual(['app', 'sluice']);
      const env = sluiceEnv([...manifests, example], { ...sluice, env: sluice.env });
      for (const name of Object.keys(env)) expect(envOfKey.has(name) ? name : `${name} (not a settings key)`).toBe(name);
      expect(sluice.readinessProbe.httpGet.path).toBe('/readyz');
      expect(sluice.livenessProbe.httpGet.path).toBe('/healthz');
      expect(sluice.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      const mount = sluice.volumeMounts.find((v: Container) => v.mountPath === '/etc/sluice/quotas');
      expect(mount.subPath).toBeUndefined();
      const volume = pod.volumes.find((v: Container) => v.name === mount.name);
      expect(volume.configMap.name).toBe('orders-sluice-quotas');
    });
  });

  describe('when values are wrong', () => {
    it.each([
      ['mode=daemonset', "at '/mode'"],
      ['config.limiter.onStoreError=drop', "at '/config/limiter/onStoreError'"],
      ['replicaCount=0', "at '/replicaCount'"],
      ['config.http.port=70000', "at '/config/http/port'"],
      ['config.foo=1', "additional properties 'foo' not allowed"],
      ['config.topics.ingress=', "at '/config/topics/ingress'"],
      ['config.retry.maxAge=soon', "at '/config/retry/maxAge'"],
      ['config.redis.url=http://redis:6379', "at '/config/redis/url'"],
      ['securityContext.readOnlyRootFilesystem=false', "at '/securityContext/readOnlyRootFilesystem'"],
      ['config.kafka.sasl.mechanism=plain', "at '/config/kafka/sasl"],
      ['drain.tiers=true,drain.topic=other', "'allOf' failed"],
      ['config.usage.resolutions=1m', "at '/config/usage/resolutions'"],
      ['dashboard.enabled=yes', "at '/dashboard/enabled'"],
      // The one grammar of src/units: no space inside, units case-sensitive, tiers with a unit.
      ['config.retry.maxAge=1 d', "at '/config/retry/maxAge'"],
      ['config.hold.maxBytes=64mib', "at '/config/hold/maxBytes'"],
      ['config.retry.tiers=5000', "at '/config/retry/tiers'"],
    ])('refuses %s', (set, message) => {
      const result = runHelm(['template', 'x', '.', '--set', set]);
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain("values don't meet the specifications of the schema");
      expect(result.stderr).toContain(message);
    });

    it('refuses an admin listener off loopback without a token, and takes it with one', () => {
      const refused = runHelm(['template', 'x', '.', '--set', 'config.http.adminHost=0.0.0.0']);
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toContain("at '/config/http/adminToken/secretName'");
      const accepted = runHelm(['template', 'x', '.', '--set', 'config.http.adminHost=0.0.0.0,config.http.adminToken.secretName=sluice-admin']);
      expect(accepted.stderr).toBe('');
      expect(accepted.status).toBe(0);
    });

    it('refuses a literal password where a Secret reference belongs', () => {
      const result = runHelm(['template', 'x', '.', '--set-json', 'config.redis.password="hunter2"']);
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain("at '/config/redis/password'");
    });
  });
});
