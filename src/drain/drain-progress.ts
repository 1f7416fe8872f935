/** The progress bar of `sluice drain`: cli-progress on a TTY, nothing otherwise (logs and pipes stay clean). */
import { Presets, SingleBar } from 'cli-progress';

export interface TextOut {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface Progress {
  tick(): void;
  stop(): void;
}

export const createProgress = (out: TextOut, total: number): Progress => {
  if (!out.isTTY || total <= 0) return { tick: () => undefined, stop: () => undefined };
  const bar = new SingleBar(
    { stream: out as NodeJS.WritableStream, format: 'draining [{bar}] {value}/{total} messages | {duration_formatted}', hideCursor: true },
    Presets.shades_classic,
  );
  bar.start(total, 0);
  return { tick: () => bar.increment(), stop: () => bar.stop() };
};
