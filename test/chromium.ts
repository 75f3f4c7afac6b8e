import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium, which .ci/run installs; flags for a machine without a network beyond loopback. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Headless Chromium for browser tests (never a browser a test tool downloads). */
export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
