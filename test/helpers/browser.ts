// Debian's Chromium driven by playwright-core, for the web console's journeys. No browser download:
// CHROMIUM_PATH or /usr/bin/chromium. Collects the page's console errors and failed requests so a
// test can assert there were none; saves screenshots under a folder the test prints.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import type { TestAccount } from './test-system.ts';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function chromiumMissingReason(): string | undefined {
  return fs.existsSync(CHROMIUM_PATH) ? undefined : `${CHROMIUM_PATH} not found (Debian package chromium)`;
}

/**
 * Why a browser test file skips, or undefined to run it: without Chromium (or what `alsoMissing`
 * names, e.g. a dataset or a system tool) they skip with the reason printed, but fail under
 * CI=true. (They run once, in the PGlite pass: test/test-passes.ts.)
 */
export function browserTestSkipReason(alsoMissing?: () => string | undefined): string | undefined {
  const missing = chromiumMissingReason() ?? alsoMissing?.();
  if (missing && process.env.CI === 'true') throw new Error(`${missing}; CI must install it`);
  if (missing) console.log(`# skipped: ${missing}`);
  return missing;
}

/** Signs `account` in on the console at `base` through its sign-in form, which then opens `next` (a #/ route). */
export async function signIn(page: Page, base: string, account: Pick<TestAccount, 'username' | 'password'>, next: string): Promise<void> {
  await page.goto(`${base}/#/signin?next=${encodeURIComponent(next)}`);
  await page.getByLabel('Username').fill(account.username);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
}

export interface WatchedPage {
  page: Page;
  /** Console errors, uncaught exceptions and failed requests seen so far. */
  problems: string[];
  screenshot(name: string): Promise<string>;
  folder: string;
}

/** `touch`: a phone or tablet's context (touch events, the mobile viewport meta honoured). */
export async function openWatchedPage(browser: Browser, options: { viewport?: { width: number; height: number }; folder?: string; touch?: boolean } = {}): Promise<WatchedPage> {
  const touch = options.touch ? { hasTouch: true, isMobile: true } : {};
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 800 }, acceptDownloads: true, ...touch });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  // A console line "Failed to load resource: 403" names no address: record the answers that fail.
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`answer ${response.status()}: ${response.request().method()} ${response.url()}`);
  });
  page.on('requestfailed', (request) => {
    const failure = request.failure()?.errorText ?? '';
    if (!failure.includes('ERR_ABORTED')) problems.push(`request failed: ${request.method()} ${request.url()} ${failure}`);
  });
  const folder = options.folder ?? fs.mkdtempSync(path.join(os.tmpdir(), 'oi-screens-'));
  fs.mkdirSync(folder, { recursive: true });
  let count = 0;
  return {
    page,
    problems,
    folder,
    async screenshot(name: string) {
      const file = path.join(folder, `${String(++count).padStart(2, '0')}-${name}.png`);
      await page.screenshot({ path: file, fullPage: false });
      return file;
    },
  };
}

/**
 * How many pixels of a (WebGL) canvas lie within `tolerance` of `rgb` (the sum of the channels'
 * absolute differences), or, with `match: 'different'`, farther than that: what a 3D view drew. The
 * canvas is copied onto a 2D one first (a WebGL canvas cannot be read directly).
 */
export async function countCanvasPixels(canvas: Locator, rgb: readonly [number, number, number], tolerance: number, match: 'near' | 'different'): Promise<number> {
  return canvas.evaluate(
    (element, [[r, g, b], limit, near]) => {
      const source = element as HTMLCanvasElement;
      const copy = document.createElement('canvas');
      copy.width = source.width;
      copy.height = source.height;
      const context = copy.getContext('2d')!;
      context.drawImage(source, 0, 0);
      const pixels = context.getImageData(0, 0, copy.width, copy.height).data;
      let count = 0;
      for (let i = 0; i < pixels.length; i += 4) {
        const distance = Math.abs(pixels[i] - r) + Math.abs(pixels[i + 1] - g) + Math.abs(pixels[i + 2] - b);
        if (near ? distance < limit : distance > limit) count++;
      }
      return count;
    },
    [rgb, tolerance, match === 'near'] as const,
  );
}
