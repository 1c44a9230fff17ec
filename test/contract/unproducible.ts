// Documented statuses that no test can make the server answer on demand, with the reason. A
// full run (`npm test` with no file) fails on every documented status of every operation that
// no test received, except the ones listed here: keep each entry as narrow as it can be.

/** Statuses that no operation can be made to answer by a test, whatever the operation. */
export const UNPRODUCIBLE_STATUSES: Record<string, string> = {
  '500':
    'INTERNAL: an unexpected failure (a bug or a dependency failing in an unforeseen way); the error mapper is tested on its own, and a test that could cause one on purpose would be a bug to fix',
};

/** Statuses of one operation (its key: `METHOD /path/{template}`) that no test can produce, with the reason. */
export const UNPRODUCIBLE: Record<string, Record<string, string>> = {};
