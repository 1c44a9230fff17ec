// Installs npm dependencies when node_modules is missing or older than the lock file,
// so that `npm run dev` and `npm test` work on a fresh clone.
const { existsSync, statSync } = require('node:fs');
const { execSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const marker = path.join(root, 'node_modules', '.package-lock.json');
const lock = path.join(root, 'package-lock.json');
const stale = !existsSync(marker) || (existsSync(lock) && statSync(lock).mtimeMs > statSync(marker).mtimeMs);
if (stale) {
  console.log('[deps] installing npm dependencies ...');
  // `npm install` (which keeps the lock file's versions) rather than `npm ci`: the lock has
  // no entries for other platforms' optional native builds (@swc/core-*, resolver bindings)
  // that this registry does not serve, and `npm ci` refuses such a lock as out of sync.
  execSync('npm install --no-audit --no-fund', { cwd: root, stdio: 'inherit' });
}
