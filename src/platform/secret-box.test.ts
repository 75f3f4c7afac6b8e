import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSecretBox } from './secret-box.js';

describe('secret box', () => {
  it('round-trips and never stores the plaintext', () => {
    const box = createSecretBox('a configured secret key', '/nonexistent');
    const sealed = box.seal('JBSWY3DPEHPK3PXP');
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    expect(box.seal('JBSWY3DPEHPK3PXP')).not.toBe(sealed);
    expect(box.open(sealed)).toBe('JBSWY3DPEHPK3PXP');
  });

  it('refuses an altered value and a value sealed with another key', () => {
    const box = createSecretBox('key one', '/nonexistent');
    const sealed = box.seal('secret');
    const [v, iv, tag, data] = sealed.split('.');
    const flipped = Buffer.from(data!, 'base64url');
    flipped[0]! ^= 1;
    expect(() => box.open([v, iv, tag, flipped.toString('base64url')].join('.'))).toThrow();
    expect(() => createSecretBox('key two', '/nonexistent').open(sealed)).toThrow();
    // A truncated authentication tag is refused, not checked against fewer bytes.
    expect(() =>
      box.open([v, iv, Buffer.from(tag!, 'base64url').subarray(0, 4).toString('base64url'), data].join('.')),
    ).toThrow('not a sealed secret');
  });

  it('generates a key file once under DATA_DIR and reuses it', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'waygate-box-'));
    const sealed = createSecretBox(undefined, dataDir).seal('kept');
    expect(Buffer.from(readFileSync(join(dataDir, 'secret.key'), 'utf8'), 'base64')).toHaveLength(32);
    expect(createSecretBox(undefined, dataDir).open(sealed)).toBe('kept');
  });
});
