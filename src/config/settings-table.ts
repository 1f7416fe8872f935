/** The schema as a table (key, environment variable, default, doc): for docs, Helm and sync tests. */
import { flattenSchema } from './schema';

export interface SettingRow {
  key: string;
  env: string;
  /** As a reader sees it: "127.0.0.1:9092", "<ingress>.retry", "required", "empty". */
  default: string;
  doc: string;
  sensitive: boolean;
  required: boolean;
  /** The allowed values of an enumeration. */
  values?: readonly string[];
}

const shownDefault = (value: string | number | boolean, text?: string, required?: boolean): string => {
  if (text !== undefined) return text;
  if (required) return 'required';
  return value === '' ? 'empty' : String(value);
};

export const settingsTable = (): SettingRow[] =>
  flattenSchema().map((s) => ({
    key: s.key,
    env: s.env,
    default: shownDefault(s.default, s.defaultText, s.required),
    doc: s.doc,
    sensitive: s.sensitive === true,
    required: s.required === true,
    ...(typeof s.format === 'string' ? {} : { values: s.format }),
  }));

/** The table as Markdown, for the README. */
export const settingsMarkdown = (): string =>
  [
    '| key | environment variable | default | meaning |',
    '| --- | --- | --- | --- |',
    ...settingsTable().map(
      (row) =>
        `| ${row.key} | ${row.env} | ${row.default === 'required' || row.default === 'empty' ? row.default : `\`${row.default}\``} | ${row.doc}${row.values ? ` (${row.values.filter((v) => v !== '').join(', ')})` : ''} |`,
    ),
  ].join('\n');
