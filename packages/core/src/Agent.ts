/**
 * The agent loop. The model proposes tool calls; the harness checks the budget, validates
 * the response, admits or refuses each batch as a whole, executes the calls itself and
 * records every step, until the model answers without calling a tool.
 *
 * @example
 * ```ts
 * import { Agent } from "@agent-harness/core"
 * import { Tool, Toolkit } from "@effect/ai"
 * import { Effect, Schema } from "effect"
 *
 * const Add = Tool.make("add", { parameters: { a: Schema.Number, b: Schema.Number }, success: Schema.Number })
 * const Tools = Toolkit.make(Add)
 * const ToolsLive = Tools.toLayer({ add: ({ a, b }) => Effect.succeed(a + b) })
 *
 * const program = Agent.run({ prompt: "What is 2 + 3?", toolkit: Tools, budget: { maxSteps: 4 } })
 * // Effect<Agent.Result, AgentError | InvalidOptions, LanguageModel | handlers of Tools>
 * ```
 */
import { LanguageModel, Prompt, type Response, type Tool, type Toolkit } from "@effect/ai"
import { Context, Duration, Effect, Either, Option, Random } from "effect"
import { BudgetExceeded, DeadlineExceeded, InvalidOptions, ModelError, type AgentError, type RunSnapshot } from "./AgentError.js"
import * as Budget from "./Budget.js"
import * as Dispatch from "./internal/dispatch.js"
import * as Model from "./internal/model.js"
import * as Transcript from "./Transcript.js"
import * as Usage from "./Usage.js"

/** Options of {@link run}. */
export interface Options<Tools extends Record<string, Tool.Any>> {
  /** The user's request for this run. */
  readonly prompt: string
  /** System text; replaces a leading system message of a continued transcript. */
  readonly system?: string | undefined
  /** An earlier transcript to continue; it must satisfy the transcript invariant. */
  readonly transcript?: Transcript.Transcript | undefined
  /** The tools the model may call; their handlers come from the environment. */
  readonly toolkit: Toolkit.Toolkit<Tools>
  readonly budget?: Budget.Input | undefined
  /** How many calls of one batch run at once (default {@link defaultConcurrency}). */
  readonly concurrency?: number | undefined
  /** A caller-chosen run id (default: a random one from Effect's `Random`). */
  readonly runId?: string | undefined
  /**
   * Called after every completed step with the run so far (its transcript always valid),
   * including when a batch is cut short by a deadline or an interruption. Use it to
   * persist a run or to watch it; it runs on the run's fiber, so keep it short.
   */
  readonly onCheckpoint?: ((snapshot: RunSnapshot) => Effect.Effect<void>) | undefined
}

/** A finished run: the snapshot plus the model's answer. */
export interface Result extends RunSnapshot {
  /** The text of the model's last turn. */
  readonly answer: string
  readonly finishReason: Response.FinishReason
}

/** Calls of one batch that run at once unless `concurrency` says otherwise. */
export const defaultConcurrency = 8

/** Tool names every major provider accepts. */
const toolName = /^[A-Za-z0-9_-]{1,64}$/

const makeRunId = Effect.map(Random.nextIntBetween(0, 2 ** 31 - 1), (n) => `run_${n.toString(36).padStart(6, "0")}`)

interface Setup {
  readonly budget: Budget.Budget
  readonly concurrency: number
  readonly registry: Dispatch.Registry
  readonly wire: Model.Wire
  readonly messages: Array<Prompt.Message>
}

const setup = <Tools extends Record<string, Tool.Any>>(
  options: Options<Tools>,
  handlers: Context.Context<never>
): Either.Either<Setup, InvalidOptions> => {
  const issues: Array<string> = []
  const budget = Budget.make(options.budget)
  if (Either.isLeft(budget)) issues.push(...budget.left)
  const concurrency = options.concurrency ?? defaultConcurrency
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    issues.push(`concurrency must be an integer >= 1, got ${String(options.concurrency)}`)
  }
  if (options.prompt.trim().length === 0) issues.push("prompt must not be empty")
  const tools = new Map<string, Dispatch.Prepared>()
  for (const [key, tool] of Object.entries(options.toolkit.tools)) {
    if (!toolName.test(tool.name)) {
      issues.push(`tool name '${tool.name}' must be 1-64 letters, digits, '_' or '-'`)
    } else if (key !== tool.name || tools.has(tool.name)) {
      issues.push(`tool name '${tool.name}' is used by more than one tool`)
    }
    const handler = Context.getOption(handlers, Context.GenericTag<Tool.Handler<string>>(tool.id))
    if (Option.isNone(handler)) issues.push(`tool '${tool.name}' has no handler in the environment`)
    else tools.set(tool.name, Dispatch.prepare(tool, handler.value))
  }
  const messages: Array<Prompt.Message> = [...(options.transcript ?? [])]
  if (options.transcript !== undefined) {
    const checked = Transcript.check(options.transcript)
    if (Either.isLeft(checked)) issues.push(checked.left.message)
  }
  if (options.system !== undefined) {
    const system = Prompt.makeMessage("system", { content: options.system })
    if (messages[0]?.role === "system") messages[0] = system
    else messages.unshift(system)
  }
  messages.push(Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: options.prompt })] }))
  if (issues.length > 0 || Either.isLeft(budget)) return Either.left(new InvalidOptions({ issues }))
  return Either.right({
    budget: budget.right,
    concurrency,
    registry: { tools, names: [...tools.keys()] },
    wire: Model.makeWire(options.toolkit.tools),
    messages
  })
}

