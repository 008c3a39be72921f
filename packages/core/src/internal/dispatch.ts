/**
 * Executing the calls of one admitted batch: each call gets exactly one classified
 * result, kept in call order, whatever happens to the others or to the run.
 */
import { Prompt, type Tool } from "@effect/ai"
import { Cause, Clock, Context, Effect, Exit, Option, ParseResult, Predicate, Schema } from "effect"
import * as ToolError from "../ToolError.js"
import * as ToolResult from "../ToolResult.js"
import * as Arguments from "./arguments.js"

/** A tool ready to run: decoders and handler looked up once per run. */
export interface Prepared {
  readonly tool: Tool.Any
  readonly decode: Arguments.Decoder
  readonly encodeSuccess: (value: unknown) => Effect.Effect<unknown, ParseResult.ParseError>
  readonly handler: Tool.Handler<string>
}

export const prepare = (tool: Tool.Any, handler: Tool.Handler<string>): Prepared => ({
  tool,
  decode: Arguments.decoder(tool),
  encodeSuccess: Schema.encodeUnknown(tool.successSchema as Schema.Schema<unknown, unknown, never>),
  handler
})

/** What the run offers: tools by name, and their names for "did you mean" messages. */
export interface Registry {
  readonly tools: ReadonlyMap<string, Prepared>
  readonly names: ReadonlyArray<string>
  /** Bounds each result before it is recorded (the run's tool-output limits). */
  readonly bound: ((result: ToolResult.ToolResult) => Effect.Effect<ToolResult.ToolResult>) | undefined
}

const toPart = (call: Prompt.ToolCallPart, result: ToolResult.ToolResult): Prompt.ToolResultPart =>
  Prompt.makePart("tool-result", {
    id: call.id,
    name: call.name,
    isFailure: result.status !== "success",
    result,
    providerExecuted: false
  })

const failed = (call: Prompt.ToolCallPart, error: ToolError.ToolError, latencyMs: number) =>
  toPart(
    call,
    ToolResult.failure(ToolError.status(error), ToolError.toErrorInfo(error), {
      tool: call.name,
      callId: call.id,
      latencyMs
    })
  )

/** A result for a call that never finished. */
export const cancelled = (call: Prompt.ToolCallPart, latencyMs: number): Prompt.ToolResultPart =>
  failed(call, new ToolError.ToolCancelled({ callId: call.id, name: call.name }), latencyMs)

const describeFailure = (error: unknown): { code: string; description: string } => {
  const tag = Predicate.hasProperty(error, "_tag") && typeof error._tag === "string" ? error._tag : undefined
  const message = Predicate.hasProperty(error, "message") && typeof error.message === "string" && error.message.length > 0
    ? error.message
    : undefined
  return {
    code: "TOOL_FAILED",
    description: [tag, message].filter((s) => s !== undefined).join(": ") || "the tool failed"
  }
}

const execute = (
  call: Prompt.ToolCallPart,
  registry: Registry
): Effect.Effect<ToolResult.ToolResult | ToolError.ToolError> =>
  Effect.gen(function*() {
    const prepared = registry.tools.get(call.name)
    if (prepared === undefined) {
      return new ToolError.UnknownTool({ callId: call.id, name: call.name, available: registry.names })
    }
    const params = yield* Effect.either(prepared.decode(call.params))
    if (params._tag === "Left") {
      return new ToolError.InvalidArguments({ callId: call.id, name: call.name, ...params.left })
    }
    const { context, handler } = prepared.handler
    const exit = yield* Effect.exit(
      handler(params.right).pipe(Effect.mapInputContext((input: Context.Context<never>) => Context.merge(context, input)))
    )
    if (Exit.isSuccess(exit)) {
      const encoded = yield* Effect.either(prepared.encodeSuccess(exit.value))
      if (encoded._tag === "Right") return ToolResult.success(encoded.right, { tool: call.name, callId: call.id, latencyMs: 0 })
      yield* Effect.logError(`tool '${call.name}' returned a value its success schema rejects`, encoded.left)
      return new ToolError.ToolDefect({ callId: call.id, name: call.name })
    }
    const failure = Cause.failureOption(exit.cause)
    if (Option.isSome(failure)) {
      return new ToolError.ToolFailure({ callId: call.id, name: call.name, ...describeFailure(failure.value) })
    }
    if (Cause.isInterruptedOnly(exit.cause)) {
      return new ToolError.ToolCancelled({ callId: call.id, name: call.name })
    }
    yield* Effect.logError(`tool '${call.name}' died`, exit.cause)
    return new ToolError.ToolDefect({ callId: call.id, name: call.name })
  })

/** Runs one call to its classified result; never fails. */
export const runCall = (call: Prompt.ToolCallPart, registry: Registry): Effect.Effect<Prompt.ToolResultPart> =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeMillis
    const outcome = yield* execute(call, registry)
    const latencyMs = (yield* Clock.currentTimeMillis) - start
    const metadata = { tool: call.name, callId: call.id, latencyMs }
    const result = "status" in outcome
      ? { ...outcome, metadata }
      : ToolResult.failure(ToolError.status(outcome), ToolError.toErrorInfo(outcome), metadata)
    return toPart(call, registry.bound === undefined ? result : yield* registry.bound(result))
  })

/**
 * Runs a batch with bounded concurrency. `record` receives one result per call, in call
 * order, also when the batch is interrupted (unfinished calls are then `cancelled`).
 */
export const runBatch = (
  calls: ReadonlyArray<Prompt.ToolCallPart>,
  registry: Registry,
  concurrency: number,
  record: (results: ReadonlyArray<Prompt.ToolResultPart>) => Effect.Effect<void>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeMillis
    const results: Array<Prompt.ToolResultPart | undefined> = new Array(calls.length)
    yield* Effect.forEach(
      calls,
      (call, index) => Effect.map(runCall(call, registry), (part) => void (results[index] = part)),
      { concurrency, discard: true }
    ).pipe(
      Effect.ensuring(Effect.flatMap(Clock.currentTimeMillis, (now) =>
        record(calls.map((call, index) => results[index] ?? cancelled(call, now - start)))))
    )
  })
