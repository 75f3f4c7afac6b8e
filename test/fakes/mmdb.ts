import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A MaxMind DB (.mmdb, format 2.0) writer for tests: IPv4 networks with their records, 24-bit records.
 * No writer library is published on npm (MaxMind's writers are Perl and Go), and the fixture must be
 * built on a clean checkout, so this follows the MaxMind DB File Format Specification 2.0 directly.
 * The service reads the file with the `maxmind` reader, which validates it.
 */

type Value = string | number | boolean | Value[] | { [key: string]: Value };

/** Control byte(s) of a field: type (extended types after a 0 type) and size (with the 29/30/31 escapes). */
function control(type: number, size: number): Buffer {
  const head: number[] = [];
  let sizeBits = size;
  const extra: number[] = [];
  if (size >= 65_821)
    [sizeBits, extra[0], extra[1], extra[2]] = [
      31,
      ((size - 65_821) >> 16) & 255,
      ((size - 65_821) >> 8) & 255,
      (size - 65_821) & 255,
    ];
  else if (size >= 285) [sizeBits, extra[0], extra[1]] = [30, ((size - 285) >> 8) & 255, (size - 285) & 255];
  else if (size >= 29) [sizeBits, extra[0]] = [29, size - 29];
  if (type <= 7) head.push((type << 5) | sizeBits);
  else head.push(sizeBits, type - 7);
  return Buffer.from([...head, ...extra]);
}

function unsigned(type: number, value: number | bigint): Buffer {
  let hex = BigInt(value).toString(16);
  if (hex === '0') hex = '';
  if (hex.length % 2) hex = `0${hex}`;
  const bytes = Buffer.from(hex, 'hex');
  return Buffer.concat([control(type, bytes.length), bytes]);
}

function encode(value: Value): Buffer {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([control(2, bytes.length), bytes]);
  }
  if (typeof value === 'boolean') return control(14, value ? 1 : 0);
  if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= 0) return unsigned(value < 2 ** 32 ? 6 : 9, value);
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleBE(value);
    return Buffer.concat([control(3, 8), bytes]);
  }
  if (Array.isArray(value)) return Buffer.concat([control(11, value.length), ...value.map(encode)]);
  const entries = Object.entries(value);
  return Buffer.concat([
    control(7, entries.length),
    ...entries.flatMap(([key, inner]) => [encode(key), encode(inner)]),
  ]);
}

interface TreeNode {
  children: [TreeNode | number | null, TreeNode | number | null];
}

/** The .mmdb bytes of these IPv4 networks (CIDR) and their records. */
export function buildMmdb(networks: Record<string, Value>, databaseType = 'GeoIP2-City'): Buffer {
  const root: TreeNode = { children: [null, null] };
  const records: Buffer[] = [];
  const offsets: number[] = [];
  let dataSize = 0;
  for (const [cidr, record] of Object.entries(networks)) {
    const [address, prefix] = cidr.split('/') as [string, string];
    const bits = address.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);
    const encoded = encode(record);
    offsets.push(dataSize);
    records.push(encoded);
    dataSize += encoded.length;
    let node = root;
    for (let depth = 0; depth < Number(prefix); depth++) {
      const bit = Number((bits >> BigInt(31 - depth)) & 1n);
      if (depth === Number(prefix) - 1)
        node.children[bit] = -records.length; // a data record, resolved below
      else {
        const next = node.children[bit];
        if (typeof next === 'object' && next !== null) node = next;
        else node = node.children[bit] = { children: [null, null] };
      }
    }
  }

  const nodes: TreeNode[] = [];
  const number = new Map<TreeNode, number>();
  const visit = (node: TreeNode) => {
    number.set(node, nodes.push(node) - 1);
    for (const child of node.children) if (typeof child === 'object' && child !== null) visit(child);
  };
  visit(root);
  const nodeCount = nodes.length;
  const recordValue = (child: TreeNode | number | null) => {
    if (child === null) return nodeCount; // no data
    if (typeof child === 'number') return nodeCount + 16 + offsets[-child - 1]!;
    return number.get(child)!;
  };
  const tree = Buffer.alloc(nodeCount * 6);
  nodes.forEach((node, index) => {
    tree.writeUIntBE(recordValue(node.children[0]), index * 6, 3);
    tree.writeUIntBE(recordValue(node.children[1]), index * 6 + 3, 3);
  });

  const metadata = Buffer.concat([
    control(7, 9),
    encode('node_count'),
    unsigned(6, nodeCount),
    encode('record_size'),
    unsigned(5, 24),
    encode('ip_version'),
    unsigned(5, 4),
    encode('database_type'),
    encode(databaseType),
    encode('languages'),
    encode(['en']),
    encode('binary_format_major_version'),
    unsigned(5, 2),
    encode('binary_format_minor_version'),
    unsigned(5, 0),
    encode('build_epoch'),
    unsigned(9, 1_764_000_000),
    encode('description'),
    encode({ en: 'Waygate test database' }),
  ]);
  return Buffer.concat([
    tree,
    Buffer.alloc(16),
    ...records,
    Buffer.from('ABCDEF4D61784D696E642E636F6D', 'hex'),
    metadata,
  ]);
}

export const BERLIN = {
  country: { iso_code: 'DE', names: { en: 'Germany', de: 'Deutschland' } },
  city: { names: { en: 'Berlin' } },
  subdivisions: [{ iso_code: 'BE', names: { en: 'Land Berlin' } }],
};

/** A city database file of these networks, as GEOIP_DB would name it. */
export function geoIpFile(networks: Record<string, Value>): string {
  const path = join(mkdtempSync(join(tmpdir(), 'waygate-geoip-')), 'city.mmdb');
  writeFileSync(path, buildMmdb(networks));
  return path;
}
