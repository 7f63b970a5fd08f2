import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', '.fixtures-build/**', '.bench-build/**', '.sample-build/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  { files: ['**/*.mjs'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // Node defines these globals as getters: every read of one is a call, which a hot path pays per message.
    // (`performance` is one too, but stays global: fake timers replace the global, and the pending table's
    // deadlines follow them in users' tests and ours.)
    files: ['lib/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'Buffer', message: "import { Buffer } from 'node:buffer' (the global is a getter)" },
        { name: 'process', message: "import process from 'node:process' (the global is a getter)" },
      ],
    },
  },
);
