// The human-readable API reference at {site_url}/api-docs (the agent-inbox contract's
// api_reference_path): Swagger UI rendering the generated /openapi.json. Its assets come
// from the swagger-ui-dist package in node_modules, under a versioned path so browsers
// may cache them for good; nothing is fetched from another host (the page's
// Content-Security-Policy allows only this origin).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Config } from '../../config';

export const API_REFERENCE_PATH = '/api-docs';

const DIST_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const DIST_VERSION = (JSON.parse(readFileSync(path.join(DIST_DIR, 'package.json'), 'utf8')) as { version: string })
  .version;

/** The files of swagger-ui-dist the page uses, with their content types. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const ASSET_BASE = `${API_REFERENCE_PATH}/assets/${DIST_VERSION}`;
const INIT_PATH = `${API_REFERENCE_PATH}/init.js`;

// Paths in the page are relative to /api-docs (no trailing slash), so the page also works
// behind a proxy that mounts the site under a prefix.
const relative = (p: string) => p.slice(1);

const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Postal Mail API reference</title>
    <link rel="stylesheet" href="${relative(ASSET_BASE)}/swagger-ui.css">
    <link rel="icon" type="image/png" href="${relative(ASSET_BASE)}/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="${relative(ASSET_BASE)}/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"><noscript>The reference needs JavaScript; the OpenAPI document itself is at <a href="openapi.json">/openapi.json</a>.</noscript></div>
    <script src="${relative(ASSET_BASE)}/swagger-ui-bundle.js"></script>
    <script src="${relative(INIT_PATH)}"></script>
  </body>
</html>
`;

// A file rather than an inline script, so the policy needs no 'unsafe-inline' for scripts.
// validatorUrl null: Swagger UI would otherwise send the document to an online validator.
const INIT_SCRIPT = `window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  validatorUrl: null,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  displayRequestDuration: true,
  filter: true,
});
`;

/** Only this origin (and the API's, when BASE_URL names another host, for "Try it out"). */
export function apiReferencePolicy(config: Config): string {
  const apiOrigin = new URL(config.baseUrl).origin;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self' ${apiOrigin}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function apiReferenceRoutes(config: Config): Router {
  const router = new Router({ strict: true });
  const assets = new Map<string, Buffer>();

  router.get(API_REFERENCE_PATH, (ctx: Context) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', apiReferencePolicy(config));
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = PAGE;
  });
  // The page's relative links need the path without a trailing slash.
  router.get(`${API_REFERENCE_PATH}/`, (ctx: Context) => {
    ctx.status = 301;
    ctx.redirect(`${config.siteUrl}${API_REFERENCE_PATH}`);
  });
  // The agent-inbox contract's paths are relative to {base_url}; this one is at the site root.
  router.get(`${config.apiPrefix}${API_REFERENCE_PATH}`, (ctx: Context) => {
    ctx.status = 301;
    ctx.redirect(`${config.siteUrl}${API_REFERENCE_PATH}`);
  });
  router.get(INIT_PATH, (ctx: Context) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = INIT_SCRIPT;
  });
  router.get(`${ASSET_BASE}/:file`, (ctx: Context) => {
    const file = ctx.params.file;
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) return; // 404
    let body = assets.get(file);
    if (!body) {
      body = readFileSync(path.join(DIST_DIR, file));
      assets.set(file, body);
    }
    ctx.type = type;
    // The version is in the path: a new swagger-ui-dist is a new URL.
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.body = body;
  });
  return router;
}
