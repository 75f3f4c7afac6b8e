import { readFile } from 'node:fs/promises';
import { Reader, type CityResponse } from 'maxmind';

/** Where an address is, in English names; fields the database does not know are left out. */
export interface IpLocation {
  country_code?: string;
  country_name?: string;
  city?: string;
  region?: string;
}

export type Locate = (ip: string) => IpLocation | undefined;

/**
 * Opens a MaxMind-format city database (GeoLite2-City, GeoIP2-City, or any .mmdb of that shape) with the
 * `maxmind` reader. The file is read once into memory; a lookup is a walk of its tree, no I/O. Addresses
 * the database does not cover (private ranges, loopback) have no location.
 */
export async function openGeoIp(path: string): Promise<Locate> {
  const reader = new Reader<CityResponse>(await readFile(path));
  return (ip) => {
    let found: CityResponse | null;
    try {
      found = reader.get(ip.startsWith('::ffff:') ? ip.slice(7) : ip);
    } catch {
      return undefined; // not an IP address (a proxy may forward anything)
    }
    if (!found) return undefined;
    const location: IpLocation = {
      country_code: found.country?.iso_code,
      country_name: found.country?.names?.en,
      city: found.city?.names?.en,
      region: found.subdivisions?.[0]?.names?.en,
    };
    for (const key of Object.keys(location) as (keyof IpLocation)[])
      if (location[key] === undefined) delete location[key];
    return Object.keys(location).length ? location : undefined;
  };
}
