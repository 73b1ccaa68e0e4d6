import { bodyOf, client, type Schemas } from './client'

export type Health = Schemas['HealthOut']

export function getHealth(): Promise<Health> {
  return bodyOf(client.GET('/api/health'))
}

export type LlmStatus = Schemas['LLMStatus']
export type LlmBackend = Schemas['LLMBackendOut']

export function getLlmStatus(): Promise<LlmStatus> {
  return bodyOf(client.GET('/api/llm'))
}
