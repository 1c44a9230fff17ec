// Spectral function: object schemas (with at least `minProperties` properties) written out
// inline in more than one place of the document. Each such schema should be one named
// component (api/discovery/components.ts) that the places reference.
const SKIP = new Set(['examples', 'example', 'x-access']);

export default function noRepeatedInlineSchemas(doc, options) {
  const min = options?.minProperties ?? 3;
  const seen = new Map();
  const visit = (node, path) => {
    if (Array.isArray(node)) {
      node.forEach((v, i) => visit(v, [...path, i]));
      return;
    }
    if (!node || typeof node !== 'object') return;
    const properties = node.properties;
    // A component's own root is its definition, not a repetition.
    const isComponentRoot = path.length === 3 && path[0] === 'components' && path[1] === 'schemas';
    if (!isComponentRoot && properties && typeof properties === 'object' && !Array.isArray(properties)) {
      if (Object.keys(properties).length >= min) {
        const key = JSON.stringify(node);
        const list = seen.get(key) ?? [];
        list.push(path);
        seen.set(key, list);
      }
    }
    for (const [k, v] of Object.entries(node)) if (!SKIP.has(k)) visit(v, [...path, k]);
  };
  visit(doc, []);
  const results = [];
  for (const [key, paths] of seen) {
    if (paths.length < 2) continue;
    const props = Object.keys(JSON.parse(key).properties).slice(0, 5).join(', ');
    results.push({
      message: `an inline object schema (${props}, ...) appears ${paths.length} times (${paths
        .slice(0, 3)
        .map((p) => p.join('.'))
        .join('; ')}); make it a named component`,
      path: paths[0],
    });
  }
  return results;
}
