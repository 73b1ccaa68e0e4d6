// A Server-Sent Events parser for streams read with fetch (EventSource cannot POST).
// It follows the WHATWG "event stream interpretation": lines end in \n, \r\n or \r; a line
// starting with ":" is a comment; "field: value" loses one leading space; data lines join with
// \n; a blank line dispatches; an event without data is dropped; `event` defaults to "message".

export interface SSEMessage {
  event: string
  data: string
  id?: string
}

export class SSEParser {
  private buffer = ''
  private event = ''
  private data: string[] = []
  private id: string | undefined
  private pendingCR = false

  /** Feed decoded text; returns the events completed by it. */
  feed(text: string): SSEMessage[] {
    const out: SSEMessage[] = []
    let chunk = text
    if (this.pendingCR && chunk.startsWith('\n')) chunk = chunk.slice(1)
    this.pendingCR = false
    this.buffer += chunk
    let start = 0
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i]
      if (c !== '\n' && c !== '\r') continue
      this.line(this.buffer.slice(start, i), out)
      if (c === '\r') {
        if (i + 1 === this.buffer.length) this.pendingCR = true
        else if (this.buffer[i + 1] === '\n') i++
      }
      start = i + 1
    }
    this.buffer = this.buffer.slice(start)
    return out
  }

  /** End of stream: an event not closed by a blank line is discarded, as the spec says. */
  end(): SSEMessage[] {
    this.buffer = ''
    this.event = ''
    this.data = []
    return []
  }

  private line(line: string, out: SSEMessage[]): void {
    if (line === '') {
      if (this.data.length) {
        const msg: SSEMessage = { event: this.event || 'message', data: this.data.join('\n') }
        if (this.id !== undefined) msg.id = this.id
        out.push(msg)
      }
      this.event = ''
      this.data = []
      return
    }
    if (line.startsWith(':')) return
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'event') this.event = value
    else if (field === 'data') this.data.push(value)
    else if (field === 'id' && !value.includes('\0')) this.id = value
  }
}

/** Read a fetch body as SSE messages. */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SSEMessage> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const parser = new SSEParser()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      yield* parser.feed(decoder.decode(value, { stream: true }))
    }
    yield* parser.feed(decoder.decode())
    yield* parser.end()
  } finally {
    reader.releaseLock()
  }
}
