import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { loadConsoleAssets } from './assets.js';
import { consoleCsp, tileSource } from './routes.js';

describe('console settings and policy', () => {
  it('MAP_TILE_URL defaults to OpenStreetMap and must be an http(s) template with {z}, {x} and {y}', () => {
    expect(loadConfig({}).console).toEqual({
      enabled: true,
      tileUrl: 'https://tile.openstreetmap.org/{z}/{x}/{y}.png',
      tileAttribution: '© OpenStreetMap contributors',
      staleAfterSecs: 600,
    });
    expect(loadConfig({ MAP_TILE_URL: 'https://{s}.tiles.example.org/{z}/{x}/{y}.png' }).console.tileUrl).toBe(
      'https://{s}.tiles.example.org/{z}/{x}/{y}.png',
    );
    expect(() => loadConfig({ MAP_TILE_URL: 'https://tiles.example.org/{z}/{x}.png' })).toThrow(/MAP_TILE_URL/);
    expect(() => loadConfig({ MAP_TILE_URL: 'ftp://tiles.example.org/{z}/{x}/{y}.png' })).toThrow(/MAP_TILE_URL/);
    expect(() => loadConfig({ CONSOLE_STALE_AFTER_SECS: '1' })).toThrow(/CONSOLE_STALE_AFTER_SECS/);
  });

  it("the CSP allows the tile server's origin for images, Turnstile only with bot protection, and nothing inline", () => {
    expect(tileSource('https://{s}.tiles.example.org/{z}/{x}/{y}.png')).toBe('https://*.tiles.example.org');
    expect(tileSource('http://127.0.0.1:8081/{z}/{x}/{y}.png')).toBe('http://127.0.0.1:8081');
    const csp = consoleCsp('https://tile.openstreetmap.org/{z}/{x}/{y}.png');
    expect(csp).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob: https://tile.openstreetmap.org; connect-src 'self'; " +
        "font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    // With bot protection on: Turnstile's script and frame, from Cloudflare only.
    expect(consoleCsp('https://tile.openstreetmap.org/{z}/{x}/{y}.png', true)).toBe(
      "default-src 'none'; script-src 'self' https://challenges.cloudflare.com; style-src 'self'; img-src 'self' data: blob: https://tile.openstreetmap.org; " +
        "connect-src 'self'; font-src 'self'; manifest-src 'self'; frame-src https://challenges.cloudflare.com; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
  });

  it('names the assets by one hash over every file, Leaflet included', () => {
    const assets = loadConsoleAssets();
    expect(assets.version).toMatch(/^[0-9a-f]{12}$/);
    expect([...assets.files.keys()]).toEqual(
      expect.arrayContaining([
        'js/app.js',
        'console.css',
        'i18n/de.json',
        'vendor/leaflet/leaflet-src.esm.js',
        'vendor/leaflet/leaflet.css',
      ]),
    );
    expect(assets.index).toContain('{{ASSETS}}/js/app.js');
    expect(loadConsoleAssets().version).toBe(assets.version);
  });
});
