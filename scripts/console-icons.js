// Renders the console's PNG icons from console/icons/favicon.svg with Chromium (the one the browser tests use):
//   node scripts/console-icons.js      after changing favicon.svg; the PNGs are committed beside it
// The web app manifest names the 192 and 512 px icons (the maskable one for Android's shaped launchers),
// index.html the Apple touch icon (iOS reads no manifest icons).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const DIR = join(import.meta.dirname, '..', 'console', 'icons');
const svg = readFileSync(join(DIR, 'favicon.svg'));
// The tile's colour, for the icons that fill their square with it.
const tile = /<rect[^>]*fill="(#[0-9a-f]{6})"/i.exec(svg.toString('utf8'))?.[1];
if (!tile) throw new Error('favicon.svg: no <rect fill="#rrggbb"> to take the tile colour from');

const ICONS = [
  { file: 'icon-192.png', size: 192, scale: 1, fill: false },
  { file: 'icon-512.png', size: 512, scale: 1, fill: false },
  // A launcher cuts a maskable icon to its shape within the middle 80 %: the tile's colour to the edges, the mark inside.
  { file: 'icon-maskable-512.png', size: 512, scale: 0.8, fill: true },
  // iOS rounds the corners itself and shows transparency as black.
  { file: 'apple-touch-icon.png', size: 180, scale: 1, fill: true },
];

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu'],
});
try {
  const page = await browser.newPage();
  for (const { file, size, scale, fill } of ICONS) {
    await page.setViewportSize({ width: size, height: size });
    const side = Math.round(size * scale);
    await page.setContent(
      `<body style="margin:0;display:grid;place-items:center;height:${size}px;background:${fill ? tile : 'transparent'}">` +
        `<img width="${side}" height="${side}" src="data:image/svg+xml;base64,${svg.toString('base64')}"></body>`,
    );
    await page.locator('img').evaluate((img) => /** @type {HTMLImageElement} */ (img).decode());
    await page.screenshot({ path: join(DIR, file), omitBackground: !fill });
    console.log(`${file}: ${size} px`);
  }
} finally {
  await browser.close();
}
