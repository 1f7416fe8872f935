/**
 * Every settings key (src/config/schema.ts) is documented in the README's configuration table
 * and can be set through the Helm chart (values.yaml, values.schema.json, the env-name map).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { settingsMarkdown, settingsTable } from '../../../src/config';

const root = join(__dirname, '../../..');
const chart = join(root, 'helm/sluice');
const settings = settingsTable();
const keys = settings.map((row) => row.key).sort();

const cells = (line: string): string[] =>
  line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((cell) => cell.trim().replace(/^`|`$/g, ''));

/** rows of the README table whose header reads `| key | env… | default | … |`. */
const readmeSettingsRows = (markdown: string): Map<string, string> => {
  const rows = new Map<string, string>();
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const header = cells(lines[i]);
    if (!lines[i].trim().startsWith('|') || header[0]?.toLowerCase() !== 'key' || !/^env/i.test(header[1] ?? '') || !/^default/i.test(header[2] ?? '')) continue;
    for (let j = i + 2; j < lines.length && lines[j].trim().startsWith('|'); j += 1) {
      const [key, env] = cells(lines[j]);
      rows.set(key, env);
    }
  }
  return rows;
};

/** dotted keys of a nested values tree; a {secretName, secretKey} reference counts as a leaf. */
const leafKeys = (node: Record<string, unknown>, prefix = ''): string[] =>
  Object.entries(node).flatMap(([name, value]) =>
    value !== null && typeof value === 'object' && !Array.isArray(value) && !('secretName' in value)
      ? leafKeys(value as Record<string, unknown>, `${prefix}${name}.`)
      : [prefix + name],
  );

const schemaKeys = (node: { properties?: Record<string, { properties?: unknown; $ref?: string }> }, prefix = ''): string[] =>
  Object.entries(node.properties ?? {}).flatMap(([name, child]) =>
    child.properties ? schemaKeys(child as never, `${prefix}${name}.`) : [prefix + name],
  );

describe('settings in sync', () => {
  describe("the README's configuration table", () => {
    it('is read in the format settingsMarkdown() writes', () => {
      const rows = readmeSettingsRows(`# Configuration\n\n${settingsMarkdown()}\n\nMore text.\n`);
      expect([...rows.keys()].sort()).toEqual(keys);
    });

    it('lists every settings key with its environment variable', () => {
      const rows = readmeSettingsRows(readFileSync(join(root, 'README.md'), 'utf8'));
      const missing = settings.filter((row) => rows.get(row.key) !== row.env).map((row) => `${row.key} (${row.env})`);
      expect(missing).toEqual([]);
    });

    it('lists no key that the schema does not have', () => {
      const rows = readmeSettingsRows(readFileSync(join(root, 'README.md'), 'utf8'));
      expect([...rows.keys()].filter((key) => !keys.includes(key))).toEqual([]);
    });
  });

  describe("the Helm chart's values", () => {
    it('has every settings key under config, and nothing else', () => {
      const values = parse(readFileSync(join(chart, 'values.yaml'), 'utf8')) as { config: Record<string, unknown> };
      expect(leafKeys(values.config).sort()).toEqual(keys);
    });

    it('validates every settings key in values.schema.json, and nothing else', () => {
      const schema = JSON.parse(readFileSync(join(chart, 'values.schema.json'), 'utf8'));
      expect(schemaKeys(schema.properties.config).sort()).toEqual(keys);
    });

    it('maps every settings key to its environment variable in the templates', () => {
      const helpers = readFileSync(join(chart, 'templates/_helpers.tpl'), 'utf8');
      const mapped = [...helpers.matchAll(/set \$names "([^"]+)" "([^"]+)"/g)].map(([, key, env]) => `${key}=${env}`).sort();
      expect(mapped).toEqual(settings.map((row) => `${row.key}=${row.env}`).sort());
    });

    it('takes exactly the sensitive settings from Secrets', () => {
      const values = parse(readFileSync(join(chart, 'values.yaml'), 'utf8')) as { config: Record<string, unknown> };
      const secretRefs = leafKeys(values.config).filter((key) => {
        const value = key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], values.config);
        return typeof value === 'object' && value !== null;
      });
      expect(secretRefs.sort()).toEqual(settings.filter((row) => row.sensitive).map((row) => row.key).sort());
    });
  });
});
