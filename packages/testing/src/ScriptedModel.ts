/**
 * A `LanguageModel` that plays a script: each request gets the next scripted turn.
 *
 * Strict by design: a request beyond the script fails with an error naming the step,
 * and `assertFinished` fails while turns are left. Every request is recorded (its
 * messages and the names of the tools offered) for assertions. Call ids are
 * deterministic (`call_<step>_<index>`) unless a turn names its own.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "@agent-harness/testing"
 *
 * const Model = ScriptedModel.layer([
 *   ScriptedModel.calls(ScriptedModel.call("add", { a: 2, b: 3 })),
 *   ScriptedModel.text("5")
 * ])
 * // provide Model to Agent.run; then yield* ScriptedModel.ScriptedModel to inspect requests
 * ```
 */
import { AiError, LanguageModel, type Prompt, type Response, Tool } from "@effect/ai"
import { Context, type Duration, Effect, type JSONSchema, Layer, Ref, Schema, Stream } from "effect"

/** Token figures a scripted turn reports. */
export interface ScriptedUsage {
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
  readonly totalTokens?: number | undefined
  readonly reasoningTokens?: number | undefined
  readonly cachedInputTokens?: number | undefined
}

/** One scripted tool call. `params` may be anything, even a string that is not JSON. */
export interface ScriptedCall {
  readonly name: string
  readonly params: unknown
  readonly id?: string | undefined
  readonly metadata?: Response.ProviderMetadata | undefined
}

/** One response of the script, or a failure. */
export type Turn =
  | {
    readonly _tag: "Respond"
    /** Parts in `@effect/ai`'s encoded form. */
    readonly parts: ReadonlyArray<Response.PartEncoded>
    /** Fill empty call ids with `call_<step>_<index>` (the builders do; raw `parts` do not). */
    readonly fillIds?: boolean | undefined
    readonly delay?: Duration.DurationInput | undefined
  }
  | {
    readonly _tag: "Fail"
    readonly error: AiError.AiError
    readonly delay?: Duration.DurationInput | undefined
  }

/** What the model received in one request. */
export interface ScriptedRequest {
  /** 1-based request number. */
  readonly step: number
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly toolNames: ReadonlyArray<string>
  /** The JSON Schemas of the tools offered, as a provider would send them. */
  readonly tools: ReadonlyArray<{
    readonly name: string
    readonly description: string | undefined
    readonly parameters: JSONSchema.JsonSchema7
  }>
}

/** Turns were left when the test expected the script to be used up. */
export class ScriptNotFinished extends Schema.TaggedError<ScriptNotFinished>(
  "@agent-harness/testing/ScriptNotFinished"
)("ScriptNotFinished", { remaining: Schema.Number, requests: Schema.Number }) {
  override get message() {
    return `${this.remaining} scripted turn(s) were never requested (${this.requests} request(s) made)`
  }
}

/** Inspection of the script from a test. */
export interface Service {
  readonly requests: Effect.Effect<ReadonlyArray<ScriptedRequest>>
  readonly remaining: Effect.Effect<number>
  readonly assertFinished: Effect.Effect<void, ScriptNotFinished>
}

/** The tag tests use to inspect the script. */
export class ScriptedModel extends Context.Tag("@agent-harness/testing/ScriptedModel")<ScriptedModel, Service>() {}

const finish = (usage: ScriptedUsage | undefined, reason: Response.FinishReason): Response.FinishPartEncoded => ({
  type: "finish",
  reason,
  usage: {
    inputTokens: usage?.inputTokens,
    outputTokens: usage?.outputTokens,
    totalTokens: usage?.totalTokens,
    ...(usage?.reasoningTokens === undefined ? {} : { reasoningTokens: usage.reasoningTokens }),
    ...(usage?.cachedInputTokens === undefined ? {} : { cachedInputTokens: usage.cachedInputTokens })
  }
})

/** Options shared by the turn builders. */
export interface TurnOptions {
  readonly usage?: ScriptedUsage | undefined
  readonly delay?: Duration.DurationInput | undefined
  readonly finishReason?: Response.FinishReason | undefined
}

/** A turn that answers with text and calls no tool. */
export const text = (content: string, options: TurnOptions = {}): Turn => ({
  _tag: "Respond",
  parts: [{ type: "text", text: content }, finish(options.usage, options.finishReason ?? "stop")],
  delay: options.delay
})