/** The mutable state of one run; only the run's own fiber writes it. */
class RunState {
  steps = 0
  toolCalls = 0
  usage: Usage.Usage = Usage.empty
  readonly callIds: Set<string>
  constructor(readonly runId: string, readonly messages: Array<Prompt.Message>) {
    this.callIds = Transcript.callIds(messages)
  }
  snapshot(): RunSnapshot {
    return {
      runId: this.runId,
      transcript: this.messages.slice(),
      steps: this.steps,
      toolCalls: this.toolCalls,
      usage: this.usage
    }
  }
}

const tokenBudgets = [
  ["inputTokens", "maxInputTokens"],
  ["outputTokens", "maxOutputTokens"],
  ["totalTokens", "maxTotalTokens"]
] as const

/** A token budget already used up or exceeded, or a figure it needs that was not reported. */
const checkTokens = (state: RunState, budget: Budget.Budget, strict: boolean): Effect.Effect<void, AgentError> => {
  for (const [kind, limitKey] of tokenBudgets) {
    const limit = budget[limitKey]
    if (limit === undefined) continue
    const used = state.usage[kind]
    if (used === undefined) {
      if (state.usage.calls === 0) continue
      return Effect.fail(new ModelError({
        reason: "malformed_output",
        description: `the model did not report ${kind}, which budget.${limitKey} needs`,
        snapshot: state.snapshot()
      }))
    }
    if (strict ? used > limit : used >= limit) {
      return Effect.fail(new BudgetExceeded({ budget: kind, limit, requested: used, snapshot: state.snapshot() }))
    }
  }
  return Effect.void
}

const loop = (
  state: RunState,
  config: Setup,
  model: LanguageModel.Service,
  checkpoint: (snapshot: RunSnapshot) => Effect.Effect<void>
): Effect.Effect<Result, AgentError> =>
  Effect.gen(function*() {
    const { budget } = config
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

      const modelError = (failure: Model.ModelFailure) =>
        new ModelError({ ...failure, snapshot: state.snapshot() })
      const parts = yield* Effect.mapError(
        Model.call(model, config.wire, Prompt.fromMessages(state.messages.slice())),
        modelError
      )
      const turn = yield* Either.mapLeft(Model.toTurn(parts, state.callIds), modelError)
      state.steps += 1
      const usage = Usage.add(state.usage, turn.usage ?? {})
      if (Either.isLeft(usage)) return yield* modelError({ reason: "malformed_output", description: usage.left })
      state.usage = usage.right
      yield* checkTokens(state, budget, true)

      if (turn.calls.length === 0) {
        if (turn.message !== undefined) state.messages.push(turn.message)
        yield* checkpoint(state.snapshot())
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
      state.messages.push(turn.message!)
      yield* Dispatch.runBatch(turn.calls, config.registry, config.concurrency, (results) =>
        Effect.suspend(() => {
          state.messages.push(Prompt.makeMessage("tool", { content: results }))
          return checkpoint(state.snapshot())
        }))
    }
  })

/**
 * Runs an agent to its answer, or to the first error that ends it.
 *
 * Needs the `LanguageModel` to call and the handlers of `options.toolkit` (for example
 * from `toolkit.toLayer(...)`). Tool-call problems (unknown tool, invalid or non-JSON
 * arguments, a failing or dying handler) never end the run: they become results the
 * model reads. Interrupting the returned effect interrupts the model call or the tools
 * in flight; the last checkpoint then still has one result for every recorded call.
 */
export const run = <Tools extends Record<string, Tool.Any>>(
  options: Options<Tools>
): Effect.Effect<
  Result,
  AgentError | InvalidOptions,
  LanguageModel.LanguageModel | Tool.HandlersFor<Tools> | Tool.Requirements<Tools[keyof Tools]>
> =>
  Effect.gen(function*() {
    const handlers = yield* Effect.context<never>()
    const config = yield* setup(options, handlers)
    const model = yield* LanguageModel.LanguageModel
    const runId = options.runId ?? (yield* makeRunId)
    const state = new RunState(runId, config.messages)
    const checkpoint = options.onCheckpoint ?? (() => Effect.void)
    const body = loop(state, config, model, checkpoint)
    const timeout = config.budget.timeout
    if (timeout === undefined) return yield* body
    // The snapshot is taken after the timeout has interrupted the body and its
    // finalizers have recorded the cancelled calls.
    const outcome = yield* Effect.timeoutOption(body, timeout)
    if (Option.isSome(outcome)) return outcome.value
    return yield* new DeadlineExceeded({ timeoutMillis: Duration.toMillis(timeout), snapshot: state.snapshot() })
  })
