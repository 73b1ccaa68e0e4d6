import { request, type Schemas } from './client'

export type Health = Schemas['HealthOut']

export function getHealth(): Promise<Health> {
  return request<Health>('/api/health')
}

export type LlmStatus = Schemas['LLMStatus']
export type LlmBackend = Schemas['LLMBackendOut']

export function getLlmStatus(): Promise<LlmStatus> {
  return request<LlmStatus>('/api/llm')
}
