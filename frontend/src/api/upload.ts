// Uploads go through XMLHttpRequest: fetch cannot report upload progress.
import { authHeaders } from './auth'
import { ApiError, errorFrom, type Schemas } from './client'
import type { Visibility } from './documents'

export type UploadResult = Schemas['UploadResult']

export interface UploadHandle {
  promise: Promise<UploadResult>
  abort: () => void
}

export interface UploadOptions {
  /** Sent as the form field `visibility` when given (a team library); the server's default
   * is "team". */
  visibility?: Visibility
  xhrFactory?: () => XMLHttpRequest
}

/** POST one file to /api/documents, reporting the fraction sent (0..1). */
export function uploadFile(
  file: File,
  onProgress: (fraction: number) => void,
  { visibility, xhrFactory = () => new XMLHttpRequest() }: UploadOptions = {},
): UploadHandle {
  const xhr = xhrFactory()
  const promise = new Promise<UploadResult>((resolve, reject) => {
    xhr.open('POST', '/api/documents')
    xhr.setRequestHeader('Accept', 'application/json')
    for (const [k, v] of Object.entries(authHeaders())) xhr.setRequestHeader(k, v)
    xhr.upload.onprogress = (ev) => {
      if (ev.lengthComputable && ev.total > 0) onProgress(ev.loaded / ev.total)
    }
    xhr.onload = () => {
      if (xhr.status === 202 || xhr.status === 200) {
        try {
          const body = JSON.parse(xhr.responseText) as Schemas['UploadResponse']
          const first = body.files[0]
          if (first) {
            onProgress(1)
            return resolve(first)
          }
        } catch {
          // fall through to the generic error
        }
      }
      reject(errorFrom(xhr.status, xhr.responseText))
    }
    xhr.onerror = () => reject(errorFrom(0, ''))
    xhr.onabort = () =>
      reject(new ApiError({ status: 0, code: 'aborted', message: 'upload cancelled' }))
    const form = new FormData()
    form.append('files', file, file.name)
    if (visibility) form.append('visibility', visibility)
    xhr.send(form)
  })
  return { promise, abort: () => xhr.abort() }
}
