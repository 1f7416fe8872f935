/**
 * The project owns its documents (docs/README.md): every Markdown document a source comment
 * names (src/, scripts/, test/, bench/, helm/; also as a forge link into this repository) is in the repository, and a section it names in
 * quotes (`docs/design.md "One clock"`) is a heading of that document. The README's links into
 * docs/ and the links between the documents resolve, anchors included. The settings table of
 * docs/contract.md lists every key of the schema with its environment variable and default.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative } from 'node:path';
import { settingsTable } from '../../../src/config/settings-table';

const root = join(__dirname, '../../..');
const SCANNED = ['src', 'scripts', 'test', 'bench', 'helm'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage', '.services', 'results']);
const SOURCE_EXTENSIONS = new Set(['.ts', '.js', '.mjs', '.cjs', '.lua', '.sh', '.yaml', '.yml', '.tpl', '.txt']);

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return SKIPPED_DIRS.has(name) ? [] : filesUnder(path);
    return SOURCE_EXTENSIONS.has(extname(name)) ? [path] : [];
  });

/** A document named in source: an optional folder path, then a Markdown file name. */
const DOC_REFERENCE = /(?:[\w.-]+\/)*[A-Za-z-]+\.md\b/g;
/** The same, followed on its line by a section name in double quotes. */
const SECTION_REFERENCE = /((?:[\w.-]+\/)*[A-Za-z-]+\.md)\s+"([^"\n]+)"/g;

/** Where a reference may point: from the repository root, from the file's folder, or into docs/. */
const resolveDoc = (reference: string, from: string): string | undefined =>
  [join(root, reference), join(dirname(from), reference), join(root, 'docs', reference)].find((path) => existsSync(path));

const headingsOf = (markdown: string): string[] =>
  markdown
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => line.replace(/^#{1,6} +/, '').trim());

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slugOf = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

const sourceFiles = SCANNED.flatMap((dir) => filesUnder(join(root, dir)));

const WEB_LINK = /\bhttps?:\/\/[^\s'"`)<>]+/g;
/** A link to a document of this repository on its forge: `…/sluice/blob/<branch>/<path>#anchor` (other repositories' links are not checked). */
const BLOB_PATH = /\/sluice\/blob\/[^/]+\/((?:[\w.-]+\/)*[A-Za-z-]+\.md)\b/;

/** The documents one line names: repository paths inside forge links, then names outside any URL. */
const documentsIn = (line: string): string[] => {
  const inLinks = [...line.matchAll(WEB_LINK)].flatMap((url) => BLOB_PATH.exec(url[0])?.slice(1, 2) ?? []);
  const outside = [...line.replace(WEB_LINK, ' ').matchAll(DOC_REFERENCE)].map((match) => match[0]);
  return [...inLinks, ...outside];
};

const lines = sourceFiles.flatMap((file) => readFileSync(file, 'utf8').split('\n').map((text, index) => ({ file, line: index + 1, text })));

const references = lines.flatMap(({ file, line, text }) => documentsIn(text).map((reference) => ({ file, line, reference })));

const sectionReferences = lines.flatMap(({ file, line, text }) =>
  [...text.replace(WEB_LINK, ' ').matchAll(SECTION_REFERENCE)].map((match) => ({ file, line, reference: match[1], section: match[2] })),
);

const where = (ref: { file: string; line: number }): string => `${relative(root, ref.file)}:${ref.line}`;

/** `[text](target)` links of a Markdown document, fenced code left out. */
const linksOf = (markdown: string): string[] => {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]);
};

/** Broken local links of one document: a missing file, or an anchor no heading has. */
const brokenLinks = (documentPath: string, keep: (target: string) => boolean): string[] =>
  linksOf(readFileSync(documentPath, 'utf8'))
    .filter((target) => !/^[a-z]+:/i.test(target) && keep(target))
    .flatMap((target) => {
      const [file, anchor] = target.split('#');
      const path = file === '' ? documentPath : join(dirname(documentPath), file);
      if (!existsSync(path)) return [`${relative(root, documentPath)} → ${target}: no such file`];
      if (anchor === undefined || !path.endsWith('.md')) return [];
      const anchors = headingsOf(readFileSync(path, 'utf8')).map(slugOf);
      return anchors.includes(anchor) ? [] : [`${relative(root, documentPath)} → ${target}: no such heading`];
    });

describe('documents named in source comments', () => {
  it('are found by the scan (it reads the places it should)', () => {
    expect(sourceFiles.length).toBeGreaterThan(100);
    expect(references.some((ref) => relative(root, ref.file) === 'src/decide/store-clock.ts' && ref.reference === 'docs/design.md')).toBe(true);
    expect(sectionReferences.length).toBeGreaterThan(5);
  });

  it('are all in the repository', () => {
    const missing = references.filter((ref) => resolveDoc(ref.reference, ref.file) === undefined).map((ref) => `${where(ref)}: ${ref.reference}`);
    expect(missing).toEqual([]);
  });

  it('have the sections they name in quotes', () => {
    const missing = sectionReferences.flatMap((ref) => {
      const path = resolveDoc(ref.reference, ref.file);
      if (path === undefined) return []; // reported by the test above
      const headings = headingsOf(readFileSync(path, 'utf8')).map((heading) => heading.toLowerCase());
      const section = ref.section.toLowerCase();
      return headings.some((heading) => heading.startsWith(section)) ? [] : [`${where(ref)}: ${ref.reference} has no section "${ref.section}"`];
    });
    expect(missing).toEqual([]);
  });
});

describe('links between the documents', () => {
  it("resolve from the README into docs/ (files and anchors)", () => {
    expect(brokenLinks(join(root, 'README.md'), (target) => target.startsWith('docs/'))).toEqual([]);
  });

  it('resolve from every document in docs/', () => {
    const documents = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'));
    expect(documents).toEqual(expect.arrayContaining(['README.md', 'contract.md', 'design.md', 'kafkajs.md']));
    expect(documents.flatMap((name) => brokenLinks(join(root, 'docs', name), () => true))).toEqual([]);
  });
});

describe("docs/contract.md's settings table", () => {
  const cells = (line: string): string[] =>
    line
      .trim()
      .replace(/^\||\|$/g, '')
      .split('|')
      .map((cell) => cell.trim().replace(/`/g, ''));

  const contractRows = (): Map<string, { env: string; shown: string }> => {
    const rows = new Map<string, { env: string; shown: string }>();
    const lines = readFileSync(join(root, 'docs/contract.md'), 'utf8').split('\n');
    const start = lines.findIndex((line) => /^\| *key *\| *environment variable *\| *default *\|/.test(line));
    for (let i = start + 2; start >= 0 && i < lines.length && lines[i].startsWith('|'); i += 1) {
      const [key, env, shown] = cells(lines[i]);
      rows.set(key, { env, shown });
    }
    return rows;
  };

  it('lists every settings key with its environment variable and default', () => {
    const rows = contractRows();
    const wrong = settingsTable()
      .filter((setting) => {
        const row = rows.get(setting.key);
        if (row === undefined || row.env !== setting.env) return true;
        return !(row.shown === setting.default || row.shown.startsWith(`${setting.default} `));
      })
      .map((setting) => `${setting.key} (${setting.env}, default ${setting.default})`);
    expect(wrong).toEqual([]);
  });
});
