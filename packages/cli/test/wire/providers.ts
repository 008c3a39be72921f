/** Provider layers pointed at a {@link ProviderServer}, and the fixtures the wire tests serve. */
import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import type { LanguageModel } from "@effect/ai"
import { FetchHttpClient } from "@effect/platform"
import { Layer, Redacted } from "effect"
import type * as ProviderServer from "./ProviderServer.js"

/** The real OpenAI Responses provider, talking to `server` (strict tool schemas, as by default). */
export const openAi = (
  server: ProviderServer.ProviderServer,
  model = "gpt-5-2025-08-07"
): Layer.Layer<LanguageModel.LanguageModel> =>
  OpenAiLanguageModel.layer({ model, config: { include: ["reasoning.encrypted_content"], store: false } }).pipe(
    Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make("sk-test"), apiUrl: `${server.url}/v1` })),
    Layer.provide(FetchHttpClient.layer)
  )

/** The real Anthropic Messages provider, talking to `server`. */
export const anthropic = (
  server: ProviderServer.ProviderServer,
  model = "claude-sonnet-4-5-20250929"
): Layer.Layer<LanguageModel.LanguageModel> =>
  AnthropicLanguageModel.layer({ model, config: { thinking: { type: "enabled", budget_tokens: 1024 } } }).pipe(
    Layer.provide(AnthropicClient.layer({ apiKey: Redacted.make("sk-ant-test"), apiUrl: server.url })),
    Layer.provide(FetchHttpClient.layer)
  )

/**
 * Every recorded payload in the fixture folder, with the test that serves it. The
 * coverage test fails when the folder holds a file that is not listed here, and the
 * tests name their fixtures through {@link Fixture}, so a listed name is a used one.
 */
export const fixtures = {
  "openai/response-function-call-single.json": "OpenAi: four-step run, step 1 (get_capital)",
  "openai/response-function-call-parallel.json": "OpenAi: four-step run, step 2 (two get_location calls)",
  "openai/response-reasoning-then-function-call.json": "OpenAi: four-step run, step 3 (reasoning item, update_plan)",
  "openai/response-final-message-after-tool-call-cached-tokens.json": "OpenAi: four-step run, final answer and cached usage",
  "openai/response-final-messages-reasoning-and-cached-tokens.json": "OpenAi: trimmed two-message final answer",
  "openai/error-400-invalid-request-temperature.json": "Errors: OpenAI 400 -> bad_request",
  "openai/error-400-reasoning-item-without-following-item.json": "Errors: OpenAI 400 -> bad_request",
  "openai/error-400-function-call-output-without-call.json": "Errors: OpenAI 400 -> bad_request",
  "openai/error-429-insufficient-quota.json": "Errors: OpenAI 429 -> rate_limited",
  "openai/error-429-rate-limit-exceeded.json": "Errors: OpenAI 429 -> rate_limited",
  "openai/stream-reasoning-then-function-call.sse": "Streaming: OpenAI streamText parts; streamed run",
  "openai/stream-reasoning-function-calls-multi-turn.data.jsonl": "Streaming: OpenAI four-turn streamed run",
  "anthropic/message-thinking-text-tool-use.json": "Anthropic: three-step run, step 1 (thinking, text, get_user_country)",
  "anthropic/message-tool-use-parallel.json": "Anthropic: three-step run, step 2 (four retrieve_entity_info calls)",
  "anthropic/message-end-turn-text-cache-usage.json": "Anthropic: final answer and cache usage",
  "anthropic/message-thinking-then-tool-use.json": "Anthropic: thinking then checkSandboxErrors",
  "anthropic/message-tool-use-single.json": "Anthropic: getWeather",
  "anthropic/error-400-invalid-request-effort.json": "Errors: Anthropic 400 -> bad_request",
  "anthropic/error-400-invalid-request-tool-result.json": "Errors: Anthropic 400 -> bad_request",
  "anthropic/error-429-rate-limit.json": "Errors: Anthropic 429 -> rate_limited",
  "anthropic/error-529-overloaded.json": "Errors: Anthropic 529 -> unavailable",
  "anthropic/error-529-overloaded-no-request-id.json": "Errors: Anthropic 529 -> unavailable",
  "anthropic/stream-thinking-then-text.sse": "Streaming: Anthropic streamText parts; streamed answer",
  "anthropic/stream-tool-use-parallel.data.jsonl": "Streaming: Anthropic streamText parts; streamed run"
} as const

/** The name of a listed fixture. */
export type Fixture = keyof typeof fixtures
