/**
 * Executing the calls of one admitted batch: each call gets exactly one classified
 * result, kept in call order, whatever happens to the others or to the run.
 */
import { Prompt, type Tool } from "@effect/ai"
import { Cause, Clock, Context, Duration, Effect, Exit, Option, type ParseResult, Schema } from "effect"
import * as Authorization from "../Authorization.js"
import { CallTimeout as BudgetCallTimeout } from "../Budget.js"
import * as Idempotency from "../Idempotency.js"
import * as ToolError from "../ToolError.js"
import * as ToolResult from "../ToolResult.js"
import * as HarnessEvent from "../HarnessEvent.js"
import * as Arguments from "./arguments.js"
import * as Telemetry from "./telemetry.js"

/** A tool ready to run: decoders, handler and policies looked up once per run. */
export interface Prepared {
  readonly tool: Tool.Any
  readonly decode: Arguments.Decoder
  readonly encodeSuccess: (value: unknown) => Effect.Effect<unknown, ParseResult.ParseError>
  readonly handler: Tool.Handler<string>
  readonly permission: string | undefined
  readonly mutating: boolean
  readonly timeout: Duration.Duration | undefined
}

/** What a run offers and the policies its calls run under. */
export interface Registry {
  readonly runId: string
  readonly tools: ReadonlyMap<string, Prepared>
  readonly names: ReadonlyArray<string>
  readonly principal: Authorization.PrincipalInfo | undefined
  readonly store: Idempotency.Service | undefined
  /** Bounds each result before it is recorded (the run's tool-output limits). */
  readonly bound: ((result: ToolResult.ToolResult) => Effect.Effect<ToolResult.ToolResult>) | undefined
  readonly emitter: Telemetry.Emitter
  readonly settings: Telemetry.Settings
}

/** Calls of a batch the principal may not run, with the permission each lacks. */
export const denied = (
  calls: ReadonlyArray<Prompt.ToolCallPart>,
  registry: Registry
): ReadonlyArray<{ readonly call: Prompt.ToolCallPart; readonly permission: string }> => {
  const out: Array<{ readonly call: Prompt.ToolCallPart; readonly permission: string }> = []
  for (const call of calls) {
    const permission = registry.tools.get(call.name)?.permission
    if (permission !== undefined && !Authorization.allows(registry.principal, permission)) out.push({ call, permission })
  }
  return out
}

const toPart = (call: Prompt.ToolCallPart, result: ToolResult.ToolResult): Prompt.ToolResultPart =>
  Prompt.makePart("tool-result", {
    id: call.id,
    name: call.name,
    isFailure: result.status !== "success",
    result,
    providerExecuted: false
  })

const fromError = (error: ToolError.ToolError): Idempotency.Stored => ({
  status: ToolError.status(error),
  error: ToolError.toErrorInfo(error)
})

/** A result for a call that never finished. */
export const cancelled = (call: Prompt.ToolCallPart, latencyMs: number): Prompt.ToolResultPart =>
  toPart(call, {
    ...fromError(new ToolError.ToolCancelled({ callId: call.id, name: call.name })),
    metadata: { tool: call.name, callId: call.id, latencyMs }
  })

const isBusinessError = (error: unknown): error is ToolError.BusinessError =>
  error instanceof ToolError.BusinessError

