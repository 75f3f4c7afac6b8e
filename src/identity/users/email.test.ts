import { describe, expect, it } from 'vitest';
import { normaliseEmail } from './service.js';

describe('normaliseEmail', () => {
  it('trims and lower-cases an address with one @ and a dot inside the domain', () => {
    expect(normaliseEmail('  Ada@Example.ORG ')).toBe('ada@example.org');
    expect(normaliseEmail('a.b+tag@mail.example.co.uk')).toBe('a.b+tag@mail.example.co.uk');
  });

  it.each([
    'ada',
    '@example.org',
    'ada@',
    'ada@example',
    'ada@.org',
    'ada@example.',
    'a@b@example.org',
    'a da@example.org',
    `${'a'.repeat(310)}@example.org`,
  ])('refuses %s', (email) =>
    expect(() => normaliseEmail(email)).toThrow(expect.objectContaining({ code: 'user.invalid_email' })),
  );

  it('refuses a megabyte of dots at once (the pattern it replaced backtracked on it for seconds)', () => {
    const started = performance.now();
    expect(() => normaliseEmail(`a@${'.'.repeat(1024 * 1024)}@`)).toThrow(
      expect.objectContaining({ code: 'user.invalid_email' }),
    );
    expect(() => normaliseEmail(`a@${'.'.repeat(300)}@`)).toThrow(
      expect.objectContaining({ code: 'user.invalid_email' }),
    );
    expect(performance.now() - started).toBeLessThan(500);
  });
});
