/** The steps of a run (see DESIGN.md, "The loop"). */
import { type LanguageModel, Prompt, type Tokenizer } from "@effect/ai"
import type { Result } from "../Agent.js"
import { Clock, Effect, Either, Exit, Schema } from "effect"
import { type AgentError, BudgetExceeded, ContextLimit, ModelError, PermissionDenied, type RunSnapshot } from "../AgentError.js"
import type * as Authorization from "../Authorization.js"
import type * as Budget from "../Budget.js"
import type * as Retry from "../Retry.js"
import * as ContextWindow from "../ContextWindow.js"
import * as HarnessEvent from "../HarnessEvent.js"
import * as Transcript from "../Transcript.js"
import * as Usage from "../Usage.js"
import * as Dispatch from "./dispatch.js"
import * as Model from "./model.js"
import { retrying } from "./retry.js"
import type { RunState } from "./state.js"
import * as Telemetry from "./telemetry.js"

/** Everything a run fixed before its first step. */
export interface Config {
  readonly budget: Budget.Budget
  readonly permissionPolicy: Authorization.Policy
  readonly concurrency: number
  readonly registry: Dispatch.Registry
  readonly wire: Model.Wire
  readonly window: ContextWindow.Options
  readonly tokenizer: Tokenizer.Service | undefined
  readonly checkpoint: (snapshot: RunSnapshot) => Effect.Effect<void>
  readonly retry: Retry.Policy
  /** When the run's budget.timeout expires, in epoch ms on `Clock`. */
  readonly deadline: number | undefined
}

const tokenBudgets = [
  ["inputTokens", "maxInputTokens"],
  ["outputTokens", "maxOutputTokens"],
  ["totalTokens", "maxTotalTokens"]
] as const

/** A token budget used up (`strict`: exceeded), or a figure it needs that was not reported. */
const checkTokens = (state: RunState, budget: Budget.Budget, strict: boolean): Effect.Effect<void, AgentError> => {
  for (const [kind, limitKey] of tokenBudgets) {
    const limit = budget[limitKey]
    if (limit === undefined) continue
    const used = state.usage[kind]
    if (used === undefined) {
      if (state.usage.calls === 0) continue
      return Effect.fail(
        new ModelError({
          reason: "malformed_output",
          description: `the model did not report ${kind}, which budget.${limitKey} needs`,
          snapshot: state.snapshot()
        })
      )
    }
    if (strict ? used > limit : used >= limit) {
      return Effect.fail(new BudgetExceeded({ budget: kind, limit, requested: used, snapshot: state.snapshot() }))
    }
  }
  return Effect.void
}

export const modelError = (state: RunState) => (failure: Model.ModelFailure) =>
  new ModelError({
    reason: failure.reason,
    description: failure.description,
    ...(failure.cause === undefined ? {} : { cause: failure.cause }),
    snapshot: state.snapshot()
  })

/** The messages to send: the whole transcript, or the window's view of it. */
const buildView = (state: RunState, config: Config): Effect.Effect<ReadonlyArray<Prompt.Message>, AgentError> =>
  Effect.gen(function*() {
    const { compact, maxChars, maxTokens } = config.window
    const limit = maxTokens ?? maxChars
    if (limit === undefined) return state.messages.slice()
    const unit = maxTokens === undefined ? "chars" : "tokens"
    const tooLarge = (required: number) => new ContextLimit({ unit, limit, required, snapshot: state.snapshot() })
    const choose = () =>
      ContextWindow.select(state.index, limit, state.summary?.size ?? 0, state.summary?.coversUpTo ?? 0)
    let selection = yield* Either.mapLeft(choose(), (e) => tooLarge(e.required))
    const from = state.summary?.coversUpTo ?? selection.pinnedEnd
    if (compact !== undefined && selection.start > from) {
      // Older groups fell out: fold them (and the summary before them) into a new summary.
      const dropped = state.messages.slice(from, selection.start)
      const message = yield* compact(state.summary === undefined ? dropped : [state.summary.message, ...dropped])
      const size = yield* Effect.mapError(state.measure!(message), (e) => modelError(state)(Model.fromAiError(e)))
      state.summary = { message, size, coversUpTo: selection.start }
      // Room for the summary may push out more groups; they are folded in next time.
      selection = yield* Either.mapLeft(choose(), (e) => tooLarge(e.required))
    }
    return ContextWindow.view(state.messages, selection, state.summary?.message)
  })