/** Runs the handler and classifies what it did; never fails. */
const invoke = (
  call: Prompt.ToolCallPart,
  prepared: Prepared,
  params: unknown,
  key: string | undefined
): Effect.Effect<Idempotency.Stored> =>
  Effect.gen(function*() {
    const { context, handler } = prepared.handler
    let effect: Effect.Effect<unknown, unknown> = handler(params).pipe(
      Effect.mapInputContext((input: Context.Context<never>) => Context.merge(context, input))
    )
    if (key !== undefined) effect = Effect.provideService(effect, Idempotency.Key, key)
    const timeout = prepared.timeout
    const exit = yield* Effect.exit(
      timeout === undefined ? effect : Effect.timeoutFail(effect, {
        duration: timeout,
        onTimeout: () =>
          new ToolError.ToolTimeout({ callId: call.id, name: call.name, timeoutMillis: Duration.toMillis(timeout) })
      })
    )
    if (Exit.isSuccess(exit)) {
      const encoded = yield* Effect.either(prepared.encodeSuccess(exit.value))
      if (encoded._tag === "Right") return { status: "success", data: encoded.right }
      yield* Effect.logError(`tool '${call.name}' returned a value its success schema rejects`, encoded.left)
      return fromError(new ToolError.ToolDefect({ callId: call.id, name: call.name }))
    }
    const failure = Cause.failureOption(exit.cause)
    if (Option.isSome(failure)) {
      const error = failure.value
      if (error instanceof ToolError.ToolTimeout) return fromError(error)
      if (isBusinessError(error)) return fromError(error)
      // Other typed failures may carry internal detail: the model gets the tag only.
      yield* Effect.logWarning(`tool '${call.name}' failed`, error)
      const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Error"
      return fromError(
        new ToolError.ToolFailure({ callId: call.id, name: call.name, code: "TOOL_FAILED", description: `the tool failed (${tag})` })
      )
    }
    if (Cause.isInterruptedOnly(exit.cause)) return fromError(new ToolError.ToolCancelled({ callId: call.id, name: call.name }))
    yield* Effect.logError(`tool '${call.name}' died`, exit.cause)
    return fromError(new ToolError.ToolDefect({ callId: call.id, name: call.name }))
  })

const idempotencyFailure = (call: Prompt.ToolCallPart, error: Idempotency.IdempotencyError) =>
  fromError(
    new ToolError.IdempotencyFailure({
      callId: call.id,
      name: call.name,
      code: error._tag === "StoreUnavailable"
        ? "STORE_UNAVAILABLE"
        : error._tag === "StoredResultCorrupt"
        ? "STORED_RESULT_CORRUPT"
        : "OUTCOME_UNKNOWN",
      description: error.message
    })
  )

/** The envelope as events and traces carry it: without its data unless payloads are on. */
const observable = (result: ToolResult.ToolResult, settings: Telemetry.Settings): ToolResult.ToolResult => {
  if (settings.recordPayloads || result.data === undefined) return result
  const { data: _data, ...rest } = result
  return rest
}

const ended = (
  registry: Registry,
  step: number,
  call: Prompt.ToolCallPart,
  result: ToolResult.ToolResult,
  durationMs: number
) =>
  registry.emitter.emit((base) =>
    new HarnessEvent.ToolCallEnded({
      ...base,
      step,
      callId: call.id,
      tool: call.name,
      status: result.status,
      result: observable(result, registry.settings),
      durationMs
    })
  )

/** Runs one call to its classified result, in an `execute_tool` span; never fails. */
export const runCall = (
  call: Prompt.ToolCallPart,
  registry: Registry,
  step: number,
  deniedPermission: string | undefined
): Effect.Effect<Prompt.ToolResultPart> =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeMillis
    const startNanos = yield* Clock.currentTimeNanos
    const { recordPayloads } = registry.settings
    yield* registry.emitter.emit((base) =>
      new HarnessEvent.ToolCallStarted({
        ...base,
        step,
        callId: call.id,
        tool: call.name,
        ...(recordPayloads ? { arguments: call.params } : {})
      })
    )
    if (recordPayloads) yield* Effect.annotateCurrentSpan("gen_ai.tool.call.arguments", JSON.stringify(call.params))
    const prepared = registry.tools.get(call.name)
    const key = prepared?.mutating === true ? `${registry.runId}:${call.id}` : undefined
    let replayed = false
    const outcome: Idempotency.Stored = yield* Effect.gen(function*() {
      if (prepared === undefined) {
        return fromError(new ToolError.UnknownTool({ callId: call.id, name: call.name, available: registry.names }))
      }
      if (deniedPermission !== undefined) {
        return fromError(new ToolError.PermissionDenied({ callId: call.id, name: call.name, permission: deniedPermission }))
      }
      const params = yield* Effect.either(prepared.decode(call.params))
      if (params._tag === "Left") {
        return fromError(new ToolError.InvalidArguments({ callId: call.id, name: call.name, ...params.left }))
      }
      if (key === undefined || registry.store === undefined) return yield* invoke(call, prepared, params.right, undefined)
      const once = yield* Effect.either(registry.store.once(key, invoke(call, prepared, params.right, key)))
      if (once._tag === "Left") return idempotencyFailure(call, once.left)
      replayed = once.right.replayed
      return once.right.result
    })
    const latencyMs = (yield* Clock.currentTimeMillis) - start
    const metadata: ToolResult.Metadata = {
      tool: call.name,
      callId: call.id,
      latencyMs,
      ...(key === undefined ? {} : { idempotencyKey: key }),
      ...(replayed ? { replayed } : {})
    }
    const unbounded: ToolResult.ToolResult = { ...outcome, metadata }
    const result = registry.bound === undefined ? unbounded : yield* registry.bound(unbounded)
    // The envelope without its payload, as events carry it.
    if (result.error !== undefined) yield* Effect.annotateCurrentSpan("error.type", result.error.code)
    yield* Effect.annotateCurrentSpan({
      "agent_harness.tool.status": result.status,
      "agent_harness.tool.latency_ms": result.metadata.latencyMs,
      ...(key === undefined ? {} : { "agent_harness.tool.idempotency_key": key }),
      ...(replayed ? { "agent_harness.tool.replayed": true } : {}),
      ...(result.truncated === undefined ? {} : { "agent_harness.tool.original_chars": result.truncated.originalChars })
    })
    if (recordPayloads) yield* Effect.annotateCurrentSpan("gen_ai.tool.call.result", JSON.stringify(result))
    yield* ended(registry, step, call, result, yield* Telemetry.elapsedMs(startNanos))
    return toPart(call, result)
  }).pipe(
    Telemetry.withSpan(`execute_tool ${call.name}`, () => ({
      kind: "internal",
      captureStackTrace: false,
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.type": "function",
        "gen_ai.conversation.id": registry.runId
      }
    }))
  )

