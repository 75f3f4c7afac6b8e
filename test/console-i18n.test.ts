import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The console's texts (console/i18n/*.json): every locale holds the same keys, and every key the console's code
 * names exists. A key is named as a string literal ('history.title', whether in t('…') or in a list of labels
 * passed to t later) or as a template t(`status.${trip.status}`), whose values are listed here.
 */
const ROOT = join(import.meta.dirname, '..', 'console');
const locale = (name: string) =>
  JSON.parse(readFileSync(join(ROOT, 'i18n', `${name}.json`), 'utf8')) as Record<string, string>;
const en = locale('en');
const de = locale('de');
const CODE = readdirSync(join(ROOT, 'js'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.js'))
  .map((file) => ({ file, text: readFileSync(join(ROOT, 'js', file), 'utf8') }));

/** The values a template key takes: the API's enums the console shows in words. */
const DYNAMIC: Record<string, string[]> = {
  'status.': ['draft', 'active', 'paused', 'completed'], // a trip's status
  'import.': ['running', 'done', 'failed'], // a GPS import's status
  'clients.': ['confidential', 'public'], // an OAuth client's type
  'report.': ['pending', 'reviewed', 'resolved', 'dismissed'], // a reported event's status
  'reason.': ['not_me', 'suspicious', 'unknown_device', 'unknown_location', 'other'], // why an event was reported
  'notices.': ['new_sign_in', 'new_api_key'], // the security mails a user may turn off
  'imports.': ['running', 'done', 'failed'], // a past import's status, in its list
  'unit.': ['kmh', 'mph', 'knots', 'km', 'mi', 'nmi'], // the units of a user's preferences
  'compass.': ['N', 'S', 'E', 'W'], // the hemisphere of a coordinate in degrees and minutes
};

/** Where each match of `pattern` (its first group) occurs in the console's code, as "file: match". */
function occurrences(pattern: RegExp): { file: string; match: string }[] {
  return CODE.flatMap(({ file, text }) => [...text.matchAll(pattern)].map((m) => ({ file, match: m[1]! })));
}

describe("the console's texts", () => {
  it('English and German hold the same keys, none of them empty', () => {
    expect(Object.keys(de).sort()).toEqual(Object.keys(en).sort());
    expect(Object.entries({ ...en, ...de }).filter(([, text]) => !text.trim())).toEqual([]);
  });

  it('every key the code names is in English (and so in German)', () => {
    // Namespaces are what comes before the first dot of a key; a literal in one of them, shaped like a key, is a key.
    const namespaces = new Set(
      Object.keys(en)
        .filter((key) => key.includes('.'))
        .map((key) => key.split('.')[0]),
    );
    const literals = occurrences(/'([a-z][A-Za-z]*(?:\.[A-Za-z0-9_]+)+)'/g).filter(({ match }) =>
      namespaces.has(match.split('.')[0]!),
    );
    const plain = occurrences(/\bt\('([^'.]+)'/g);
    expect(literals.length).toBeGreaterThan(300);
    expect(
      [...literals, ...plain].filter(({ match }) => !(match in en)).map(({ file, match }) => `${file}: ${match}`),
    ).toEqual([]);
  });

  it('every template key is one of the listed ones, each of whose values is a key', () => {
    const templates = occurrences(/\bt\(`([^`$]*)\$\{/g);
    expect(templates.length).toBeGreaterThan(0);
    expect(
      templates.filter(({ match }) => !(match in DYNAMIC)).map(({ file, match }) => `${file}: t(\`${match}\${…}\`)`),
    ).toEqual([]);
    const missing = Object.entries(DYNAMIC)
      .flatMap(([prefix, values]) => values.map((value) => `${prefix}${value}`))
      .filter((key) => !(key in en));
    expect(missing).toEqual([]);
  });
});
