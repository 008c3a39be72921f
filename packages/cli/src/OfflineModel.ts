/**
 * The offline model: a deterministic `LanguageModel` that runs the demos without a
 * provider. It is not a language model. Each demo gives it a {@link Policy}, a plain
 * function from what the model can see (the user's request and every tool result so
 * far) to its next move, so it reacts to what the tools actually answered: a refused
 * jurisdiction, a failing test. It reports no token usage, because it spends none.
 *
 * @example
 * ```ts
 * const echo = OfflineModel.layer("echo", (view) => ({ text: `you said: ${view.request}` }))
 * Agent.run({ prompt: "hi", toolkit }).pipe(Effect.provide(echo))
 * ```
 */
import { LanguageModel, type Prompt, type Response } from "@effect/ai"
import { AiError } from "@effect/ai"
import { Effect, Layer, Stream } from "effect"

/** A tool result the model has read, joined with the call that asked for it. */
export interface SeenResult {
  readonly id: string
  readonly name: string
  readonly params: unknown
  /** `success`, `business_error`, ... (see `ToolResult.Status` in core). */
  readonly status: string
  readonly data: unknown
  readonly error: { readonly code: string; readonly message: string } | undefined
}

/** Everything the model sees of the conversation. */
export interface View {
  /** The text of the latest user message. */
  readonly request: string
  /** Every tool result so far, oldest first. */
  readonly results: ReadonlyArray<SeenResult>
  /** Model calls before this one. */
  readonly turns: number
}

/** The model's next move: text, tool calls, or both. No calls means the final answer. */
export interface Decision {
  readonly text?: string | undefined
  readonly calls?: ReadonlyArray<{ readonly name: string; readonly params: unknown }> | undefined
}

/** Decides the next move from what the model sees. */
export type Policy = (view: View) => Decision

const envelope = (result: unknown): Pick<SeenResult, "status" | "data" | "error"> => {
  if (typeof result !== "object" || result === null) return { status: "success", data: result, error: undefined }
  const r = result as { status?: unknown; data?: unknown; error?: { code?: unknown; message?: unknown } }
  const error = r.error === undefined ? undefined : { code: String(r.error.code), message: String(r.error.message) }
  return { status: typeof r.status === "string" ? r.status : "success", data: r.data, error }
}

/** What a policy is shown of a prompt. */
export const view = (prompt: Prompt.Prompt): View => {
  let request = ""
  let turns = 0
  const calls = new Map<string, { readonly name: string; readonly params: unknown }>()
  const results: Array<SeenResult> = []
  for (const message of prompt.content) {
    switch (message.role) {
      case "user":
        request = message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")
        break
      case "assistant":
        turns += 1
        for (const part of message.content) {
          if (part.type === "tool-call") calls.set(part.id, { name: part.name, params: part.params })
        }
        break
      case "tool":
        for (const part of message.content) {
          const call = calls.get(part.id)
          results.push({ id: part.id, name: part.name, params: call?.params, ...envelope(part.result) })
        }
        break
      default:
        break
    }
  }
  return { request, results, turns }
}

/** Builds the model for a policy; `name` labels its call ids. */
export const make = (name: string, policy: Policy): Effect.Effect<LanguageModel.Service> =>
  LanguageModel.make({
    generateText: (options) =>
      Effect.sync(() => {
        const seen = view(options.prompt)
        const decision = policy(seen)
        const calls = decision.calls ?? []
        const parts: Array<Response.PartEncoded> = []
        if (decision.text !== undefined) parts.push({ type: "text", text: decision.text })
        calls.forEach((call, index) =>
          parts.push({ type: "tool-call", id: `${name}_${seen.turns + 1}_${index + 1}`, name: call.name, params: call.params })
        )
        parts.push({
          type: "finish",
          reason: calls.length > 0 ? "tool-calls" : "stop",
          usage: { inputTokens: undefined, outputTokens: undefined, totalTokens: undefined }
        })
        return parts
      }),
    streamText: () =>
      Stream.fail(new AiError.UnknownError({ module: "OfflineModel", method: "streamText", description: "the offline model does not stream" }))
  })

/** The offline model as the `LanguageModel` layer. */
export const layer = (name: string, policy: Policy): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.effect(LanguageModel.LanguageModel, make(name, policy))
