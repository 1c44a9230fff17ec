// Runs in a worker thread (services/outbound-mail/print-proofs.ts owns the pool): renders one
// print proof with domain/outbound-mail/print-proof.ts. Plain JavaScript because worker
// threads start without the TypeScript loader the API (tsx) and the tests (swc under Jest)
// run under, so the renderer is loaded through tsx's scoped require.
const { require: tsxRequire } = require('tsx/cjs/api');

const { renderPrintProof } = tsxRequire('../../domain/outbound-mail/print-proof.ts', __filename);

/** @param {import('../../domain/outbound-mail/print-proof').PrintProofInput} input */
module.exports = async function renderProof(input) {
  return renderPrintProof(input);
};
