// Unit tests need nothing running; integration and e2e tests use the stack that
// scripts/test.ts starts and describes through environment variables.
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript' },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];

module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testTimeout: 60000,
  maxWorkers: 2,
  // Every response the API servers of the run answered, checked against the OpenAPI document.
  globalTeardown: '<rootDir>/test/contract/teardown.ts',
  // The Temporal SDK's native runtime keeps a thread alive after every Worker and
  // Connection is closed; nothing else should hold the process open.
  forceExit: true,
};
