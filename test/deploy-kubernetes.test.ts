// The container image and the Kubernetes manifests (Dockerfile, deploy/kubernetes/), checked
// without a cluster: every manifest parses and validates against the Kubernetes OpenAPI schemas
// (kubernetes-models) or the Prometheus Operator's (@kubernetes-models/prometheus-operator); the
// kustomize output of every kustomization validates too (needs `kubectl` with kustomize v4 or later:
// skipped with a visible reason without it, except when CI is set, where .ci/run installs it); and
// the command every shard's container runs, once Kubernetes has expanded $(VAR) in it, is one the
// real `evesim run` accepts.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { Job } from 'kubernetes-models/batch/v1';
import { ConfigMap, Namespace, PersistentVolumeClaim } from 'kubernetes-models/v1';
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { loadOrCreateOnboardingKit } from '../src/cli/onboarding-kit.js';
import { envValue, expandArgs, readYamlDocuments, shardEnvironment, shardJobOf, type Manifest, type ShardJob } from './fixtures/indexed-job.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEPLOY = join(ROOT, 'deploy', 'kubernetes');
const KUSTOMIZATIONS = ['base', 'overlays/10x10k', 'merge', 'prometheus-operator'];



/** Validates with the model of its kind; throws naming the object when the schema rejects it. */
function validateManifest(m: Manifest, where: string): void {
  const models: Record<string, (d: never) => { validate(): void }> = {
    'v1/Namespace': (d) => new Namespace(d),
    'v1/ConfigMap': (d) => new ConfigMap(d),
    'v1/PersistentVolumeClaim': (d) => new PersistentVolumeClaim(d),
    'batch/v1/Job': (d) => new Job(d),
    'monitoring.coreos.com/v1/PodMonitor': (d) => new PodMonitor(d),
  };
  const key = `${m.apiVersion}/${m.kind}`;
  const model = models[key];
  if (!model) throw new Error(`${where}: no schema for ${key} in this test: add its model`);
  try {
    model(m as never).validate();
  } catch (e) {
    throw new Error(`${where}: ${key} ${m.metadata?.name}: ${(e as Error).message}`);
  }
}

function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return yamlFilesUnder(p);
    return /\.ya?ml$/.test(e.name) ? [p] : [];
  });
}

// --- kubectl kustomize -------------------------------------------------------------------------

const KUSTOMIZE_HINT =
  'kubectl with kustomize v4 or later not found: install kubectl >= 1.21 (.ci/run shows how) to render the kustomizations';
/** `kubectl version --client` when its kustomize is v4 or later, else null. */
function probeKustomize(): string | null {
  const r = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return null;
  const m = /Kustomize Version: v(\d+)\./.exec(r.stdout);
  return m && Number(m[1]) >= 4 ? r.stdout.trim().replace(/\n/g, ', ') : null;
}
const kustomizeVersion = probeKustomize();
const kustomizeMandatory = Boolean(process.env['CI']);
const skipKustomize = kustomizeVersion === null && !kustomizeMandatory;
if (skipKustomize) console.warn(`SKIPPED: rendering the kustomizations (${KUSTOMIZATIONS.length + 1} tests). ${KUSTOMIZE_HINT}`);

