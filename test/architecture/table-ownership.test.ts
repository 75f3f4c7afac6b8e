import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Each table has one owning module, named by an `Owner:` comment in src/platform/db/schema. Only the
 * owner writes it. Other modules read it through the owner's service, with one exception: a module may
 * join a table of another module of the same context when it is listed in READ_JOINS with its reason
 * (a list page or a hot lookup that would otherwise need a query per row). Across contexts, never.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SCHEMA_DIR = join(ROOT, 'src', 'platform', 'db', 'schema');
const WRITE_CALL = /\.(?:insertInto|updateTable|deleteFrom|mergeInto)\(\s*'([a-z_]+)/g;
const READ_CALL =
  /\.(?:selectFrom|innerJoin|leftJoin|rightJoin|fullJoin|innerJoinLateral|leftJoinLateral|using)\(\s*'([a-z_]+)/g;
/** A common table expression a file names (`.with('x', …)`, or `cte('x')` in `.with((cte) => cte('x')…)`): read from it, no table is. */
const CTE_NAME = /(?:\.with|\bcte)\(\s*'([a-z_]+)/g;
const ctesOf = (text: string) => new Set([...text.matchAll(CTE_NAME)].map(([, name]) => name));

/** `<module folder> reads <table>`: the joins across modules of one context, each with its reason. */
const READ_JOINS: Record<string, string> = {
  'src/identity/sessions reads users':
    'the credential lookup leaves out sessions of deleted users in one indexed join (hot path)',
  'src/identity/api-keys reads users':
    'the credential lookup leaves out keys of deleted owners in one indexed join (hot path)',
  'src/identity/access reads users': 'the last-super-admin lock counts only users that are not deleted',
  'src/identity/users reads platforms': 'the flat user shape names the platform of its account',
  'src/identity/users reads user_roles': 'GET /v1/users filters by role_id in the same page query',
};

/** table → owner folder (e.g. users → src/identity/users), from the Owner comments of the schema files. */
export function tableOwners(): Map<string, string> {
  const owners = new Map<string, string>();
  for (const file of readdirSync(SCHEMA_DIR)) {
    let owner: string | undefined;
    for (const line of readFileSync(join(SCHEMA_DIR, file), 'utf8').split('\n')) {
      const ownerComment = /\/\*\* Owner: ([a-z-]+\/[a-z-]+)/.exec(line);
      if (ownerComment) owner = `src/${ownerComment[1]}`;
      const table = /^ {2}([a-z_]+): /.exec(line);
      if (table && owner) owners.set(table[1]!, owner);
      if (line.startsWith('}')) owner = undefined;
    }
  }
  return owners;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('table ownership', () => {
  const owners = tableOwners();

  it('names an owner for every table of the schema', () => {
    expect(owners.size).toBeGreaterThanOrEqual(25);
    expect(owners.get('sessions')).toBe('src/identity/sessions');
    expect(owners.get('audit_events')).toBe('src/operations/audit');
  });

  const files = sourceFiles(join(ROOT, 'src')).map((file) => ({
    path: relative(ROOT, file),
    text: readFileSync(file, 'utf8'),
  }));
  const moduleOf = (path: string) => /^src\/[a-z-]+\/[a-z-]+/.exec(path)?.[0] ?? path;
  const ownedBy = (path: string, owner: string) => path.startsWith(`${owner}/`) || path === `${owner}.ts`;

  it('lets only the owning module write a table', () => {
    const strays = files.flatMap(({ path, text }) =>
      [...text.matchAll(WRITE_CALL)].flatMap(([, table]) => {
        const owner = owners.get(table!);
        if (!owner) return [`${path}: ${table} has no owner`];
        return ownedBy(path, owner) ? [] : [`${path} writes ${table} (owned by ${owner})`];
      }),
    );
    expect(strays).toEqual([]);
  });

  it('lets other modules read a table only through a listed join within their context', () => {
    const strays = files.flatMap(({ path, text }) =>
      [...text.matchAll(READ_CALL)].flatMap(([, table]) => {
        const owner = owners.get(table!);
        if (!owner && ctesOf(text).has(table)) return [];
        if (!owner) return [`${path}: ${table} has no owner`];
        if (ownedBy(path, owner)) return [];
        const read = `${moduleOf(path)} reads ${table}`;
        const sameContext = owner.split('/')[1] === path.split('/')[1];
        return sameContext && READ_JOINS[read] ? [] : [read];
      }),
    );
    expect([...new Set(strays)]).toEqual([]);
  });

  it('lists no join that the code no longer makes', () => {
    const made = new Set(
      files.flatMap(({ path, text }) =>
        [...text.matchAll(READ_CALL)].map(([, table]) => `${moduleOf(path)} reads ${table}`),
      ),
    );
    expect(Object.keys(READ_JOINS).filter((listed) => !made.has(listed))).toEqual([]);
  });
});
