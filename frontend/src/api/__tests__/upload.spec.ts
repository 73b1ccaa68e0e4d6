import { describe, expect, it } from 'vitest'

import { uploadFile } from '../upload'

class FakeXHR {
  status = 0
  responseText = ''
  upload: { onprogress: ((ev: ProgressEvent) => void) | null } = { onprogress: null }
  onload: (() => void) | null = null
  onerror: (() => void) | null = null
  onabort: (() => void) | null = null
  sent: FormData | null = null
  method = ''
  url = ''
  open(method: string, url: string) {
    this.method = method
    this.url = url
  }
  setRequestHeader() {}
  send(body: FormData) {
    this.sent = body
  }
  abort() {
    this.onabort?.()
  }
  respond(status: number, body: unknown) {
    this.status = status
    this.responseText = JSON.stringify(body)
    this.onload?.()
  }
}

const file = () => new File(['%PDF-1.4 ...'], 'paper.pdf', { type: 'application/pdf' })

describe('uploadFile', () => {
  it('reports progress and resolves with the per-file result', async () => {
    const xhr = new FakeXHR()
    const progress: number[] = []
    const handle = uploadFile(file(), (f) => progress.push(f), {
      xhrFactory: () => xhr as unknown as XMLHttpRequest,
    })
    expect(xhr.method).toBe('POST')
    expect(xhr.url).toBe('/api/documents')
    expect((xhr.sent!.get('files') as File).name).toBe('paper.pdf')
    xhr.upload.onprogress!({ lengthComputable: true, loaded: 5, total: 10 } as ProgressEvent)
    xhr.respond(202, {
      files: [{ filename: 'paper.pdf', status: 'queued', document_id: 1, job_id: 2, kind: 'pdf' }],
    })
    await expect(handle.promise).resolves.toMatchObject({ status: 'queued', job_id: 2 })
    expect(progress).toEqual([0.5, 1])
  })

  it('sends the visibility field only when one is given', () => {
    const team = new FakeXHR()
    uploadFile(file(), () => {}, { xhrFactory: () => team as unknown as XMLHttpRequest })
    expect(team.sent!.has('visibility')).toBe(false)
    const mine = new FakeXHR()
    uploadFile(file(), () => {}, {
      visibility: 'private',
      xhrFactory: () => mine as unknown as XMLHttpRequest,
    })
    expect(mine.sent!.get('visibility')).toBe('private')
    expect((mine.sent!.get('files') as File).name).toBe('paper.pdf')
  })

  it('rejects with the server message when the file is refused', async () => {
    const xhr = new FakeXHR()
    const handle = uploadFile(file(), () => {}, {
      xhrFactory: () => xhr as unknown as XMLHttpRequest,
    })
    xhr.respond(415, {
      error: {
        status: 415,
        code: 'unsupported_type',
        message: 'virus.exe: not a supported type',
        detail: null,
      },
    })
    await expect(handle.promise).rejects.toMatchObject({
      code: 'unsupported_type',
      message: 'virus.exe: not a supported type',
    })
  })

  it('can be cancelled', async () => {
    const xhr = new FakeXHR()
    const handle = uploadFile(file(), () => {}, {
      xhrFactory: () => xhr as unknown as XMLHttpRequest,
    })
    handle.abort()
    await expect(handle.promise).rejects.toMatchObject({ code: 'aborted' })
  })
})
