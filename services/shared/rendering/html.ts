// Letter HTML to a US Letter PDF with Debian's headless Chromium, driven by playwright-core.
// One browser process per API or worker process, started on the first render and started
// again after it dies. Renders run in a fixed number of slots (slots.ts), and the pool of
// browser contexts behind them keeps one warm page per slot: each letter gets a new
// document in it (about:blank first), a page prints at most 50 letters before its context
// is replaced, and a page whose render crashed, timed out or navigated is closed. Reusing
// the page saves starting a renderer process per letter, most of a render's CPU. The Node
// side only sends DevTools commands and receives the PDF: the layout and printing run in
// Chromium's own processes, off the event loop.
//
// The renderer cannot be turned against us (docs/decisions/0140-html-letters-rendered-by-chromium.md):
// - JavaScript is off in every context, and the document's head carries a CSP that allows
//   nothing but data: URIs (letter-html.ts);
// - every request the page makes is routed here and aborted unless it is a data: URI, so
//   no <img>, <link>, CSS url() or @import, <iframe>, <object>, <embed>, <video>, meta
//   refresh or redirect reaches any host, and file: URLs load nothing into an about:blank page;
// - the browser itself is started with a proxy that points at a closed port for every
//   host, loopback included, so even a request the routing missed goes nowhere;
// - the content is loaded with setContent into about:blank (no URL, no origin to reach);
// - input, pages and time are bounded (2 MB of HTML, 60 pages, RENDER_HTML_TIMEOUT_MS), and
//   the browser sees only the fonts in fonts.conf and a minimal environment (no secrets).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, BrowserServer, Page } from 'playwright-core';
import type { RenderingSettings } from '../../../config';
import type { Logger } from '../logger';
import { countPdfPages, MAX_HTML_BYTES, MAX_RENDERED_PAGES } from '../../../domain/outbound-mail/documents';
import { ApiError, errors } from '../../../domain/shared/errors';
import { printableHtml } from './letter-html';
import { renderRefusal } from './refusals';
import { RenderSlots } from './slots';

/** The fontconfig file naming the only fonts the renderers may use. */
export const FONTS_CONF = path.join(__dirname, 'fonts.conf');

/** Where the browser would send any request that escaped the routing: a port nothing listens on. */
const DEAD_PROXY = '127.0.0.1:9';

const CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-extensions',
  '--disable-default-apps',
  '--disable-domain-reliability',
  '--no-pings',
  '--mute-audio',
  '--disable-dev-shm-usage',
  // Glyph positions in the PDF follow the font's own metrics, not the screen's hinting.
  '--font-render-hinting=none',
  `--proxy-server=${DEAD_PROXY}`,
  // Chromium sends loopback addresses around a proxy unless told not to.
  '--proxy-bypass-list=<-loopback>',
];

/** At most this many render requests wait for a slot; more are refused as busy. */
const MAX_QUEUED_RENDERS = 32;
/** A context that does not close within this after a timeout means a stuck browser: it is killed. */
const CLOSE_GRACE_MS = 5_000;
/**
 * A page prints this many letters before its context is closed and a fresh one opened.
 * Reusing a page saves starting a renderer process per letter (most of a render's CPU);
 * each letter still gets a new document (about:blank), and a page that crashed, timed out or
 * was navigated is never reused.
 */
const MAX_RENDERS_PER_PAGE = 50;
/** Opening a fresh context and page takes milliseconds; this long means the browser is stuck. */
const SETUP_TIMEOUT_MS = 15_000;
/** Blocked URLs reported back (each cut to 200 characters). */
const MAX_BLOCKED_REPORTED = 10;

export interface HtmlRenderLimits {
  /** Bytes of the caller's HTML (UTF-8), before the renderer's head is added. */
  maxHtmlBytes: number;
  /** Pages the PDF may have. */
  maxPages: number;
  /** From loading the content to the finished PDF. */
  timeoutMs: number;
}

export interface RenderHtmlOptions {
  /** The request field a refusal names (400 fields[].path): `document` for a letter. */
  field?: string;
  /** Tighter (or, for tests, other) limits than the defaults. */
  limits?: Partial<HtmlRenderLimits>;
}

