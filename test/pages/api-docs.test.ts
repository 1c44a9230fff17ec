// The API reference page at /api-docs (the agent-inbox contract's api_reference_path):
// served with its assets from node_modules and a self-only Content-Security-Policy, and
// rendered by headless Chromium from /openapi.json with every operation, no request
// leaving this machine and no console error.
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { launchBrowser, offMachineRequests, TestBrowser } from '../helpers/browser';

jest.setTimeout(180_000);

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

describe('API reference page', () => {
  let app: TestApp;
  let site: ReturnType<typeof client>;
  let browser: TestBrowser;

  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    site = client(app.siteUrl);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('serves the page with a self-only policy and its assets from node_modules', async () => {
    const page = await site('GET', '/api-docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
    const html = String(page.body);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)]
      .map((m) => m[1])
      .filter((u) => u.startsWith('api-docs/'));
    expect(assets.length).toBeGreaterThanOrEqual(4);
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//); // nothing from another host
    const version = require('swagger-ui-dist/package.json').version as string;
    for (const asset of assets) {
      const res = await fetch(`${app.siteUrl}/${asset}`);
      expect({ asset, status: res.status }).toEqual({ asset, status: 200 });
      if (asset.includes(`/assets/${version}/`))
        expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    }
    expect(
      (await fetch(`${app.siteUrl}/api-docs/assets/${version}/swagger-ui-bundle.js`)).headers.get('content-type'),
    ).toBe('text/javascript; charset=utf-8');
    expect((await fetch(`${app.siteUrl}/api-docs/assets/${version}/swagger-ui.css`)).headers.get('content-type')).toBe(
      'text/css; charset=utf-8',
    );
    expect((await fetch(`${app.siteUrl}/api-docs/assets/${version}/package.json`)).status).toBe(404);
    expect((await fetch(`${app.siteUrl}/api-docs/assets/${version}/..%2Fpackage.json`)).status).toBe(404);
  });

  it('redirects the path relative to {base_url} and the trailing-slash form to the page', async () => {
    for (const p of [`${app.baseUrl}/api-docs`, `${app.siteUrl}/api-docs/`]) {
      const res = await fetch(p, { redirect: 'manual' });
      expect({ p, status: res.status, location: res.headers.get('location') }).toEqual({
        p,
        status: 301,
        location: `${app.siteUrl}/api-docs`,
      });
    }
  });

  it('renders every operation of /openapi.json in Chromium without leaving the machine', async () => {
    const doc = (await site('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(doc.paths).flatMap(([p, item]) =>
      Object.keys(item)
        .filter((k) => METHODS.includes(k))
        .map((m) => `${m.toUpperCase()} ${p}`),
    );

    const { page, requests, errors } = await browser.open(`${app.siteUrl}/api-docs`);
    await page.locator('.opblock').first().waitFor({ timeout: 60_000 });
    expect(await page.locator('.info .title').innerText()).toContain('Postal Mail API');
    await browser.screenshot(page, 'api-docs');

    // Swagger UI renders the operations near the viewport: scroll to the end, collecting them.
    const rendered = new Set<string>();
    for (let step = 0; step < 400; step++) {
      const seen = await page.$$eval('.opblock', (blocks) =>
        blocks.map((b) => {
          const method = (b.querySelector('.opblock-summary-method')?.textContent ?? '').trim();
          const p = b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
          return `${method} ${p}`;
        }),
      );
      seen.forEach((o) => rendered.add(o));
      // A string: the test project compiles without the DOM library.
      const atEnd = await page.evaluate(
        'window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2',
      );
      if (atEnd && rendered.size >= operations.length) break;
      await page.mouse.wheel(0, 600);
      await page.waitForTimeout(100);
    }
    expect([...rendered].sort()).toEqual([...operations].sort());

    // A deep link opens one operation, whose parameters and request body come from the schemas.
    await page.goto('about:blank');
    await page.goto(`${app.siteUrl}/api-docs#/Outbound%20mail/postV1Mail`);
    const body = page.locator('.opblock-post.is-open .opblock-body');
    await body.waitFor({ timeout: 60_000 });
    expect(await page.locator('.opblock-post.is-open .opblock-summary-path').getAttribute('data-path')).toBe(
      '/v1/mail',
    );
    expect(await body.innerText()).toContain('recipient_line1');
    await page.locator('.opblock-post.is-open').scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'api-docs-post-mail');

    expect(requests.some((u) => u.endsWith('/openapi.json'))).toBe(true);
    expect(offMachineRequests(requests)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
