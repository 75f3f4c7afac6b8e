import { appendFileSync } from 'node:fs';
import { afterAll, expect } from 'vitest';
import { undocumentedErrors } from './documented-errors.js';

afterAll(() => {
  const found = [...undocumentedErrors].sort();
  // ERROR_CODES_OUT collects them from the whole run instead (to write the routes' lists).
  if (process.env.ERROR_CODES_OUT)
    return appendFileSync(process.env.ERROR_CODES_OUT, found.map((line) => `${line}\n`).join(''));
  expect(found, 'error codes answered by routes that do not list them in their OpenAPI responses').toEqual([]);
});