export interface RenderedPdf {
  pdf: Buffer;
  pageCount: number;
  /** Requests the page tried and the renderer aborted (the first few, cut short): the sender's missing images, fonts and styles. */
  blockedRequests: string[];
  /** Wall time of the render itself, waiting for a slot excluded. */
  renderMs: number;
}

/** Chromium's console messages for loads its CSP or its file: rule refused (older and newer wordings). */
const CSP_REFUSAL = /^(?:Refused to [^']*|Loading the [^']*|Framing )'([^']+)'.*Content Security Policy/s;
const LOCAL_REFUSAL = /^Not allowed to load local resource: (\S+)/;

/** Thrown inside a render when the browser went away under it (killed or crashed). */
class BrowserGone extends Error {}

/** What one render learns from its page's handlers. */
interface RenderState {
  blocked: string[];
  navigated: boolean;
  crashed: boolean;
  /** The content is in: a navigation of the main frame from now on is the document's. */
  loaded: boolean;
}

/** A context with its page, kept between renders (one per render slot at most). */
interface WarmPage {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  uses: number;
  /** The render holding the page, or null while it is idle. */
  render: RenderState | null;
}

/** A render phase that ran out of time: setting up the context (the machine's), or the document's. */
class Deadline extends Error {
  constructor(readonly phase: 'setup' | 'document') {
    super(`the ${phase} phase of a render ran out of time`);
  }
}