const recordOrFail = (state: RunState, message: Prompt.Message, always = false) =>
  Effect.mapError(state.record(message, always), (e) => modelError(state)(Model.fromAiError(e)))

/**
 * Admits a batch whole or not at all (tool budget, then permissions), records the turn
 * when it is not already recorded (`turn`), checkpoints, runs the calls and records
 * their results.
 */
const runBatch = (
  state: RunState,
  config: Config,
  calls: ReadonlyArray<Prompt.ToolCallPart>,
  turn: Prompt.Message | undefined
): Effect.Effect<void, AgentError> =>
  Effect.gen(function*() {
    const requested = state.toolCalls + calls.length
    if (requested > config.budget.maxToolCalls) {
      return yield* new BudgetExceeded({
        budget: "toolCalls",
        limit: config.budget.maxToolCalls,
        requested,
        snapshot: state.snapshot()
      })
    }
    const denied = Dispatch.denied(calls, config.registry)
    const first = denied[0]
    if (first !== undefined && config.permissionPolicy === "stop") {
      const userId = config.registry.principal?.userId
      return yield* new PermissionDenied({
        callId: first.call.id,
        tool: first.call.name,
        permission: first.permission,
        ...(userId === undefined ? {} : { userId }),
        snapshot: state.snapshot()
      })
    }
    state.toolCalls = requested
    for (const call of calls) state.callIds.add(call.id)
    // From recording the turn to recording its results nothing may interrupt, except
    // the calls themselves: so every snapshot, even of an interrupted run, has one
    // result for each recorded call.
    let measured: Exit.Exit<void, AgentError> = Exit.void
    const deniedCalls = new Map(denied.map((d) => [d.call.id, d.permission] as const))
    yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        if (turn !== undefined) {
          yield* recordOrFail(state, turn)
          // The turn is on record before any call runs, so a run that stops here can be
          // resumed from this checkpoint without asking the model again.
          yield* config.checkpoint(state.snapshot())
        }
        // Measuring the results can fail (a tokenizer error); they are recorded anyway,
        // so the transcript stays valid, and the failure is raised after.
        yield* Dispatch.runBatch(calls, config.registry, state.steps, config.concurrency, deniedCalls, restore, (results) =>
          recordOrFail(state, Prompt.makeMessage("tool", { content: results }), true).pipe(
            Effect.exit,
            Effect.flatMap((exit) => {
              measured = exit
              return config.checkpoint(state.snapshot())
            })
          ))
      })
    )
    yield* measured
  })

/**
 * One model call in a `chat` span: the request, the envelope check, the events and the
 * GenAI metrics. Counts the step whether or not the call succeeds.
 */
