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

/** The process exit code of CONTRACT.md for an error that ends a command. */
export const exitCodeOf = (error: unknown): number =>
  error instanceof SluiceError ? exitCodes[error.code] : 3;
