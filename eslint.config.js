// ESLint: the recommended rules of ESLint and typescript-eslint over the server, tests, scripts,
// benchmarks and the web console, plus React's rules of hooks in web/ (`npm run lint`, run by CI).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'web/dist/', 'data/', 'web/src/api/schema.d.ts', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['web/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'warn' },
  },
  {
    // User content is text in the console (docs/web-console.md): no HTML sinks; Leaflet's content
    // (a string is HTML to it) is an element from textElement() (web/src/components/text-element.ts).
    files: ['web/src/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "JSXAttribute[name.name='dangerouslySetInnerHTML']", message: 'Render text with React, not HTML.' },
        { selector: 'MemberExpression[property.name=/^(innerHTML|outerHTML)$/]', message: 'Set textContent, or build elements.' },
        { selector: "CallExpression[callee.property.name='insertAdjacentHTML']", message: 'No HTML strings into the page.' },
        { selector: "CallExpression[callee.object.name='document'][callee.property.name=/^write(ln)?$/]", message: 'No HTML strings into the page.' },
        {
          selector: "CallExpression[callee.property.name=/^(bindTooltip|bindPopup|setTooltipContent|setPopupContent|setContent)$/]:not([arguments.0.callee.name='textElement'])",
          message: 'Leaflet renders a string as HTML: pass textElement(text).',
        },
        {
          selector: "CallExpression[callee.property.name='divIcon'] > ObjectExpression > Property[key.name='html']:not([value.callee.name='textElement'])",
          message: 'Leaflet renders a string as HTML: pass textElement(text).',
        },
      ],
    },
  },
  {
    // Tests, the small SDK and the benchmarks read JSON answers of the API as they come: `any`
    // there is the shape of an HTTP body.
    files: ['test/**/*.ts', 'src/sdk/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    rules: {
      // `_`-prefixed names are unused on purpose (a parameter a signature requires).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
);