/** `work`, or a Deadline after `ms`; work still running then is left to fail on its own (the caller closes its context). */
function deadline<T>(work: Promise<T>, ms: number, phase: 'setup' | 'document'): Promise<T> {
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Deadline(phase)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const navigationRefusal = (field: string) =>
  renderRefusal(
    field,
    'navigation',
    'the document navigates away from itself (a <meta http-equiv="refresh"> or similar); remove it',
  );

export class HtmlRenderer {
  private readonly slots: RenderSlots;
  private server: Promise<BrowserServer> | null = null;
  private browser: Promise<Browser> | null = null;
  private home: string | null = null;
  private closed = false;
  /** Pages ready for the next letter (at most one per slot: a slot returns its page when done). */
  private idle: WarmPage[] = [];

  constructor(
    private readonly settings: RenderingSettings,
    private readonly log: Logger,
  ) {
    this.slots = new RenderSlots(settings.htmlConcurrency, MAX_QUEUED_RENDERS, settings.queueWaitMs, 'HTML renderer');
  }

  /** Renders that run at once (RENDER_HTML_CONCURRENCY); more wait for a slot. */
  get slotCount(): number {
    return this.slots.size;
  }

  /** The default limits: 2 MB of HTML, 60 pages, RENDER_HTML_TIMEOUT_MS. */
  get limits(): HtmlRenderLimits {
    return { maxHtmlBytes: MAX_HTML_BYTES, maxPages: MAX_RENDERED_PAGES, timeoutMs: this.settings.htmlTimeoutMs };
  }

  /** The running browser's process id, if one runs (tests kill it to prove a restart). */
  async browserPid(): Promise<number | undefined> {
    const server = await this.server?.catch(() => null);
    return server?.process().pid;
  }

  /**
   * Renders letter HTML to a US Letter PDF. Refusals are 400s naming `field` with
   * details.render_refusal; a full queue or a browser that cannot start is a 503.
   */
  async render(html: string, opts: RenderHtmlOptions = {}): Promise<RenderedPdf> {
    const field = opts.field ?? 'document';
    const limits = { ...this.limits, ...opts.limits };
    const bytes = Buffer.byteLength(html, 'utf8');
    if (bytes > limits.maxHtmlBytes)
      throw renderRefusal(
        field,
        'too_large',
        `the HTML is ${bytes} bytes; the renderer takes at most ${limits.maxHtmlBytes} bytes (2 MB)`,
      );
    const page = printableHtml(html);
    return this.slots.run(async () => {
      // A browser that dies under a render (killed, or crashed by something else) gets one
      // more try on a fresh one; a document that kills it twice is refused.
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.renderOnce(page, field, limits);
        } catch (err) {
          if (!(err instanceof BrowserGone)) throw err;
          if (attempt >= 2)
            throw renderRefusal(field, 'crashed', 'the renderer crashed on this document twice; simplify it');
          this.log.warn('the HTML renderer lost its browser mid-render; rendering again on a new one');
        }
      }
    });
  }

  private async renderOnce(html: string, field: string, limits: HtmlRenderLimits): Promise<RenderedPdf> {
    const started = Date.now();
    const browser = await this.connected();
    let gone = false;
    const onDisconnect = () => {
      gone = true;
    };
    browser.once('disconnected', onDisconnect);
    const state: RenderState = { blocked: [], navigated: false, crashed: false, loaded: false };
    let warm: WarmPage | null = null;
    let reusable = false;
    try {
      // Opening a context is the machine's work, not the document's: bounded apart, a 503 when stuck.
      warm = await deadline(this.warmPage(browser), SETUP_TIMEOUT_MS, 'setup');
      warm.render = state;
      const page = warm.page;
      // The document's own time: a fresh document, its content, and printing it.
      const print = (async () => {
        // A new document for every letter: nothing of the last one (its CSP, its fonts) stays.
        if (warm.uses > 0) await page.goto('about:blank');
        await page.setContent(html, { waitUntil: 'load', timeout: limits.timeoutMs });
        // From here on any navigation of the main frame (a meta refresh, even to itself) replaces the letter.
        state.loaded = true;
        return page.pdf({
          format: 'Letter',
          printBackground: true,
          preferCSSPageSize: false,
          // One page more than allowed is enough to know the document is too long.
          pageRanges: `1-${limits.maxPages + 1}`,
        });
      })();
      warm.uses++;
      const pdf = await deadline(print, limits.timeoutMs, 'document');
      if (state.navigated) throw navigationRefusal(field);
      reusable = !state.crashed;
      const pageCount = await countPdfPages(pdf, limits.maxPages);
      if (pageCount > limits.maxPages)
        throw renderRefusal(
          field,
          'too_many_pages',
          `the document lays out to more than ${limits.maxPages} pages; send at most ${limits.maxPages} pages as HTML or Markdown, or a PDF`,
        );
      return { pdf, pageCount, blockedRequests: state.blocked, renderMs: Date.now() - started };
    } catch (err) {
      if (err instanceof ApiError) throw err;
      if (err instanceof Deadline && err.phase === 'document')
        throw renderRefusal(
          field,
          'timeout',
          `the document took longer than ${Math.round(limits.timeoutMs / 100) / 10} s to render; simplify it`,
        );
      // A killed browser is seen a moment after the call that failed on it.
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (gone || !browser.isConnected()) throw new BrowserGone();
      if (err instanceof Deadline) {
        this.log.error('the HTML renderer could not open a browser context in time; restarting the browser');
        await this.killBrowser();
        throw unavailable();
      }
      if (state.crashed) throw renderRefusal(field, 'crashed', 'the document crashed the renderer; simplify it');
      if (state.navigated) throw navigationRefusal(field);
      this.log.warn({ err }, 'an HTML render failed');
      throw renderRefusal(field, 'unreadable', `the document could not be rendered: ${(err as Error).message}`);
    } finally {
      browser.off('disconnected', onDisconnect);
      if (warm) {
        warm.render = null;
        // A page that printed cleanly serves the next letter; any other is closed with its context.
        if (reusable && warm.uses < MAX_RENDERS_PER_PAGE && browser.isConnected() && !this.closed) this.idle.push(warm);
        else await this.closeOrKill(warm.context);
      }
    }
  }

  /**
   * A page ready for a letter: an idle one of this browser, or a new context and page whose
   * handlers report to whatever render holds it (WarmPage.render).
   */
  private async warmPage(browser: Browser): Promise<WarmPage> {
    for (let warm = this.idle.pop(); warm; warm = this.idle.pop()) {
      if (warm.browser === browser && browser.isConnected()) return warm;
    }
    const context = await browser.newContext({
      javaScriptEnabled: false,
      serviceWorkers: 'block',
      acceptDownloads: false,
      offline: true,
    });
    try {
      const page = await context.newPage();
      const warm: WarmPage = { browser, context, page, uses: 0, render: null };
      const note = (url: string) => {
        const blocked = warm.render?.blocked;
        const shown = url.slice(0, 200);
        if (blocked && blocked.length < MAX_BLOCKED_REPORTED && !blocked.includes(shown)) blocked.push(shown);
      };
      await context.route('**/*', async (route) => {
        const request = route.request();
        const url = request.url();
        if (url.startsWith('data:') && warm.render) return route.continue();
        if (warm.render && request.isNavigationRequest() && request.frame() === page.mainFrame())
          warm.render.navigated = true;
        note(url);
        // 'aborted' cancels a navigation silently; other codes would replace the letter with an error page.
        return route.abort('aborted');
      });
      // Most loads never reach the routing: the CSP refuses them first, and says so on the console.
      page.on('console', (message) => {
        const refused = CSP_REFUSAL.exec(message.text()) ?? LOCAL_REFUSAL.exec(message.text());
        if (refused) note(refused[1]);
      });
      page.on('crash', () => {
        if (warm.render) warm.render.crashed = true;
      });
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame() && warm.render?.loaded) warm.render.navigated = true;
      });
      return warm;
    } catch (err) {
      await context.close().catch(() => undefined);
      throw err;
    }
  }

  /** Closes a render's context; one that hangs (a stuck renderer) takes the browser down with it. */
  private async closeOrKill(context: BrowserContext): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const closedInTime = await Promise.race([
      context.close().then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), CLOSE_GRACE_MS);
      }),
    ]);
    clearTimeout(timer);
    if (!closedInTime) {
      this.log.warn('a browser context did not close; killing the HTML renderer browser');
      await this.killBrowser();
    }
  }

  /** The browser, started (or started again) when there is none. */
  private connected(): Promise<Browser> {
    // A request still in flight while the process shuts down is told to retry (elsewhere).
    if (this.closed) return Promise.reject(unavailable());
    this.browser ??= this.start().catch((err) => {
      this.browser = null;
      this.server = null;
      throw err;
    });
    return this.browser;
  }

  private async start(): Promise<Browser> {
    this.home ??= await mkdtemp(path.join(tmpdir(), 'letter-renderer-'));
    // Loaded on the first letter: processes that never render one (SMTP intake, the CLI) never load it.
    const { chromium } = await import('playwright-core');
    this.server = chromium.launchServer({
      executablePath: this.settings.chromiumPath,
      args: CHROMIUM_ARGS,
      chromiumSandbox: this.settings.chromiumSandbox,
      // No secrets of this process reach the browser; fontconfig sees only the letter fonts.
      env: { PATH: '/usr/bin:/bin', HOME: this.home, FONTCONFIG_FILE: FONTS_CONF, LANG: 'C.UTF-8', TZ: 'UTC' },
      // The API's and worker's own shutdown closes it (closeDeps).
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      timeout: 30_000,
    });
    let server: BrowserServer;
    try {
      server = await this.server;
    } catch (err) {
      this.log.error({ err }, 'the HTML renderer could not start Chromium');
      throw unavailable();
    }
    const browser = await chromium.connect(server.wsEndpoint());
    const forget = () => {
      this.idle = this.idle.filter((warm) => warm.browser !== browser);
      if (this.server && this.browser) {
        this.browser = null;
        this.server = null;
      }
      void server.kill().catch(() => undefined);
    };
    browser.on('disconnected', forget);
    server.process().once('exit', () => {
      if (browser.isConnected()) void browser.close().catch(() => undefined);
    });
    this.log.info({ pid: server.process().pid }, 'HTML renderer started Chromium');
    return browser;
  }

  private async killBrowser(): Promise<void> {
    const server = await this.server?.catch(() => null);
    this.browser = null;
    this.server = null;
    await server?.kill().catch(() => undefined);
  }

  /** Stops the browser; renders still waiting for a slot are refused. */
  async close(): Promise<void> {
    this.closed = true;
    this.slots.drain();
    const browser = await this.browser?.catch(() => null);
    await browser?.close().catch(() => undefined);
    await this.killBrowser();
    if (this.home) await rm(this.home, { recursive: true, force: true, maxRetries: 5 }).catch(() => undefined);
  }
}

function unavailable(): ApiError {
  return errors.unavailable(
    'RENDERER_UNAVAILABLE',
    'The HTML renderer is unavailable right now; nothing was stored or charged.',
    { suggestedAction: 'Retry the same request in a minute.' },
  );
}
