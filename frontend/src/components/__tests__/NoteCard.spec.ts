import { mount, RouterLinkStub } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'

import type { Note } from '@/api/notes'
import NoteCard from '../NoteCard.vue'

function note(body: string, extra: Partial<Note> = {}): Note {
  return {
    id: 7,
    document_id: 3,
    document_title: 'Alice',
    page: 45,
    page_label: null,
    place: 'your note on p. 45',
    span_start: 0,
    span_end: 10,
    quote: 'Down, down',
    boxes: null,
    color: '#ffd400',
    tags: ['rabbit'],
    body,
    origin: 'quire',
    zotero_key: null,
    annotation_type: null,
    status: 'ok',
    visibility: 'team',
    owner: null,
    can_change: true,
    conversation_id: null,
    message_id: null,
    searchable: true,
    created_at: '2026-12-05T00:00:00Z',
    updated_at: '2026-12-05T00:00:00Z',
    ...extra,
  }
}

const stubs = { RouterLink: RouterLinkStub }

describe('NoteCard', () => {
  it('renders the Markdown sanitised, as answers are: no script, no handler', () => {
    const w = mount(NoteCard, {
      props: { note: note('**bold** <script>alert(1)</script><img src=x onerror="alert(2)">') },
      global: { stubs },
    })
    const body = w.get('[data-testid="note-body"]')
    expect(body.find('strong').text()).toBe('bold')
    // Raw HTML is shown as text, never made into elements.
    expect(body.find('script').exists()).toBe(false)
    expect(body.find('img').exists()).toBe(false)
    expect(body.text()).toContain('<script>alert(1)</script>')
    expect(w.get('.quote').text()).toBe('Down, down')
    expect(w.text()).toContain('your note on p. 45')
    expect(w.text()).toContain('#rabbit')
  })

  it('says when its quote left the page, and offers no edit to a reader who cannot', () => {
    const w = mount(NoteCard, {
      props: { note: note('x', { status: 'orphaned', can_change: false }) },
      global: { stubs },
    })
    expect(w.get('[data-testid="note-status"]').text()).toMatch(/orphaned/)
    expect(w.find('[data-testid="note-delete"]').exists()).toBe(false)
  })
})
