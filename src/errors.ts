/** One error type for the whole program: a stable code, whether a retry may help, and the cause. */
export type ErrorCode =
  | 'CONFIG_INVALID' // settings: unknown key or bad value
  | 'QUOTA_INVALID' // quota file: parse or validation error
  | 'RATE_INVALID' // a rate, duration or window that does not parse
  | 'ARGUMENT_INVALID' // command-line arguments
  | 'STORE_UNAVAILABLE' // Redis did not answer (timeout, connection)
  | 'KAFKA_UNREACHABLE' // the broker did not answer in time
  | 'TOPIC_INVALID' // a topic is missing or misconfigured
  | 'MESSAGE_TOO_LARGE' // a message that cannot be written anywhere
  | 'INTERNAL';

const exitCodes: Record<ErrorCode, number> = {
  CONFIG_INVALID: 1,
  QUOTA_INVALID: 1,
  RATE_INVALID: 1,
  ARGUMENT_INVALID: 1,
  STORE_UNAVAILABLE: 3,
  KAFKA_UNREACHABLE: 2,
  TOPIC_INVALID: 2,
  MESSAGE_TOO_LARGE: 3,
  INTERNAL: 3,
};

export class SluiceError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;

  constructor(code: ErrorCode, message: string, options: { retriable?: boolean; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'SluiceError';
    this.code = code;
    this.retriable = options.retriable ?? false;
  }
}

/** The errors an error wraps: its cause, kafkajs's originalError, and the errors of an aggregate (kafkajs's too). */
const innerErrors = (error: Error): unknown[] => {
  const { originalError, errors } = error as { originalError?: unknown; errors?: unknown[] };
  return [error.cause, originalError, ...(errors ?? [])];
};

/** An error and what it wraps, depth first, at most 5 deep. */
export const errorChain = (error: unknown, depth = 0): Error[] =>
  !(error instanceof Error) || depth > 5 ? [] : [error, ...innerErrors(error).flatMap((inner) => errorChain(inner, depth + 1))];

/** The first of the chain `pick` finds something in. */
const findInChain = <T>(error: unknown, pick: (error: Error) => T | undefined): T | undefined => {
  for (const e of errorChain(error)) {
    const found = pick(e);
    if (found !== undefined) return found;
  }
  return undefined;
};

/** The broker's error code a kafkajs error carries somewhere in its chain (`UNKNOWN_TOPIC_OR_PARTITION`, …). */
export const brokerErrorType = (error: unknown): string | undefined =>
  findInChain(error, (e) => {
    const { type } = e as { type?: unknown };
    return typeof type === 'string' ? type : undefined;
  });

/** A kafkajs error (KafkaJSError and its kinds), by name: this file does not import kafkajs. */
export const isKafkaError = (error: unknown): boolean => findInChain(error, (e) => (e.name.startsWith('KafkaJS') ? true : undefined)) === true;

/** Broker error types that mean a topic is missing, denied or misconfigured. */
const TOPIC_PROBLEMS = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION', 'UNKNOWN_TOPIC_ID', 'TOPIC_AUTHORIZATION_FAILED', 'INVALID_TOPIC_EXCEPTION', 'TOPIC_ALREADY_EXISTS',
  'INVALID_PARTITIONS', 'INVALID_REPLICATION_FACTOR', 'INVALID_REPLICA_ASSIGNMENT', 'INVALID_CONFIG', 'POLICY_VIOLATION',
]);

/**
 * A kafkajs error met at start, as the SluiceError that ends the command with exit 2: a topic
 * problem is TOPIC_INVALID, anything else KAFKA_UNREACHABLE; `doing` says what was being done.
 * Any other error is returned as it is.
 */
export const kafkaErrorOf = (doing: string, error: unknown): unknown => {
  if (error instanceof SluiceError || !isKafkaError(error)) return error;
  const type = brokerErrorType(error);
  const code: ErrorCode = type !== undefined && TOPIC_PROBLEMS.has(type) ? 'TOPIC_INVALID' : 'KAFKA_UNREACHABLE';
  const message = `${doing}: ${(error as Error).message}${type !== undefined ? ` (${type})` : ''}`;
  return new SluiceError(code, message, { cause: error, retriable: code === 'KAFKA_UNREACHABLE' });
};

/**
 * The process exit code of docs/contract.md for an error that ends a command. A kafkajs error
 * that was not wrapped (found anywhere in the causes) is a Kafka problem: 2, not 3.
 */
export const exitCodeOf = (error: unknown): number => {
  if (error instanceof SluiceError) return exitCodes[error.code];
  return isKafkaError(error) ? 2 : 3;
};
