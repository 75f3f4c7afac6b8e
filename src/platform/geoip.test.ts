import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BERLIN, geoIpFile } from '../../test/fakes/mmdb.js';
import { openGeoIp } from './geoip.js';

describe('GeoIP lookups', () => {
  it('names country, region and city of a covered address, and nothing for others', async () => {
    const locate = await openGeoIp(
      geoIpFile({
        '203.0.113.0/24': BERLIN,
        '198.51.100.0/25': { country: { iso_code: 'NL', names: { en: 'Netherlands' } } },
      }),
    );
    expect(locate('203.0.113.7')).toEqual({
      country_code: 'DE',
      country_name: 'Germany',
      city: 'Berlin',
      region: 'Land Berlin',
    });
    expect(locate('::ffff:203.0.113.250')).toEqual({
      country_code: 'DE',
      country_name: 'Germany',
      city: 'Berlin',
      region: 'Land Berlin',
    });
    expect(locate('198.51.100.5')).toEqual({ country_code: 'NL', country_name: 'Netherlands' });
    expect(locate('198.51.100.200')).toBeUndefined();
    expect(locate('127.0.0.1')).toBeUndefined();
    expect(locate('not an address')).toBeUndefined();
  });

  it('refuses a file that is not a MaxMind database at start-up', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'waygate-geoip-')), 'broken.mmdb');
    writeFileSync(path, 'not a database');
    await expect(openGeoIp(path)).rejects.toThrow();
  });
});
