// The checked-in API types must match the backend's OpenAPI schema: regenerate and compare.
// Fix a failure with `scripts/gen-api-types.sh` (or `npm run gen:api`).
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = resolve(__dirname, '../../../..')
const python = process.env.QUIRE_PYTHON ?? join(root, '.venv/bin/python')

describe('schema.d.ts', () => {
  it.skipIf(!existsSync(python))(
    'is generated from the current backend (run scripts/gen-api-types.sh if this fails)',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'quire-schema-'))
      try {
        const out = join(dir, 'schema.d.ts')
        execFileSync('bash', [join(root, 'scripts/gen-api-types.sh'), out], {
          env: { ...process.env, QUIRE_PYTHON: python },
          stdio: 'pipe',
        })
        const fresh = readFileSync(out, 'utf8')
        const current = readFileSync(join(root, 'frontend/src/api/schema.d.ts'), 'utf8')
        expect(
          current === fresh,
          'frontend/src/api/schema.d.ts is stale: run scripts/gen-api-types.sh',
        ).toBe(true)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
    120_000,
  )
})
