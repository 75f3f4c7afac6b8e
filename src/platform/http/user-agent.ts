import UAParser from 'ua-parser-js';

export interface ParsedUserAgent {
  browser: string | null;
  os: string | null;
  deviceType: 'desktop' | 'mobile' | 'tablet';
}

const CACHE_LIMIT = 1000;
const cache = new Map<string, ParsedUserAgent>();

/**
 * Browser, OS and device type of a User-Agent header. Parsing runs a few
 * hundred regular expressions and clients send the same few strings again and
 * again, so results are cached.
 */
export function parseUserAgent(userAgent: string): ParsedUserAgent {
  let parsed = cache.get(userAgent);
  if (!parsed) {
    const result = new UAParser(userAgent).getResult();
    const device = result.device.type;
    parsed = {
      browser: nameAndVersion(result.browser),
      os: nameAndVersion(result.os),
      deviceType: device === 'mobile' || device === 'tablet' ? device : 'desktop',
    };
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(userAgent, parsed);
  }
  return parsed;
}

function nameAndVersion(part: { name?: string; version?: string }): string | null {
  return part.name ? [part.name, part.version].filter(Boolean).join(' ') : null;
}
