// typescript-eslint's type-aware recommended rules over every TypeScript file the three tsconfigs compile (run it
// after `npm run build`: bench/ and the test fixtures import the package's own build). templates/ is a project of its
// own, copied out by `init-tools`, with its own tsconfig.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist-dev/**',
      'node_modules/**',
      'docs/api/**',
      'bundle/**',
      'templates/**',
      // AssemblyScript (its own types: i32, @external), compiled by asc.
      'examples/tools/assembly/**',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.json', './tsconfig.dev.json', './tsconfig.test.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // `_`-prefixed names are the deliberate "unused" of a destructuring or a callback's position.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // An async method that implements an async interface (a task store, a transport) stays async without an await,
      // so that a throw in it is the caller's rejection rather than a synchronous throw.
      '@typescript-eslint/require-await': 'off',
      // Passing on what a handler threw, whatever it is, is a rejection with that value, not a new Error.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingUnknown: true, allowThrowingAny: true },
      ],
    },
  },
  {
    // vitest's asymmetric matchers (expect.objectContaining, expect.any, …) are typed `any`; reading the wire's JSON
    // in a test is the point of the test.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
