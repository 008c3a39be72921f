/**
 * The real models of `agent-harness run`: OpenAI (Responses API) or Anthropic (Messages
 * API) through their `@effect/ai` layers, configured from the environment. Nothing in
 * the harness changes with the provider: only this `LanguageModel` layer does.
 *
 * Keys: `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`. Other servers: `OPENAI_BASE_URL` (any
 * OpenAI-compatible server with the Responses API), `ANTHROPIC_BASE_URL`.
 *
 * @example
 * ```ts
 * Agent.run({ prompt, toolkit }).pipe(Effect.provide(Provider.layer({ provider: "anthropic", model: "claude-sonnet-4-5" })))
 * ```
 */
import type { LanguageModel } from "@effect/ai"
import { FetchHttpClient } from "@effect/platform"
import { Config, Effect, Layer, Option, Schema } from "effect"

/** The providers the command line knows. */
export const names = ["openai", "anthropic"] as const

/** @see {@link names} */
export type Name = (typeof names)[number]

/** The model used when `--model` is not given. */
export const defaultModels: Readonly<Record<Name, string>> = {
  openai: "gpt-5-mini",
  anthropic: "claude-sonnet-4-5"
}

/** The provider cannot be set up: unknown name, missing key, bad URL. */
export class ProviderError extends Schema.TaggedError<ProviderError>("@agent-harness/cli/ProviderError")("ProviderError", {
  message: Schema.String
}) {}

const env = {
  openai: { key: "OPENAI_API_KEY", url: "OPENAI_BASE_URL" },
  anthropic: { key: "ANTHROPIC_API_KEY", url: "ANTHROPIC_BASE_URL" }
} as const

const isName = (name: string): name is Name => (names as ReadonlyArray<string>).includes(name)

/** Checks the name and reads the key and base URL from the environment (`Config`). */
export const settings = (provider: string) =>
  Effect.gen(function*() {
    if (!isName(provider)) {
      return yield* new ProviderError({ message: `unknown provider '${provider}'; use one of: ${names.join(", ")}` })
    }
    const vars = env[provider]
    const apiKey = Option.getOrUndefined(yield* Effect.orElseSucceed(Config.option(Config.redacted(vars.key)), () => Option.none()))
    if (apiKey === undefined) {
      return yield* new ProviderError({ message: `${vars.key} is not set; export it to use --provider ${provider}` })
    }
    const apiUrl = Option.getOrUndefined(yield* Effect.orElseSucceed(Config.option(Config.string(vars.url)), () => Option.none()))
    // `localhost:8080` parses as a URL whose scheme is "localhost:"; only http(s) will do.
    if (apiUrl !== undefined && !(URL.canParse(apiUrl) && /^https?:$/.test(new URL(apiUrl).protocol))) {
      return yield* new ProviderError({ message: `${vars.url} is not an http(s) URL: '${apiUrl}'` })
    }
    return { provider, apiKey, apiUrl }
  })

/** The `LanguageModel` of a provider, with its HTTP client; fails with {@link ProviderError}. */
export const layer = (options: { readonly provider: string; readonly model?: string | undefined }): Layer.Layer<LanguageModel.LanguageModel, ProviderError> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const { apiKey, apiUrl, provider } = yield* settings(options.provider)
      const model = options.model ?? defaultModels[provider]
      const client = { apiKey, ...(apiUrl === undefined ? {} : { apiUrl }) }
      // Loaded on demand: the providers' generated schemas take a while to import, and
      // the offline demos never need them.
      const language = provider === "openai"
        ? yield* Effect.promise(() => import("@effect/ai-openai")).pipe(Effect.map(({ OpenAiClient, OpenAiLanguageModel }) =>
          OpenAiLanguageModel.layer({ model }).pipe(Layer.provide(OpenAiClient.layer(client)))
        ))
        : yield* Effect.promise(() => import("@effect/ai-anthropic")).pipe(Effect.map(({ AnthropicClient, AnthropicLanguageModel }) =>
          AnthropicLanguageModel.layer({ model }).pipe(Layer.provide(AnthropicClient.layer(client)))
        ))
      return language.pipe(Layer.provide(FetchHttpClient.layer))
    })
  )
