/** Reads and compiles a quota file from disk; QUOTA_INVALID names the file on any failure. */
import { readFileSync } from 'node:fs';
import { SluiceError } from '../errors';
import { parseQuotas } from './parse-quotas';
import type { QuotaRules } from './types';

export const readQuotaText = (file: string): string => {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (error as Error).message;
    throw new SluiceError('QUOTA_INVALID', `${file}: cannot read the quota file: ${reason}`, { cause: error });
  }
};

export const loadQuotas = (file: string): QuotaRules => parseQuotas(readQuotaText(file), file);
