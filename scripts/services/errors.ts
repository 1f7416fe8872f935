/** A failure of `npm run services`: a message for the user and the exit code of the command. */
export const EXIT_PREREQUISITE_MISSING = 2;
export const EXIT_FAILED = 1;

export class ServicesError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode: number = EXIT_FAILED) {
    super(message);
    this.name = 'ServicesError';
    this.exitCode = exitCode;
  }
}
