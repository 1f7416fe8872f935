/**
 * Fetches the official Kafka broker jars of one version from Maven Central with Maven
 * (kafka-pom.xml, one profile per version) into `~/.cache/sluice/kafka/<version>/lib`.
 * The local Maven repository keeps the jars too, so a fresh cache refills without network.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ServicesError } from './errors';
import { progress } from './log';
import { kafkaCacheDir, kafkaPom } from './paths';
import { requireJavaAndMaven } from './prerequisites';

const FETCH_TIMEOUT_MS = 20 * 60_000;

const runMaven = (args: string[]): Promise<{ code: number | null; output: string }> =>
  new Promise((resolve) => {
    const child = spawn('mvn', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-8000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), FETCH_TIMEOUT_MS);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });

/** The lib folder of `version`, fetched first if the cache does not hold it yet. */
export const ensureKafkaJars = async (version: string): Promise<string> => {
  const dir = kafkaCacheDir(version);
  const lib = path.join(dir, 'lib');
  const complete = path.join(dir, 'complete');
  if (fs.existsSync(complete)) return lib;
  requireJavaAndMaven();
  const partial = `${lib}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  progress(`fetching the Kafka ${version} jars from Maven Central into ${lib} (first time only)`);
  const { code, output } = await runMaven([
    '-B', '-q', '-f', kafkaPom(), `-Pkafka-${version}`,
    'org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies',
    '-DincludeScope=runtime', `-DoutputDirectory=${partial}`,
  ]);
  if (code !== 0 || !fs.existsSync(path.join(partial, `kafka_2.13-${version}.jar`))) {
    fs.rmSync(partial, { recursive: true, force: true });
    throw new ServicesError(`Maven could not fetch the Kafka ${version} jars (exit ${code}):\n${output.trim()}`);
  }
  fs.rmSync(lib, { recursive: true, force: true });
  fs.renameSync(partial, lib);
  fs.writeFileSync(complete, `${new Date().toISOString()}\n`);
  return lib;
};