/** A tool call; see {@link calls}. */
export const call = (name: string, params: unknown, options: { readonly id?: string; readonly metadata?: Response.ProviderMetadata } = {}): ScriptedCall => ({
  name,
  params,
  ...options
})

/** A turn that makes tool calls (a batch), optionally with some text before them. */
export const calls = (...scripted: ReadonlyArray<ScriptedCall>): Turn => callsWith({}, ...scripted)

/** {@link calls} with usage, delay, leading text or a finish reason. */
export const callsWith = (
  options: TurnOptions & { readonly text?: string | undefined },
  ...scripted: ReadonlyArray<ScriptedCall>
): Turn => ({
  _tag: "Respond",
  parts: [
    ...(options.text === undefined ? [] : [{ type: "text" as const, text: options.text }]),
    ...scripted.map((c): Response.ToolCallPartEncoded => ({
      type: "tool-call",
      id: c.id ?? "",
      name: c.name,
      params: c.params,
      ...(c.metadata === undefined ? {} : { metadata: c.metadata })
    })),
    finish(options.usage, options.finishReason ?? "tool-calls")
  ],
  fillIds: true,
  delay: options.delay
})

/** A turn made of raw encoded parts, sent as they are: for malformed envelopes and provider metadata. */
export const parts = (content: ReadonlyArray<Response.PartEncoded>, options: { readonly delay?: Duration.DurationInput | undefined } = {}): Turn => ({
  _tag: "Respond",
  parts: content,
  delay: options.delay
})

/** A turn where the model call fails. */
export const fail = (error: AiError.AiError, options: { readonly delay?: Duration.DurationInput | undefined } = {}): Turn => ({
  _tag: "Fail",
  error,
  delay: options.delay
})

const fillIds = (step: number, content: ReadonlyArray<Response.PartEncoded>): Array<Response.PartEncoded> => {
  let index = 0
  return content.map((part) => {
    if (part.type !== "tool-call") return part
    index += 1
    return part.id === "" ? { ...part, id: `call_${step}_${index}` } : part
  })
}

/** Builds the model and its inspection service from a script. */
export const make = (script: ReadonlyArray<Turn>): Effect.Effect<readonly [LanguageModel.Service, Service]> =>
  Effect.gen(function*() {
    const requests = yield* Ref.make<ReadonlyArray<ScriptedRequest>>([])
    const model = yield* LanguageModel.make({
      generateText: (options) =>
        Effect.gen(function*() {
          const recorded = yield* Ref.modify(requests, (all) => {
            const request: ScriptedRequest = {
              step: all.length + 1,
              messages: options.prompt.content.slice(),
              toolNames: options.tools.map((tool) => tool.name),
              tools: options.tools.map((tool) => ({
                name: tool.name,
                description: Tool.getDescription(tool as Parameters<typeof Tool.getDescription>[0]),
                parameters: Tool.getJsonSchema(tool as Parameters<typeof Tool.getJsonSchema>[0])
              }))
            }
            return [request, [...all, request]] as const
          })
          const turn = script[recorded.step - 1]
          if (turn === undefined) {
            return yield* new AiError.UnknownError({
              module: "ScriptedModel",
              method: "generateText",
              description: `request ${recorded.step} has no scripted turn (the script has ${script.length})`
            })
          }
          if (turn.delay !== undefined) yield* Effect.sleep(turn.delay)
          if (turn._tag === "Fail") return yield* turn.error
          return turn.fillIds === true ? fillIds(recorded.step, turn.parts) : turn.parts.slice()
        }),
      streamText: () =>
        Stream.fail(
          new AiError.UnknownError({
            module: "ScriptedModel",
            method: "streamText",
            description: "ScriptedModel only scripts generateText"
          })
        )
    })
    const service: Service = {
      requests: Ref.get(requests),
      remaining: Effect.map(Ref.get(requests), (all) => Math.max(0, script.length - all.length)),
      assertFinished: Effect.flatMap(Ref.get(requests), (all) =>
        all.length >= script.length
          ? Effect.void
          : Effect.fail(new ScriptNotFinished({ remaining: script.length - all.length, requests: all.length })))
    }
    return [model, service] as const
  })

/** A layer providing both `LanguageModel` (playing `script`) and {@link ScriptedModel}. */
export const layer = (script: ReadonlyArray<Turn>): Layer.Layer<LanguageModel.LanguageModel | ScriptedModel> =>
  Layer.effectContext(
    Effect.map(make(script), ([model, service]) =>
      Context.make(LanguageModel.LanguageModel, model).pipe(Context.add(ScriptedModel, service)))
  )
