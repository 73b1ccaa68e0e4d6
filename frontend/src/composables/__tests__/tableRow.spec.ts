// @vitest-environment node
// A quoted PDF table row ("Header: value · Header: value", backend formats/pdf/rows.py) is
// highlighted on the rendered page by its cells: the text layer has the values in the row and
// the headers in the header row. The real pages are read with pdf.js itself.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs'
import type { TextItem } from 'pdfjs-dist/types/src/display/api'
import { describe, expect, it } from 'vitest'

import { joinItems, matchQuoteRanges, matchRow, rowCells, spansOf } from '../textMatch'

// CI clones the repo next to a copy of shared/: <repo>/../shared.
const DOCS = fileURLToPath(new URL('../../../../../shared/data/docs/pdf/', import.meta.url))

interface Item {
  str: string
  hasEOL?: boolean
}

async function pageItems(file: string, page: number): Promise<Item[]> {
  const data = new Uint8Array(readFileSync(DOCS + file))
  const doc = await getDocument({ data, useSystemFonts: false }).promise
  try {
    const content = await (await doc.getPage(page)).getTextContent()
    return content.items.filter((i): i is TextItem => 'str' in i)
  } finally {
    await doc.destroy()
  }
}

/** The text each range covers, and the text-layer items (their text) the ranges touch. */
function marked(items: Item[], quote: string): { texts: string[]; items: string[] } {
  const { text, starts } = joinItems(items)
  const ranges = matchQuoteRanges(text, quote)
  const touched = new Set(
    ranges.flatMap((r) => spansOf(starts, text.length, r).map((p) => p.index)),
  )
  return {
    texts: ranges.map(([a, b]) => text.slice(a, b)),
    items: [...touched].sort((a, b) => a - b).map((k) => items[k]!.str),
  }
}

describe('rowCells', () => {
  it('reads headed, bare and key/value cells', () => {
    expect(rowCells('C · Facebook: 0.61 · BA model: 0.037')).toEqual([
      { label: null, value: 'C' },
      { label: 'Facebook', value: '0.61' },
      { label: 'BA model', value: '0.037' },
    ])
    expect(rowCells('Source articles: 28,009')).toEqual([
      { label: 'Source articles', value: '28,009' },
    ])
  })

  it('says null for a sentence', () => {
    expect(rowCells('The BA model is better than the WS model.')).toBeNull()
    expect(
      rowCells('Note: this sentence has a colon but it is a long sentence, not a cell.'),
    ).toBeNull()
  })
})

describe('matchRow', () => {
  const page = [
    'Name Value Description',
    'Gzero 0 Nothing paid.',
    'Gtransaction 21000 Paid for every',
    'transaction.',
    'Glog 375 Partial payment.',
  ].join('\n')

  it('finds each value of the row on its line, headers left alone', () => {
    const ranges = matchRow(
      page,
      'Name: Gtransaction · Value: 21000 · Description: Paid for every transaction.',
    )
    expect(ranges.map(([a, b]) => page.slice(a, b))).toEqual([
      'Gtransaction',
      '21000',
      'Paid for every\ntransaction.',
    ])
  })

  it('marks a key printed beside its value', () => {
    const kv = 'Source articles 28,009\nBasic clusters 5,543'
    expect(matchRow(kv, 'Basic clusters: 5,543').map(([a, b]) => kv.slice(a, b))).toEqual([
      'Basic clusters',
      '5,543',
    ])
  })

  it('takes a short value as a whole word, not inside another', () => {
    const grid = 'C 0.61 0.0375\nL 3.69 0.037'
    const ranges = matchRow(grid, 'L · Facebook: 3.69 · BA model: 0.037')
    expect(ranges.map(([a, b]) => grid.slice(a, b))).toEqual(['L', '3.69', '0.037'])
    expect(ranges[2]![0]).toBe(grid.lastIndexOf('0.037'))
  })

  it('is not found when the row is not on the page', () => {
    expect(matchRow(page, 'Name: Gsset · Value: 20000 · Description: Paid for an SSTORE.')).toEqual(
      [],
    )
    expect(matchRow(page, 'Just a sentence.')).toEqual([])
  })
})

describe('a table row on the real page, as pdf.js lays out its text', () => {
  it('thinkcomplexity2 p. 74: the BA model clustering 0.037 lands on row C', async () => {
    const items = await pageItems('thinkcomplexity2.pdf', 74)
    const got = marked(items, 'C · Facebook: 0.61 · WS model: 0.63 · BA model: 0.037')
    expect(got.texts).toEqual(['C', '0.61', '0.63', '0.037'])
    expect(got.items).toEqual(['C', '0.61', '0.63', '0.037'])
    // Not the 0.037 of the prose below the table.
    const { text } = joinItems(items)
    const [last] = matchRow(text, 'C · Facebook: 0.61 · WS model: 0.63 · BA model: 0.037').slice(-1)
    expect(last![0]).toBeLessThan(text.indexOf('Table 4.1'))
  })

  it('riscv-abi-spec p. 30: relocation 19, its wrapped cells included', async () => {
    const items = await pageItems('riscv-abi-spec-v1.0.pdf', 30)
    const row =
      'Enum: 19 · ELF Reloc Type: CALL_PLT · Type: Static · Field / Calculation: U+I-Type S + A - P' +
      ' · Description: 32-bit PC-relative function call, macros call, tail (PIC)'
    const got = marked(items, row)
    expect(got.texts.slice(0, 4)).toEqual(['19', 'CALL_PLT', 'Static', 'U+I-Type'])
    expect(got.texts.join(' ')).toContain('32-bit PC-relative function call,')
    expect(got.texts.join(' ')).toContain('tail (PIC)')
    expect(got.items).not.toContain('18')
  })

  it('the yellow paper p. 28: the fee row of Gtransaction', async () => {
    const items = await pageItems('ethereum-yellowpaper-shanghai.pdf', 28)
    const got = marked(
      items,
      'Name: Gtransaction · Value: 21000 · Description: Paid for every transaction.',
    )
    expect(got.texts.join(' ').replace(/\s+/g, ' ')).toBe(
      'Gtransaction 21000 Paid for every transaction.',
    )
  })

  it('the Polish invoice p. 1: a label read with the value beside it (pairs.py)', async () => {
    const items = await pageItems('polish-invoice-identity-cmap.pdf', 1)
    const got = marked(items, 'Do zapłaty: 148,83 PLN')
    // pdf.js sets the two side by side: one range over the label and the amount beside it,
    // not the amount of the "Razem" line below.
    expect(got.texts.join(' ').replace(/\s+/g, ' ')).toBe('Do zapłaty 148,83 PLN')
    expect(got.items.join(' ')).not.toContain('Razem')
    expect(got.items.join(' ')).toContain('148,83 PLN')
  })
})
