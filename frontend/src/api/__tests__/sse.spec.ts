import { describe, expect, it } from 'vitest'

import { SSEParser, readEvents } from '../sse'

function parseAll(pieces: string[]) {
  const p = new SSEParser()
  return pieces.flatMap((x) => p.feed(x))
}

describe('SSEParser', () => {
  it('parses named events with JSON data', () => {
    expect(parseAll(['event: token\ndata: {"text":"hi"}\n\n'])).toEqual([
      { event: 'token', data: '{"text":"hi"}' },
    ])
  })

  it('handles events split at any byte boundary', () => {
    const text = 'event: a\ndata: 1\n\nevent: b\ndata: 2\n\n'
    for (let i = 1; i < text.length; i++) {
      expect(parseAll([text.slice(0, i), text.slice(i)])).toEqual([
        { event: 'a', data: '1' },
        { event: 'b', data: '2' },
      ])
    }
  })

  it('accepts CRLF and CR line ends, even a CRLF split across chunks', () => {
    expect(parseAll(['event: x\r\ndata: 1\r', '\n\r\n'])).toEqual([{ event: 'x', data: '1' }])
    expect(parseAll(['event: y\rdata: 2\r\r'])).toEqual([{ event: 'y', data: '2' }])
  })

  it('ignores comments (pings), joins data lines, defaults the event name', () => {
    expect(parseAll([': ping\n\ndata: line one\ndata: line two\n\n'])).toEqual([
      { event: 'message', data: 'line one\nline two' },
    ])
  })

  it('drops one leading space only, and events without data', () => {
    expect(parseAll(['event: e\n\ndata:  two spaces\ndata:none\n\n'])).toEqual([
      { event: 'message', data: ' two spaces\nnone' },
    ])
  })

  it('does not let an event name leak into the next event', () => {
    expect(parseAll(['event: first\ndata: 1\n\ndata: 2\n\n'])).toEqual([
      { event: 'first', data: '1' },
      { event: 'message', data: '2' },
    ])
  })

  it('keeps the id field and discards an unterminated event at the end', () => {
    const p = new SSEParser()
    expect(p.feed('id: 7\ndata: a\n\ndata: cut')).toEqual([
      { event: 'message', data: 'a', id: '7' },
    ])
    expect(p.end()).toEqual([])
  })
})

describe('readEvents', () => {
  it('decodes UTF-8 split inside a character', async () => {
    const bytes = new TextEncoder().encode('event: token\ndata: {"text":"é✓"}\n\n')
    const cut = bytes.indexOf(0xc3) + 1 // inside "é"
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.slice(0, cut))
        c.enqueue(bytes.slice(cut))
        c.close()
      },
    })
    const out = []
    for await (const ev of readEvents(body)) out.push(ev)
    expect(out).toEqual([{ event: 'token', data: '{"text":"é✓"}' }])
  })
})
