/** What the commands need from the process: arguments come in, text goes out. */
export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface RunOptions {
  config?: string;
}

export interface DrainOptions {
  config?: string;
  /** The dead-letter topic (or another topic) instead of the retry tiers. */
  topic?: string;
  /** Forward delayed messages now, not at their not-before. */
  ignoreDelay: boolean;
  /** Decide and report, write and commit nothing. */
  dryRun: boolean;
  /** Stop after this many messages. */
  max?: number;
  /** Drain the retry tiers even while retry.group has other members. */
  force: boolean;
}

export interface StatusOptions {
  config?: string;
  producer?: string;
}

export interface UsageOptions {
  config?: string;
  producer: string;
  /** A configured bucket size (usage.resolutions), e.g. 1m. */
  resolution?: string;
  /** How far back, a duration such as 1h. */
  since?: string;
  json: boolean;
}

/** Implemented by the pipeline (src/main.ts passes them in); each resolves to an exit code. */
export interface CommandHandlers {
  run(opts: RunOptions): Promise<number>;
  drain(opts: DrainOptions): Promise<number>;
  status(opts: StatusOptions): Promise<number>;
  usage?(opts: UsageOptions): Promise<number>;
}
