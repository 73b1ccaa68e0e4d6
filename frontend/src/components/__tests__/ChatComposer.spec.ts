import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'

import { QUESTION_MAX_CHARS } from '@/api/chat'
import ChatComposer from '../ChatComposer.vue'

describe('ChatComposer', () => {
  it('refuses a question over the limit before sending it, with the limit shown', async () => {
    const w = mount(ChatComposer, { props: { running: false } })
    await w.get('textarea').setValue('x'.repeat(5012))
    expect(w.get('button[type=submit]').attributes('disabled')).toBeDefined()
    expect(w.get('[data-testid=question-hint]').text()).toContain('limited to 2,000 characters')
    expect(w.get('[data-testid=question-hint]').text()).toContain('this one has 5,012')
    expect(w.get('[data-testid=question-count]').text()).toBe('5,012 / 2,000')
    await w.get('textarea').trigger('keydown', { key: 'Enter' })
    await w.get('form').trigger('submit')
    expect(w.emitted('ask')).toBeUndefined()

    await w.get('textarea').setValue('y'.repeat(QUESTION_MAX_CHARS))
    await w.get('form').trigger('submit')
    expect(w.emitted('ask')).toEqual([['y'.repeat(QUESTION_MAX_CHARS)]])
  })

  it('explains an empty question instead of doing nothing', async () => {
    const w = mount(ChatComposer, { props: { running: false } })
    expect(w.get('[data-testid=question-hint]').text()).toBe('')
    await w.get('textarea').trigger('keydown', { key: 'Enter' })
    expect(w.get('[data-testid=question-hint]').text()).toContain('Type a question first')
    expect(w.emitted('ask')).toBeUndefined()
    await w.get('textarea').setValue('What is a tide?')
    await w.get('textarea').trigger('input')
    expect(w.get('[data-testid=question-hint]').text()).toBe('')
  })
})
