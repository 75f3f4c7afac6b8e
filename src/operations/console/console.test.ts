import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
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

describe('the console as an app a phone installs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('links its favicon, Apple touch icon and web app manifest, and serves each with its content type', async () => {
    const api = t.as();
    const html = (await api.raw({ method: 'GET', url: '/console/' })).text;
    const linked = (rel: string) => new RegExp(`<link rel="${rel}" href="([^"]+)"`).exec(html)?.[1];
    const base = /src="(\/console\/assets\/[0-9a-f]{12})\/js\/app\.js"/.exec(html)![1]!;
    expect({ icon: linked('icon'), apple: linked('apple-touch-icon'), manifest: linked('manifest') }).toEqual({
      icon: `${base}/icons/favicon.svg`,
      apple: `${base}/icons/apple-touch-icon.png`,
      manifest: `${base}/manifest.webmanifest`,
    });
    const manifest = await api.raw({ method: 'GET', url: `${base}/manifest.webmanifest` });
    expect({ status: manifest.status, type: manifest.headers['content-type'] }).toEqual({
      status: 200,
      type: 'application/manifest+json',
    });
    const { icons, ...fields } = JSON.parse(manifest.text) as {
      icons: { src: string; sizes: string; type: string; purpose?: string }[];
    };
    expect(fields).toEqual({
      id: '/console/',
      name: 'Waygate',
      short_name: 'Waygate',
      description: expect.any(String),
      start_url: '/console/',
      scope: '/console/',
      display: 'standalone',
      theme_color: '#ffffff',
      background_color: '#f4f6f8',
    });
    // Every icon the manifest names (relative to it) is served as the type it claims, at the size it claims.
    const pngSize = (png: Buffer) => `${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`;
    for (const icon of [...icons, { src: 'icons/apple-touch-icon.png', sizes: '180x180', type: 'image/png' }]) {
      const file = await api.raw({ method: 'GET', url: `${base}/${icon.src}` });
      expect({ src: icon.src, status: file.status, type: file.headers['content-type'] }).toEqual({
        src: icon.src,
        status: 200,
        type: icon.type,
      });
      if (icon.type === 'image/png') expect(pngSize(file.bytes)).toBe(icon.sizes);
    }
    expect(icons.map((icon) => [icon.sizes, icon.purpose ?? 'any'])).toEqual([
      ['any', 'any'],
      ['192x192', 'any'],
      ['512x512', 'any'],
      ['512x512', 'maskable'],
    ]);
  });
});
