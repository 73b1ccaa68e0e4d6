// Answers are markdown written by a model (or quoted from documents): rendered by markdown-it
// with raw HTML off, `[n]` turned into links to the cited source (`[unsupported]`, the mark of a
// sentence whose citations did not hold, into a flagged span), and the result sanitised by
// DOMPurify before it reaches v-html.
import DOMPurify from 'dompurify'
import MarkdownIt, { type StateCore, type Token } from 'markdown-it'
import { computed, type MaybeRefOrGetter, toValue } from 'vue'

import type { Source } from '@/api/chat'
import { sourceHref } from './sourceLink'

const CITATION = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]|\[unsupported\]/g
// What the citation check puts where it removed a sentence's every citation.
const UNSUPPORTED = '[unsupported]'

function citationPlugin(md: MarkdownIt): void {
  // Before text_join: a quote's own bracket escaped by the server ("µs\\[0]", a thread's
  // "\\[2]") is still its own token there, so it is never taken for a citation.
  md.core.ruler.before('text_join', 'citations', (state) => {
    const sources = (state.env as { sources?: Source[] }).sources ?? []
    const byN = new Map(sources.map((s) => [s.n, s]))
    for (const block of state.tokens) {
      if (block.type !== 'inline' || !block.children) continue
      const out: Token[] = []
      let inLink = 0
      for (const tok of block.children) {
        if (tok.type === 'link_open') inLink++
        if (tok.type === 'link_close') inLink--
        if (tok.type !== 'text' || inLink > 0 || !tok.content.includes('[')) {
          out.push(tok)
          continue
        }
        let last = 0
        const text = tok.content
        for (const m of text.matchAll(CITATION)) {
          if (m[0] === UNSUPPORTED) {
            if (m.index! > last) out.push(textToken(state, text.slice(last, m.index)))
            const open = new state.Token('span_open', 'span', 1)
            open.attrs = [
              ['class', 'unsupported'],
              ['title', 'No cited source says this: its citations were removed'],
            ]
            out.push(open, textToken(state, UNSUPPORTED), new state.Token('span_close', 'span', -1))
            last = m.index! + m[0].length
            continue
          }
          const numbers = m[1]!.split(',').map((x) => Number(x.trim()))
          if (!numbers.every((n) => byN.has(n))) continue
          if (m.index! > last) out.push(textToken(state, text.slice(last, m.index)))
          numbers.forEach((n, i) => {
            const src = byN.get(n)!
            const open = new state.Token('link_open', 'a', 1)
            open.attrs = [
              ['href', sourceHref(src)],
              ['class', 'cite'],
              ['data-n', String(n)],
              ['title', `${src.title}, ${src.place}`],
            ]
            out.push(open, textToken(state, i === 0 ? `[${n}` : `${n}`))
            if (i === numbers.length - 1) out[out.length - 1]!.content += ']'
            out.push(new state.Token('link_close', 'a', -1))
            if (i < numbers.length - 1) out.push(textToken(state, ', '))
          })
          last = m.index! + m[0].length
        }
        if (last === 0) out.push(tok)
        else if (last < text.length) out.push(textToken(state, text.slice(last)))
      }
      block.children = out
    }
  })
}

function textToken(state: StateCore, content: string): Token {
  const t = new state.Token('text', '', 0)
  t.content = content
  return t
}

const md = new MarkdownIt({ html: false, linkify: false, breaks: false }).use(citationPlugin)

/** Markdown → sanitised HTML with `[n]` linked to `sources` (unknown numbers stay text). */
export function renderAnswer(markdown: string, sources: Source[] = []): string {
  const html = md.render(markdown, { sources })
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, ADD_ATTR: ['data-n'] })
}

/** The same as a computed, for components. */
export function useMarkdown(
  markdown: MaybeRefOrGetter<string>,
  sources: MaybeRefOrGetter<Source[]>,
) {
  return computed(() => renderAnswer(toValue(markdown), toValue(sources)))
}