const modelStep = (
  state: RunState,
  config: Config,
  model: LanguageModel.Service,
  view: ReadonlyArray<Prompt.Message>
): Effect.Effect<Model.ModelTurn, AgentError> =>
  Effect.gen(function*() {
    const { emitter, settings } = config.registry
    const step = state.steps + 1
    const start = yield* Clock.currentTimeNanos
    yield* emitter.emit((base) => new HarnessEvent.ModelCallStarted({ ...base, step, messages: view.length }))
    if (settings.recordPayloads) {
      yield* Effect.annotateCurrentSpan("gen_ai.input.messages", JSON.stringify(Schema.encodeSync(Transcript.Transcript)(view)))
    }
    const prompt = Prompt.fromMessages(view)
    const call = retrying(Model.call(model, config.wire, prompt), config.retry, config.deadline, (retry) =>
      Effect.zipRight(
        Telemetry.spanEvent("gen_ai.client.retry", {
          "gen_ai.client.retry.attempt": retry.attempt,
          "gen_ai.client.retry.delay_ms": retry.delayMs,
          "error.type": retry.failure.reason
        }),
        emitter.emit((base) =>
          new HarnessEvent.ModelCallRetrying({
            ...base,
            step,
            attempt: retry.attempt,
            reason: retry.failure.reason,
            description: retry.failure.description,
            delayMs: retry.delayMs,
            ...(retry.retryAfterMs === undefined ? {} : { retryAfterMs: retry.retryAfterMs })
          })
        )
      ))
    const outcome = yield* Effect.either(
      Effect.flatMap(call, (parts) =>
        Either.flatMap(Model.toTurn(parts, state.callIds), (turn) =>
          Either.match(Usage.add(state.usage, turn.usage ?? {}), {
            onLeft: (description): Either.Either<never, Model.ModelFailure> =>
              Either.left({ reason: "malformed_output", description }),
            onRight: (total) => Either.right({ turn, total })
          }))).pipe(
        // A call cut short by a deadline or the caller still gets its end event.
        Effect.onInterrupt(() =>
          Effect.flatMap(Telemetry.elapsedMs(start), (durationMs) =>
            emitter.emit((base) => new HarnessEvent.ModelCallFailed({ ...base, step, reason: "interrupted", durationMs }))))
      )
    )
    const durationMs = yield* Telemetry.elapsedMs(start)
    if (Either.isLeft(outcome)) {
      const failure = outcome.left
      yield* Effect.annotateCurrentSpan("error.type", failure.reason)
      yield* emitter.emit((base) => new HarnessEvent.ModelCallFailed({ ...base, step, reason: failure.reason, durationMs }))
      yield* Telemetry.recordModelMetrics(settings, durationMs, undefined, failure.reason)
      return yield* modelError(state)(failure)
    }
    const { total, turn } = outcome.right
    state.steps = step
    state.usage = total
    const usage = Usage.normalize(turn.usage ?? {})
    yield* Effect.annotateCurrentSpan({
      "gen_ai.response.finish_reasons": [turn.finishReason],
      ...(usage.inputTokens === undefined ? {} : { "gen_ai.usage.input_tokens": usage.inputTokens }),
      ...(usage.outputTokens === undefined ? {} : { "gen_ai.usage.output_tokens": usage.outputTokens })
    })
    yield* emitter.emit((base) =>
      new HarnessEvent.ModelCallEnded({
        ...base,
        step,
        finishReason: turn.finishReason,
        usage: definedOnly(usage),
        toolCalls: turn.calls.length,
        durationMs
      })
    )
    yield* Telemetry.recordModelMetrics(settings, durationMs, usage, undefined)
    return turn
  }).pipe(
    Telemetry.withSpan(`chat ${config.registry.settings.model ?? "model"}`, () => ({
      kind: "client",
      captureStackTrace: false,
      attributes: { ...Telemetry.modelAttributes(config.registry.settings), "gen_ai.conversation.id": state.runId }
    }))
  )

const definedOnly = (usage: Usage.Reported): typeof HarnessEvent.CallUsage.Type => {
  const out: { -readonly [K in keyof Usage.Reported]?: number } = {}
  for (const [key, value] of Object.entries(usage) as Array<[keyof Usage.Reported, number | undefined]>) {
    if (typeof value === "number") out[key] = value
  }
  return out
}

/**
 * Runs steps until the model answers or something ends the run. `waiting` are calls of
 * a resumed transcript's last turn that have no results yet: they run first.
 */
export const loop = (
  state: RunState,
  config: Config,
  model: LanguageModel.Service,
  waiting: ReadonlyArray<Prompt.ToolCallPart>
): Effect.Effect<Result, AgentError> =>
  Effect.gen(function*() {
    const { budget } = config
    const record = (message: Prompt.Message) => recordOrFail(state, message)
    if (waiting.length > 0) yield* runBatch(state, config, waiting, undefined)
    while (true) {
      if (state.steps >= budget.maxSteps) {
        return yield* new BudgetExceeded({
          budget: "steps",
          limit: budget.maxSteps,
          requested: state.steps + 1,
          snapshot: state.snapshot()
        })
      }
      yield* checkTokens(state, budget, false)

      const view = yield* buildView(state, config)
      // Every request is checked: a broken view here is a harness bug, not the model's.
      // Without a window the view is the whole transcript, which only grows.
      const windowed = config.window.maxChars !== undefined || config.window.maxTokens !== undefined
      const checked = windowed ? Transcript.check(view) : state.checkTranscript(view)
      if (Either.isLeft(checked)) return yield* Effect.dieMessage(`harness built an invalid view: ${checked.left.message}`)
      const turn = yield* modelStep(state, config, model, view)
      yield* checkTokens(state, budget, true)

      if (turn.calls.length === 0) {
        if (turn.message !== undefined) yield* record(turn.message)
        yield* config.checkpoint(state.snapshot())
        return { ...state.snapshot(), answer: turn.text, finishReason: turn.finishReason }
      }
      yield* runBatch(state, config, turn.calls, turn.message!)
    }
  })
