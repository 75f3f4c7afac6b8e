import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The HTTP tests send requests with the one typed helper of test/client.ts (`t.as(token).get(...)`), not with a
 * request helper of their own. A local helper is a named function (or a const holding one) whose body calls
 * `.inject(`. The files below (or folders, ending in '/') still have one; the list shrinks as they are converted.
 * A file not listed fails with its helpers named, and a listed entry with none left fails until it is taken off
 * the list. (An ESLint rule will take this over.)
 */
const NOT_YET_CONVERTED: string[] = [];

const ROOT = join(import.meta.dirname, '..', '..');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

/** The names of the file's functions (declared, or held by a const) whose own body calls `.inject(`. */
export function localInjectHelpers(source: string): string[] {
  const file = ts.createSourceFile('test.ts', source, ts.ScriptTarget.Latest, true);
  const found = new Set<string>();
  const visit = (node: ts.Node, named: string | undefined) => {
    let inside = named;
    if (ts.isFunctionDeclaration(node) && node.name) inside = node.name.text;
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer))
    ) {
      inside = node.name.text;
    }
    if (
      inside &&
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'inject'
    )
      found.add(inside);
    ts.forEachChild(node, (child) => visit(child, inside));
  };
  visit(file, undefined);
  return [...found];
}

describe('request helpers in tests', () => {
  const files = [...testFiles(join(ROOT, 'src')), ...testFiles(join(ROOT, 'test'))].sort();
  const helpers = new Map(files.map((file) => [file, localInjectHelpers(readFileSync(join(ROOT, file), 'utf8'))]));

  it('finds a local helper wherever a function or a const holding one calls .inject(', () => {
    const source = [
      'const call = (url: string) => t.app.inject({ url });',
      'async function post(url: string) { return (await app.inject({ method: "POST", url })).json(); }',
      'const viaTheClient = () => t.as(admin).get("/v1/trips");',
      'it("inline", () => Promise.all([1, 2].map(() => t.app.inject({ url: "/v1" }))));',
    ].join('\n');
    expect(localInjectHelpers(source)).toEqual(['call', 'post']);
  });

  it('are defined only by files not yet converted to test/client.ts', () => {
    const listed = (file: string) =>
      NOT_YET_CONVERTED.some((entry) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry));
    const offending = files.filter((file) => helpers.get(file)!.length > 0 && !listed(file));
    expect(offending.map((file) => `${file}: ${helpers.get(file)!.join(', ')}`)).toEqual([]);
  });

  it('lists only files that still have one (take a converted file off the list)', () => {
    const stillHasOne = (entry: string) =>
      files.some(
        (file) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry) && helpers.get(file)!.length > 0,
      );
    expect(NOT_YET_CONVERTED.filter((entry) => !stillHasOne(entry))).toEqual([]);
  });
});
