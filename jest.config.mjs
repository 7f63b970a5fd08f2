/** Jest in ESM mode: Nest 12 ships ESM only. Run through `npm run jest` (sets --experimental-vm-modules). */
export default {
  testEnvironment: '<rootDir>/test/environment.mjs',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // The examples import the package by name, as a user does (tsconfig's paths for the compiler).
    '^nestjs-zlink$': '<rootDir>/lib/index.ts',
    '^nestjs-zlink/session-client$': '<rootDir>/lib/session-client/index.ts',
    '^nestjs-zlink/session-client/browser$': '<rootDir>/lib/session-client/browser.ts',
  },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  globalSetup: '<rootDir>/test/global-setup.mjs',
  testTimeout: 60000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/summary-reporter.mjs'],
};
