/** YAML with positions: every node can say its line, so every error reads `file:line: reason`. */
import { isMap, isScalar, LineCounter, parseDocument, type Document, type Node, type Pair, type YAMLMap } from 'yaml';

export interface YamlSource {
  file: string;
  doc: Document.Parsed;
  lines: LineCounter;
}

/** Parses without refusing duplicate keys (the walkers report them with both lines). */
export const parseYaml = (text: string, file: string): { source: YamlSource; errors: string[] } => {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false });
  const errors = doc.errors.map((error) => `${file}:${lines.linePos(error.pos[0]).line}: ${error.message}`);
  return { source: { file, doc, lines }, errors };
};

/** The 1-based line of a node (1 when it has no position). */
export const lineOf = (source: YamlSource, node: unknown): number => {
  const range = (node as Node | null | undefined)?.range;
  return range ? source.lines.linePos(range[0]).line : 1;
};

export const at = (source: YamlSource, node: unknown, reason: string): string => `${source.file}:${lineOf(source, node)}: ${reason}`;

/** A key as written: numbers and booleans are read as the text the user typed ("007" stays "007"). */
export const keyText = (pair: Pair): string | undefined => {
  if (!isScalar(pair.key)) return undefined;
  return pair.key.source ?? String(pair.key.value);
};

export type MapNode = YAMLMap<unknown, unknown>;
export const asMap = (node: unknown): MapNode | undefined => (isMap(node) ? (node as MapNode) : undefined);

/** A value as plain data, for the fields the limiter compiles. */
export const toPlain = (source: YamlSource, node: unknown): unknown => {
  if (node === null || node === undefined) return null;
  const n = node as Node & { toJS?: (doc: Document) => unknown };
  return typeof n.toJS === 'function' ? n.toJS(source.doc) : node;
};
