/** Progress for humans goes to stderr: stdout carries only the KEY=value lines of `up`. */
export const progress = (message: string): void => {
  process.stderr.write(`services: ${message}\n`);
};