/**
 * Runs a batch with bounded concurrency. `record` receives one result per call, in call
 * order, also when the batch is interrupted (unfinished calls are then `cancelled`, and
 * their end is still reported). Calls in `deniedCalls` are answered `permission_denied`
 * without running.
 */
export const runBatch = (
  calls: ReadonlyArray<Prompt.ToolCallPart>,
  registry: Registry,
  step: number,
  concurrency: number,
  deniedCalls: ReadonlyMap<string, string>,
  /** Makes the calls interruptible again inside the caller's uninterruptible region. */
  restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
  record: (results: ReadonlyArray<Prompt.ToolResultPart>) => Effect.Effect<void>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeMillis
    const results: Array<Prompt.ToolResultPart | undefined> = new Array(calls.length)
    const finish = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const parts: Array<Prompt.ToolResultPart> = []
      for (const [index, call] of calls.entries()) {
        let part = results[index]
        if (part === undefined) {
          part = cancelled(call, now - start)
          yield* ended(registry, step, call, part.result as ToolResult.ToolResult, now - start)
        }
        parts.push(part)
      }
      yield* record(parts)
    })
    yield* restore(
      Effect.forEach(
        calls,
        (call, index) =>
          Effect.map(runCall(call, registry, step, deniedCalls.get(call.id)), (part) => void (results[index] = part)),
        { concurrency, discard: true }
      )
    ).pipe(Effect.ensuring(finish))
  })

/** Prepares a tool; `issues` collects malformed declarations. */
export const prepare = (
  tool: Tool.Any,
  handler: Tool.Handler<string>,
  defaultTimeout: Duration.Duration | undefined,
  issues: Array<string>
): Prepared => {
  const { issue, permission } = Authorization.required(tool)
  if (issue !== undefined) issues.push(issue)
  const annotated = Context.getOption(tool.annotations, BudgetCallTimeout)
  let timeout = defaultTimeout
  if (Option.isSome(annotated)) {
    const decoded = Duration.decodeUnknown(annotated.value)
    if (Option.isNone(decoded) || !Duration.isFinite(decoded.value) || Duration.toMillis(decoded.value) <= 0) {
      issues.push(`tool '${tool.name}' declares an invalid timeout ${String(annotated.value)}`)
    } else timeout = decoded.value
  }
  return {
    tool,
    decode: Arguments.decoder(tool),
    encodeSuccess: Schema.encodeUnknown(tool.successSchema as Schema.Schema<unknown, unknown, never>),
    handler,
    permission,
    mutating: Idempotency.isMutating(tool),
    timeout
  }
}

