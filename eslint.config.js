// Lint config: typescript-eslint's recommended rules on top of eslint's, and
// the layers of src/ (scripts/lint/layers.js), the tools beside them in tools/, with no import cycles.
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';
import { layerZones, OUTSIDE_LAYERS } from './scripts/lint/layers.js';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.cache/**', '.run/**', 'charts/**', 'coverage/**', '.venv/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        fetch: 'readonly',
        structuredClone: 'readonly',
        performance: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Test doubles live in testing/ folders, which dist/ does not ship (tsconfig.build.json): product code
    // importing one would either break the build's output or ship the double. (A separate rule name from the
    // layer rule, so neither overrides the other.)
    files: ['src/**/*.ts', 'tools/**/*.ts'],
    ignores: ['src/**/*.test.ts', 'src/**/testing/**', 'tools/**/*.test.ts', 'tools/**/testing/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)testing/',
              message: 'testing/ modules are for tests only and are not built into dist/.',
            },
          ],
        },
      ],
    },
  },
  {
    // Every import in src/ and tools/ is relative with its .ts extension: the plain node
    // resolver finds them all, no TypeScript resolver needed.
    files: ['src/**/*.ts', 'tools/**/*.ts'],
    ignores: OUTSIDE_LAYERS,
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver()],
      // no-cycle follows only the files it can parse: without these it would
      // skip every .ts file and pass silently.
      'import-x/extensions': ['.ts'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: layerZones() }],
      'import-x/no-cycle': 'error',
    },
  },
);
