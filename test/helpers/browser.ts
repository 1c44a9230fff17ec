// Page tests in a real browser: starts Debian's Chromium headless (scripts/stack.ts
// installs it) with a fresh profile and no background traffic, and drives it over the
// DevTools protocol with playwright-core. Records every request a page makes and every
// console error, so a test can assert that a page stays on this machine and renders
// without errors (CSP violations show up as console errors).
import { spawn, ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, Browser, Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = path.join(__dirname, '..', '..', '.data', 'screenshots');

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface PageRecorder {
  page: Page;
  /** Every URL the page requested, in order. */
  requests: string[];
  /** Console errors, uncaught exceptions and the browser's error log (CSP violations, failed loads). */
  errors: string[];
}

export interface TestBrowser {
  browser: Browser;
  /** A new page whose requests and errors are recorded. */
  open(url: string, viewport?: { width: number; height: number }): Promise<PageRecorder>;
  /** Saves a PNG under .data/screenshots and returns its path. */
  screenshot(page: Page, name: string, opts?: { fullPage?: boolean }): Promise<string>;
  close(): Promise<void>;
}

/** Resolves with the DevTools WebSocket URL Chromium prints on stderr. */
function devToolsUrl(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => reject(new Error(`Chromium printed no DevTools URL within ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Chromium exited (${code}) before it listened:\n${output}`));
    });
  });
}

export async function launchBrowser(opts: { timeoutMs?: number } = {}): Promise<TestBrowser> {
  const profile = mkdtempSync(path.join(tmpdir(), 'chromium-profile-'));
  const child = spawn(
    CHROMIUM_PATH,
    [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`, '--remote-debugging-port=0', 'about:blank'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let browser: Browser;
  try {
    browser = await chromium.connectOverCDP(await devToolsUrl(child, opts.timeoutMs ?? 30_000));
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    removeProfile(profile);
    throw err;
  }
  const context = browser.contexts()[0];

  return {
    browser,
    async open(url, viewport = { width: 1280, height: 900 }) {
      const page = await context.newPage();
      await page.setViewportSize(viewport);
      const recorder: PageRecorder = { page, requests: [], errors: [] };
      page.on('request', (r) => recorder.requests.push(r.url()));
      page.on('console', (m) => {
        if (m.type() === 'error') recorder.errors.push(m.text());
      });
      page.on('pageerror', (e) => recorder.errors.push(`uncaught: ${e.message}`));
      // The browser's own log (CSP violations, failed loads) is not console output.
      const cdp = await context.newCDPSession(page);
      cdp.on('Log.entryAdded', ({ entry }) => {
        if (entry.level === 'error') recorder.errors.push(`${entry.source}: ${entry.text}`);
      });
      await cdp.send('Log.enable');
      await page.goto(url);
      return recorder;
    },
    async screenshot(page, name, shotOpts = {}) {
      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      const file = path.join(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path: file, fullPage: shotOpts.fullPage ?? false });
      return file;
    },
    async close() {
      await browser.close().catch(() => undefined);
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
      removeProfile(profile);
    },
  };
}

/** Hosts other than this machine's loopback that the requests went to (data: and blob: URLs are local). */
export function offMachineRequests(urls: string[]): string[] {
  return urls.filter((u) => {
    const url = new URL(u);
    if (url.protocol === 'data:' || url.protocol === 'blob:' || url.protocol === 'about:') return false;
    return !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) && !url.hostname.startsWith('127.');
  });
}

/**
 * Chromium's helper processes (crashpad, utility) may still write into the profile for a
 * moment after the browser exits; a removal that races them (ENOTEMPTY) is retried, and a
 * leftover temporary folder never fails a test.
 */
function removeProfile(profile: string): void {
  try {
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  } catch {
    /* left in the system temp folder */
  }
}
