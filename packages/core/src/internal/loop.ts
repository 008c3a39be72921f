/** The steps of a run (see DESIGN.md, "The loop"). */
import { type LanguageModel, Prompt, type Tokenizer } from "@effect/ai"
import type { Result } from "../Agent.js"
import { Effect, Either, Exit } from "effect"
import { type AgentError, BudgetExceeded, ContextLimit, ModelError, type RunSnapshot } from "../AgentError.js"
import type * as Budget from "../Budget.js"
import * as ContextWindow from "../ContextWindow.js"
import * as Transcript from "../Transcript.js"
import * as Usage from "../Usage.js"
import * as Dispatch from "./dispatch.js"
import * as Model from "./model.js"
import type { RunState } from "./state.js"

/** Everything a run fixed before its first step. */
export interface Config {
  readonly budget: Budget.Budget
  readonly concurrency: number
  readonly registry: Dispatch.Registry
  readonly wire: Model.Wire
  readonly window: ContextWindow.Options
  readonly tokenizer: Tokenizer.Service | undefined
  readonly checkpoint: (snapshot: RunSnapshot) => Effect.Effect<void>
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
  new ModelError({ ...failure, snapshot: state.snapshot() })

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

/** Runs steps until the model answers or something ends the run. */
export const loop = (state: RunState, config: Config, model: LanguageModel.Service): Effect.Effect<Result, AgentError> =>
  Effect.gen(function*() {
    const { budget } = config
    const fail = modelError(state)
    const record = (message: Prompt.Message) =>
      Effect.mapError(state.record(message), (e) => fail(Model.fromAiError(e)))
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
      const checked = Transcript.check(view)
      if (Either.isLeft(checked)) return yield* Effect.dieMessage(`harness built an invalid view: ${checked.left.message}`)
      const parts = yield* Effect.mapError(Model.call(model, config.wire, Prompt.fromMessages(view)), fail)
      const turn = yield* Either.mapLeft(Model.toTurn(parts, state.callIds), fail)
      state.steps += 1
      const usage = Usage.add(state.usage, turn.usage ?? {})
      if (Either.isLeft(usage)) return yield* fail({ reason: "malformed_output", description: usage.left })
      state.usage = usage.right
      yield* checkTokens(state, budget, true)

      if (turn.calls.length === 0) {
        if (turn.message !== undefined) yield* record(turn.message)
        yield* config.checkpoint(state.snapshot())
        return { ...state.snapshot(), answer: turn.text, finishReason: turn.finishReason }
      }
      const requested = state.toolCalls + turn.calls.length
      if (requested > budget.maxToolCalls) {
        return yield* new BudgetExceeded({
          budget: "toolCalls",
          limit: budget.maxToolCalls,
          requested,
          snapshot: state.snapshot()
        })
      }
      state.toolCalls = requested
      for (const call of turn.calls) state.callIds.add(call.id)
      yield* record(turn.message!)
      // Measuring the results can fail (a tokenizer error); they are recorded first
      // either way, so the transcript stays valid, and the failure is raised after.
      let measured: Exit.Exit<void, AgentError> = Exit.void
      yield* Dispatch.runBatch(turn.calls, config.registry, config.concurrency, (results) =>
        record(Prompt.makeMessage("tool", { content: results })).pipe(
          Effect.exit,
          Effect.flatMap((exit) => {
            measured = exit
            return config.checkpoint(state.snapshot())
          })
        ))
      yield* measured
    }
  })
