import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';

const ROOT = join(import.meta.dirname, '..');
const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** Lines outside fenced code blocks: a `](…)` inside a shell example is not a link. */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (line.startsWith('```')) fenced = !fenced;
    return !fenced;
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, each space a hyphen, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(text)) {
    const heading = /^#{1,6} (.+)$/.exec(line)?.[1];
    if (!heading) continue;
    const base = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

function relativeLinks(text: string): string[] {
  const links = proseLines(text).flatMap((line) => [...line.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!));
  return links.filter((link) => !/^[a-z][a-z+.-]*:/i.test(link));
}

describe('README.md and docs/', () => {
  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of FILES) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const link of relativeLinks(text)) {
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path ? join(ROOT, dirname(file), path) : join(ROOT, file);
        if (!existsSync(target)) broken.push(`${file}: ${link} (no such file)`);
        else if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) {
          broken.push(`${file}: ${link} (no heading #${anchor} in ${relative(ROOT, target)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('lead from the README to every file in docs/', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const unlinked = FILES.filter((file) => file.startsWith('docs/') && !readme.includes(`](${file})`));
    expect(unlinked).toEqual([]);
  });

  it('call the service at one base, on its default port', () => {
    // Other local addresses the docs name on purpose: the default as a rule (any PORT), a browser app's dev
    // server as a CORS origin.
    const notTheService = new Set(['http://localhost:PORT', 'http://localhost:<PORT>', 'http://localhost:5173']);
    const base = `http://localhost:${loadConfig({}).port}`;
    const others = FILES.flatMap((file) =>
      [
        ...readFileSync(join(ROOT, file), 'utf8').matchAll(
          /https?:\/\/(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])(?::(?:\d+|PORT|<PORT>))?/g,
        ),
      ]
        .map((match) => match[0])
        .filter((url) => url !== base && !notTheService.has(url))
        .map((url) => `${file}: ${url}`),
    );
    expect(others).toEqual([]);
  });
});
