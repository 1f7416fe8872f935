/** The settings after loading: typed, derived defaults resolved, durations in ms. Frozen. */
import type { Resolution } from './usage-resolutions';

export type SaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';
export type OnStoreError = 'local' | 'park' | 'forward';
export type Mode = 'enforce' | 'shadow';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface RetryTier {
  delayMs: number;
  /** The shortest exact spelling of the delay ("5s", "10m"), the topic's suffix. */
  label: string;
  /** `<topics.retry>.<label>` */
  topic: string;
}

export interface HostPort {
  host: string;
  port: number;
}

export interface Config {
  readonly kafka: {
    readonly brokers: readonly string[];
    readonly clientId: string;
    readonly ssl: boolean;
    /** Path of a PEM CA file, or undefined for the system CAs. */
    readonly sslCa?: string;
    /** Paths of the PEM client certificate and its key (mTLS): both or neither. */
    readonly sslCert?: string;
    readonly sslKey?: string;
    readonly sasl?: { readonly mechanism: SaslMechanism; readonly username: string; readonly password: string };
    readonly connectionTimeoutMs: number;
    /** How long a destination may fail every send before /healthz fails. */
    readonly stuckAfterMs: number;
  };
  readonly topics: {
    readonly ingress: string;
    readonly downstream: string;
    readonly retry: string;
    readonly deadLetter: string;
    readonly create: boolean;
  };
  readonly group: string;
  readonly retry: {
    readonly group: string;
    /** Sorted by delay, shortest first. */
    readonly tiers: readonly RetryTier[];
    readonly maxAttempts: number;
    readonly maxAgeMs: number;
  };
  readonly hold: { readonly maxMs: number; readonly maxMessages: number; readonly maxBytes: number };
  readonly commit: { readonly intervalMs: number };
  readonly identity: { readonly source: 'header' | 'key'; readonly header: string; readonly fallback: string };
  readonly redis: {
    readonly url: string;
    /** Empty: standalone (redis.url). */
    readonly clusterNodes: readonly HostPort[];
    readonly password?: string;
    /** TLS to Redis: redis.tls, or a rediss:// URL. */
    readonly tls: boolean;
    readonly keyPrefix: string;
    readonly timeoutMs: number;
  };
  readonly quotas: { readonly file: string };
  readonly limiter: { readonly onStoreError: OnStoreError };
  readonly mode: Mode;
  /**
   * host:port the main listener (probes, /metrics; /v1/* only with adminToken); adminHost:adminPort
   * the admin listener (/v1/*, tokenless on loopback). adminToken: undefined when empty.
   */
  readonly http: { readonly host: string; readonly port: number; readonly adminHost: string; readonly adminPort: number; readonly adminToken?: string };
  /** Finest first; empty: no usage history. */
  readonly usage: { readonly resolutions: readonly Resolution[] };
  readonly log: { readonly level: LogLevel };
}
