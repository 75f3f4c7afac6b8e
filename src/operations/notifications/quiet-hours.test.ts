import { describe, expect, it } from 'vitest';
import { quietUntil } from './quiet-hours.js';
import { isPrivateAddress } from './targets.js';

describe('quiet hours', () => {
  const night = { from: '22:00', to: '07:00' };

  it.each([
    ['2026-11-29T23:30:00Z', null, '2026-11-30T07:00:00.000Z'],
    ['2026-11-29T03:15:00Z', null, '2026-11-29T07:00:00.000Z'],
    ['2026-11-29T12:00:00Z', null, null],
    ['2026-11-29T07:00:00Z', null, null],
    // 22:30 in Berlin (UTC+1 in November) is 21:30 UTC; the quiet hours end at 07:00 Berlin, 06:00 UTC.
    ['2026-11-29T21:30:00Z', 'Europe/Berlin', '2026-11-30T06:00:00.000Z'],
    ['2026-11-29T21:30:00Z', 'America/New_York', null],
    ['2026-11-29T23:30:00Z', 'Not/A_Zone', '2026-11-30T07:00:00.000Z'],
  ])('at %s in %s they end at %s', (at, zone, end) => {
    expect(quietUntil(new Date(at), night, zone)?.toISOString() ?? null).toBe(end);
  });

  it('spans no time when from and to are equal, and a day span within one day', () => {
    expect(quietUntil(new Date('2026-11-29T10:00:00Z'), { from: '08:00', to: '08:00' }, null)).toBeNull();
    expect(quietUntil(new Date('2026-11-29T10:00:00Z'), { from: '09:00', to: '17:30' }, null)?.toISOString()).toBe(
      '2026-11-29T17:30:00.000Z',
    );
  });
});

describe('private addresses', () => {
  it.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.20.0.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    // As the URL parser writes [::ffff:10.0.0.1].
    ['::ffff:a00:1', true],
    ['::ffff:8.8.8.8', false],
    ['fd00::1', true],
    ['::a00:1', true],
    ['::127.0.0.1', true],
    ['2002:7f00:1::1', true],
    ['fec0::1', true],
    ['2001:db8::1', true],
    ['1.1.1.1', false],
    ['fe80::1', true],
    ['8.8.8.8', false],
    ['2a00:1450:4001:80b::200e', false],
    ['not an address', true],
  ])('%s is private: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });
});