function kustomize(dir: string): Manifest[] {
  if (kustomizeVersion === null) {
    throw new Error(`${KUSTOMIZE_HINT}${kustomizeMandatory ? ' (CI is set, so rendering them is mandatory)' : ''}`);
  }
  const r = spawnSync('kubectl', ['kustomize', join(DEPLOY, dir)], { encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${r.stderr}`);
  // Kustomize writes standard YAML 1.2-compatible output (defaultMode as a decimal number).
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Manifest);
}

// --- the shard Job -----------------------------------------------------------------------------

/** What the user's evesim-run ConfigMap holds in the test (README.md shows how it is made). */
const RUN_CONFIG = {
  controller: 'https://127.0.0.1:9', // loopback only: with --dry-run nothing is contacted
  'start-at': new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
  'fleet-id': 'fleet-test',
};

/** The value following `flag` in args (undefined when the flag is absent). */
const flagValue = (args: string[], flag: string): string | undefined => {
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args[i + 1];
};

/** Invariants every rendering of the shard Job keeps. */
function checkShardJob(job: ShardJob, shards: number, fleetDevices: number): void {
  const spec = job.spec;
  expect(spec.completionMode).toBe('Indexed');
  expect(spec.completions).toBe(shards);
  expect(spec.parallelism).toBe(shards);
  const pod = spec.template.spec;
  const c = pod.containers[0]!;
  expect(envValue(c, 'SHARD_COUNT')).toBe(String(shards));
  expect(envValue(c, 'FLEET_DEVICES')).toBe(String(fleetDevices));
  expect(fleetDevices / shards).toBe(10_000); // what the resource requests are sized for
  expect(c.resources.requests).toEqual({ cpu: '2', memory: '1Gi' });
  expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000 });
  // Root-owned files with group fsGroup: readable by the evesim user's group only.
  const onboarding = pod.volumes.find((v) => v.name === 'onboarding')!;
  expect(onboarding.secret).toMatchObject({ secretName: 'evesim-onboarding', defaultMode: 0o440 });
  // Metrics: the port evesim serves, the port annotated for plain Prometheus and named for the PodMonitor.
  expect(flagValue(c.args, '--metrics-port')).toBe('9464');
  expect(flagValue(c.args, '--metrics-host')).toBe('0.0.0.0');
  expect(c.ports).toContainEqual({ name: 'metrics', containerPort: 9464 });
  expect(spec.template.metadata.annotations).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9464', 'prometheus.io/path': '/metrics' });

  const perShard = Array.from({ length: shards }, (_, i) => expandArgs(c.args, shardEnvironment(c, i, RUN_CONFIG)));
  for (const [i, args] of perShard.entries()) {
    expect(args.filter((a) => a.includes('$(')), `shard ${i}: unexpanded references`).toEqual([]);
    expect(flagValue(args, '--shard')).toBe(`${i}/${shards}`);
    expect(flagValue(args, '--summary-json')).toBe(`/results/shard-${i}.json`);
    expect(flagValue(args, '--devices')).toBe(String(fleetDevices)); // the whole fleet: evesim takes its share
    expect(flagValue(args, '--fleet-id')).toBe(RUN_CONFIG['fleet-id']);
    expect(flagValue(args, '--start-at')).toBe(RUN_CONFIG['start-at']);
  }
}

// --- tests -------------------------------------------------------------------------------------

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const instructions = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const finalStage = instructions.slice(instructions.findLastIndex((l) => /^FROM\s/i.test(l)));

  it('builds on Node 20 in every stage, with npm ci and the TypeScript build', () => {
    const froms = instructions.filter((l) => /^FROM\s/i.test(l));
    expect(froms.length).toBeGreaterThan(0);
    for (const from of froms) expect(from).toMatch(/^FROM\s+node:20[-.\w]*(\s+AS\s+\w+)?$/i);
    expect(instructions.some((l) => /^RUN\s.*\bnpm ci\b/.test(l))).toBe(true);
    expect(instructions.some((l) => /^RUN\s.*\btsc -p tsconfig\.json\b/.test(l))).toBe(true);
  });

  it('serves /metrics on every address by default, so a Prometheus in another pod can scrape it', () => {
    expect(finalStage).toContain('ENV EVESIM_METRICS_HOST=0.0.0.0');
  });

  it('runs evesim (bin/evesim.js) as a numeric non-root user', () => {
    const users = finalStage.filter((l) => /^USER\s/i.test(l));
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!.split(/\s+/)[1]!;
    expect(user).toMatch(/^\d+(:\d+)?$/); // numeric, so runAsNonRoot can check it
    expect(user.split(':')[0]).not.toBe('0');
    const entrypoint = finalStage.filter((l) => /^ENTRYPOINT\s/i.test(l)).at(-1);
    expect(entrypoint).toBeDefined();
    const argv = JSON.parse(entrypoint!.replace(/^ENTRYPOINT\s+/i, '')) as string[];
    expect(argv[0]).toBe('node');
    expect(argv[1]).toMatch(/\/bin\/evesim\.js$/);
  });

  it('preloads jemalloc, installed in the final stage, at the path it links it to', () => {
    const install = finalStage.find((l) => /^RUN\s.*apt-get install\b.*\blibjemalloc2\b/.test(l));
    expect(install).toBeDefined();
    const preload = finalStage.find((l) => /^ENV\s+LD_PRELOAD=/.test(l))?.split('=')[1];
    expect(preload).toBe('/usr/local/lib/libjemalloc.so.2');
    expect(install).toContain(`ln -s "$(find /usr/lib -name libjemalloc.so.2 | head -n 1)" ${preload}`);
    expect(install).toContain(`test -e ${preload}`);
    // Set before the entry point runs, so `evesim run` in the image stays one process.
    expect(finalStage.indexOf(`ENV LD_PRELOAD=${preload}`)).toBeLessThan(finalStage.findIndex((l) => /^ENTRYPOINT\s/.test(l)));
  });

  it('leaves local builds, dependencies and state out of the build context', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    for (const p of ['node_modules', 'dist', '.evesim-state', '.git']) expect(ignored).toContain(p);
  });
});

describe('deploy/kubernetes manifests', () => {
  it('every YAML file parses and every Kubernetes object in it validates against its schema', () => {
    const files = yamlFilesUnder(DEPLOY);
    let objects = 0;
    for (const file of files) {
      const where = relative(ROOT, file);
      for (const m of readYamlDocuments(file)) {
        if (m.kind === 'Kustomization') {
          expect(m.apiVersion, where).toBe('kustomize.config.k8s.io/v1beta1');
        } else if (where.endsWith('base/scenario.yaml')) {
          continue; // a scenario, checked below
        } else if (where.includes('overlays/')) {
          expect(m.kind, where).toBe('Job'); // a patch: partial by design, validated once rendered
        } else {
          validateManifest(m, where);
          objects++;
        }
      }
    }
    expect(objects).toBe(5); // namespace, PVC, shard Job, merge Job, PodMonitor
  });

  it('ships scenarios/steady-state.yaml unchanged as the shards\' scenario', () => {
    expect(readFileSync(join(DEPLOY, 'base', 'scenario.yaml'), 'utf8')).toBe(readFileSync(join(ROOT, 'scenarios', 'steady-state.yaml'), 'utf8'));
  });

  it('the shard Job of the base gives shard i of 2 its index, its summary file and the common fleet id', () => {
    checkShardJob(shardJobOf(readYamlDocuments(join(DEPLOY, 'base', 'job.yaml'))), 2, 20_000);
  });

  it('the PodMonitor selects the shard pods, scrapes the metrics port and labels series by shard', () => {
    const [monitor] = readYamlDocuments(join(DEPLOY, 'prometheus-operator', 'podmonitor.yaml')) as unknown as {
      spec: {
        selector: { matchLabels: Record<string, string> };
        podMetricsEndpoints: { port: string; path: string; interval: string; relabelings: { sourceLabels: string[]; targetLabel: string }[] }[];
      };
    }[];
    const job = shardJobOf(readYamlDocuments(join(DEPLOY, 'base', 'job.yaml')));
    expect(job.spec.template.metadata.labels).toMatchObject(monitor!.spec.selector.matchLabels);
    const endpoint = monitor!.spec.podMetricsEndpoints[0]!;
    expect(endpoint).toMatchObject({ port: 'metrics', path: '/metrics' });
    // The shards' /metrics outlive their summary by two scrapes, so the drain's figures get scraped.
    const seconds = (d: string | undefined) => Number(/^(\d+)s$/.exec(d ?? '')?.[1] ?? NaN);
    expect(seconds(flagValue(job.spec.template.spec.containers[0]!.args, '--metrics-linger'))).toBeGreaterThanOrEqual(2 * seconds(endpoint.interval));
    // Prometheus' name for the pod annotation batch.kubernetes.io/job-completion-index.
    expect(endpoint.relabelings).toContainEqual({
      sourceLabels: ['__meta_kubernetes_pod_annotation_batch_kubernetes_io_job_completion_index'],
      targetLabel: 'shard',
    });
  });

  it('the merge Job reads the volume the shards write to and runs evesim merge on every shard file', () => {
    const [merge] = readYamlDocuments(join(DEPLOY, 'merge', 'merge-job.yaml')) as unknown as {
      spec: { template: { spec: { containers: { command: string[]; args: string[]; volumeMounts: { name: string; mountPath: string }[] }[]; volumes: { name: string; persistentVolumeClaim: { claimName: string } }[] } } };
    }[];
    const pod = merge!.spec.template.spec;
    const shards = shardJobOf(readYamlDocuments(join(DEPLOY, 'base', 'job.yaml'))).spec.template.spec;
    const claim = (s: { volumes: { name: string; persistentVolumeClaim?: { claimName: string } }[] }) =>
      s.volumes.find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim?.claimName;
    expect(claim(pod)).toBe('evesim-results');
    expect(claim(shards as never)).toBe('evesim-results');
    expect(pod.containers[0]!.volumeMounts).toContainEqual({ name: 'results', mountPath: '/results' });
    expect(pod.containers[0]!.command).toEqual(['/bin/sh', '-c']);
    expect(pod.containers[0]!.args).toEqual(['exec evesim merge /results/shard-*.json --summary-json /results/all.json --junit /results/junit.xml']);
  });
});

describe.skipIf(skipKustomize)(`kubectl kustomize (${kustomizeVersion ?? 'not installed'})`, () => {
  for (const dir of KUSTOMIZATIONS) {
    it(`renders ${dir} into objects that validate`, () => {
      const objects = kustomize(dir);
      expect(objects.length).toBeGreaterThan(0);
      for (const m of objects) validateManifest(m, `kubectl kustomize ${dir}`);
      for (const m of objects) expect((m.metadata as { namespace?: string }).namespace ?? (m.kind === 'Namespace' ? 'evesim' : undefined), `${m.kind} ${m.metadata?.name}`).toBe('evesim');
    });
  }

  it('the overlay 10x10k runs 10 shards of 100,000 devices with the base\'s scenario and image', () => {
    const base = kustomize('base');
    const overlay = kustomize('overlays/10x10k');
    checkShardJob(shardJobOf(base), 2, 20_000);
    checkShardJob(shardJobOf(overlay), 10, 100_000);
    const job = shardJobOf(overlay);
    const c = job.spec.template.spec.containers[0]!;
    expect(c.image).toBe(shardJobOf(base).spec.template.spec.containers[0]!.image);
    expect(c.image).not.toBe('evesim'); // the images: entry applied
    // The merge Job runs the same image (merge/kustomization.yaml names it too).
    const mergeJob = kustomize('merge').find((m) => m.kind === 'Job') as unknown as ShardJob;
    expect(mergeJob.spec.template.spec.containers[0]!.image).toBe(c.image);
    // The generated scenario ConfigMap (name with a content hash) is the one the Job mounts.
    const scenarioMaps = overlay.filter((m) => m.kind === 'ConfigMap' && m.metadata?.name?.startsWith('evesim-scenario-'));
    expect(scenarioMaps).toHaveLength(1);
    expect(job.spec.template.spec.volumes.find((v) => v.name === 'scenario')?.configMap?.name).toBe(scenarioMaps[0]!.metadata!.name);
    expect((scenarioMaps[0] as { data: Record<string, string> }).data['scenario.yaml']).toBe(readFileSync(join(ROOT, 'scenarios', 'steady-state.yaml'), 'utf8'));
  });
});

describe('the shard command is one evesim run accepts', () => {
  const work = mkdtempSync(join(tmpdir(), 'evesim-k8s-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** The container's expanded args with the pod's paths mapped into `work` (same files, local places). */
  function localArgs(index: number): string[] {
    const job = shardJobOf(readYamlDocuments(join(DEPLOY, 'base', 'job.yaml')));
    const c = job.spec.template.spec.containers[0]!;
    const args = expandArgs(c.args, shardEnvironment(c, index, RUN_CONFIG));
    const kit = loadOrCreateOnboardingKit(join(work, 'kit'));
    const places: Record<string, string> = {
      '/etc/evesim/scenario/scenario.yaml': join(DEPLOY, 'base', 'scenario.yaml'),
      '/etc/evesim/onboarding/root-ca.pem': kit.caFile,
      '/etc/evesim/onboarding/onboard.cert.pem': kit.certFile,
      '/etc/evesim/onboarding/onboard.key.pem': kit.keyFile,
      '/state': join(work, `state-${index}`),
    };
    mkdirSync(join(work, 'results'), { recursive: true });
    return args.map((a) => places[a] ?? a.replace(/^\/results\//, join(work, 'results') + '/'));
  }

  function evesim(args: string[]): { status: number | null; stderr: string; stdout: string } {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'evesim.js'), ...args], { cwd: work, encoding: 'utf8', timeout: 60_000 });
    if (r.error) throw r.error;
    return { status: r.status, stderr: r.stderr, stdout: r.stdout };
  }

  // The real CLI, as the container runs it, with --dry-run (checks everything, contacts nothing).
  it('every shard of the base passes evesim run --dry-run', () => {
    for (let i = 0; i < 2; i++) {
      const r = evesim([...localArgs(i), '--dry-run']);
      expect(r.status, `shard ${i}: ${r.stderr}`).toBe(0);
    }
  });
});
