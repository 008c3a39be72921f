/**
 * The agent loop. The model proposes tool calls; the harness checks the budget, builds
 * the view of the transcript that fits, validates the response, admits or refuses each
 * batch as a whole, executes the calls itself and records every step, until the model
 * answers without calling a tool.
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
import { LanguageModel, Prompt, type Response, type Tool, Tokenizer, type Toolkit } from "@effect/ai"
import { Model as AiModel } from "@effect/ai"
import { Cause, Clock, Context, Duration, Effect, Either, Exit, Mailbox, Option, Random, Stream } from "effect"
import { type AgentError, DeadlineExceeded, InvalidOptions, type RunSnapshot } from "./AgentError.js"
import * as Authorization from "./Authorization.js"
import * as Budget from "./Budget.js"
import * as ContextWindow from "./ContextWindow.js"
import * as HarnessEvent from "./HarnessEvent.js"
import * as Idempotency from "./Idempotency.js"
import * as Dispatch from "./internal/dispatch.js"
import * as Loop from "./internal/loop.js"
import * as Model from "./internal/model.js"
import { type Measure, RunState } from "./internal/state.js"
import * as Telemetry from "./internal/telemetry.js"
import * as ToolOutput from "./ToolOutput.js"
import * as Retry from "./Retry.js"
import * as Transcript from "./Transcript.js"

/** Options of {@link run}. */
export interface Options<Tools extends Record<string, Tool.Any>> {
  /**
   * The user's request for this run. May be left out only to resume a `transcript`
   * that ends with a turn waiting for its tool results.
   */
  readonly prompt?: string | undefined
  /** System text; replaces a leading system message of a continued transcript. */
  readonly system?: string | undefined
  /**
   * An earlier transcript to continue; it must satisfy the transcript invariant, except
   * that it may end with an assistant turn whose calls have no results yet (a checkpoint
   * taken just before they ran). Those calls then run first, under the same `runId`, so
   * that mutating tools replay their recorded results instead of running again.
   */
  readonly transcript?: Transcript.Transcript | undefined
  /** The tools the model may call; their handlers come from the environment. */
  readonly toolkit: Toolkit.Toolkit<Tools>
  readonly budget?: Budget.Input | undefined
  /**
   * How model calls that failed for a passing reason (429, 5xx, a dropped connection)
   * are retried; see {@link Retry}. Default {@link Retry.defaults}; `false`: never.
   */
  readonly retry?: Retry.Input | false | undefined
  /**
   * What a batch with a call the principal may not make does (default `stop`); see
   * {@link Authorization.Policy}. The principal comes from the `Authorization.Principal`
   * service; without one, no tool that requires a permission runs.
   */
  readonly permissionPolicy?: Authorization.Policy | undefined
  /** How many calls of one batch run at once (default {@link defaultConcurrency}). */
  readonly concurrency?: number | undefined
  /** What the model is sent of a long transcript; by default all of it. */
  readonly context?: ContextWindow.Options | undefined
  /** Bound on each tool result's payload, in characters (see `ToolOutput.bound`). */
  readonly maxToolResultChars?: number | undefined
  /** Bound on each tool result's payload, in tokens of the `Tokenizer` in the environment. */
  readonly maxToolResultTokens?: number | undefined
  /**
   * How the run names itself in spans and events. `provider` defaults to `@effect/ai`'s
   * `Model.ProviderName` when the model layer provides it. `recordPayloads` (default
   * false) lets events and spans carry the prompt, the arguments and the results.
   */
  readonly telemetry?: {
    readonly agentName?: string | undefined
    readonly provider?: string | undefined
    readonly model?: string | undefined
    readonly recordPayloads?: boolean | undefined
  } | undefined
  /**
   * Receives every event of the run (see {@link HarnessEvent}), one at a time in sequence
   * order, on the run's fibers: a slow observer slows the run, so keep it short.
   */
  readonly onEvent?: ((event: HarnessEvent.HarnessEvent) => Effect.Effect<unknown, unknown>) | undefined
  /** Told when `onEvent` fails or dies; the run goes on unchanged either way. */
  readonly onObserverError?: ((cause: Cause.Cause<unknown>) => Effect.Effect<void>) | undefined
  /** A caller-chosen run id (default: a random one from Effect's `Random`). */
  readonly runId?: string | undefined
  /**
   * Called with the run so far whenever the transcript changes: after an assistant turn
   * is recorded (before its calls run; the transcript then ends with that turn waiting),
   * after its results are recorded (also when the batch was cut short by a deadline or an
   * interruption: unfinished calls are `cancelled`), and after the final answer. Store the
   * snapshot to resume a run; it runs on the run's fiber, so keep it short.
   */
  readonly onCheckpoint?: ((snapshot: RunSnapshot) => Effect.Effect<void>) | undefined
  /**
   * Ask the model with `streamText` and collect each response before acting on it
   * (default false: `generateText`). The run sees the same turns either way; use it for
   * providers or proxies that answer long requests only as a stream. A streamed response
   * naming an unknown tool fails the step (`malformed_output`) instead of becoming an
   * `UnknownTool` result, because `@effect/ai` drops the rest of such a stream.
   */
  readonly streaming?: boolean | undefined
}

/** A finished run: the snapshot plus the model's answer and why it stopped. */
export interface Result extends RunSnapshot {
  /** The text of the model's last turn. */
  readonly answer: string
  readonly finishReason: Response.FinishReason
}

/**
 * What a run needs from the environment: the model, the toolkit's handlers, and the
 * services the tools declare (except the idempotency key, which the harness provides).
 */
export type Requirements<Tools extends Record<string, Tool.Any>> =
  | LanguageModel.LanguageModel
  | Tool.HandlersFor<Tools>
  | Exclude<Tool.Requirements<Tools[keyof Tools]>, Idempotency.Key>

/** Calls of one batch that run at once unless `concurrency` says otherwise. */
export const defaultConcurrency = 8

/** Tool names every major provider accepts. */
const toolName = /^[A-Za-z0-9_-]{1,64}$/

const makeRunId = Effect.map(Random.nextIntBetween(0, 2 ** 31 - 1), (n) => `run_${n.toString(36).padStart(6, "0")}`)

const positiveInt = (name: string, value: number | undefined, issues: Array<string>) => {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) {
    issues.push(`${name} must be an integer >= 1, got ${String(value)}`)
  }
}

const tokenCount = (tokenizer: Tokenizer.Service): Measure => (message) =>
  Effect.map(tokenizer.tokenize(Prompt.fromMessages([message])), (tokens) => tokens.length)

interface Environment {
  readonly runId: string
  readonly emitter: Telemetry.Emitter
  readonly settings: Telemetry.Settings
  readonly handlers: Context.Context<never>
  readonly tokenizer: Tokenizer.Service | undefined
  readonly principal: Authorization.PrincipalInfo | undefined
  readonly store: Idempotency.Service | undefined
}

interface Checked {
  readonly config: Omit<Loop.Config, "checkpoint" | "tokenizer" | "deadline">
  readonly waiting: ReadonlyArray<Prompt.ToolCallPart>
}

const checkOptions = <Tools extends Record<string, Tool.Any>>(
  options: Options<Tools>,
  env: Environment
): Either.Either<Checked, InvalidOptions> => {
  const issues: Array<string> = []
  const budget = Budget.make(options.budget)
  if (Either.isLeft(budget)) issues.push(...budget.left)
  const retry = Retry.make(options.retry)
  if (Either.isLeft(retry)) issues.push(...retry.left)
  const concurrency = options.concurrency ?? defaultConcurrency
  positiveInt("concurrency", concurrency, issues)
  positiveInt("context.maxChars", options.context?.maxChars, issues)
  positiveInt("context.maxTokens", options.context?.maxTokens, issues)
  positiveInt("maxToolResultChars", options.maxToolResultChars, issues)
  positiveInt("maxToolResultTokens", options.maxToolResultTokens, issues)
  if (options.context?.maxChars !== undefined && options.context.maxTokens !== undefined) {
    issues.push("context takes maxChars or maxTokens, not both")
  }
  if (env.tokenizer === undefined) {
    if (options.context?.maxTokens !== undefined) issues.push("context.maxTokens needs a Tokenizer in the environment")
    if (options.maxToolResultTokens !== undefined) issues.push("maxToolResultTokens needs a Tokenizer in the environment")
  }
  const policy = options.permissionPolicy ?? "stop"
  if (policy !== "stop" && policy !== "feedback") issues.push(`permissionPolicy must be 'stop' or 'feedback', got '${String(policy)}'`)
  const timeout = Either.isRight(budget) ? budget.right.toolTimeout : undefined
  const tools = new Map<string, Dispatch.Prepared>()
  for (const [key, tool] of Object.entries(options.toolkit.tools)) {
    if (!toolName.test(tool.name)) {
      issues.push(`tool name '${tool.name}' must be 1-64 letters, digits, '_' or '-'`)
    } else if (key !== tool.name || tools.has(tool.name)) {
      issues.push(`tool name '${tool.name}' is used by more than one tool`)
    }
    const handler = Context.getOption(env.handlers, Context.GenericTag<Tool.Handler<string>>(tool.id))
    if (Option.isNone(handler)) {
      issues.push(`tool '${tool.name}' has no handler in the environment`)
      continue
    }
    const prepared = Dispatch.prepare(tool, handler.value, timeout, issues)
    if (prepared.mutating && env.store === undefined) {
      issues.push(`tool '${tool.name}' is mutating, and no IdempotencyStore is in the environment`)
    }
    tools.set(tool.name, prepared)
  }
  let waiting: ReadonlyArray<Prompt.ToolCallPart> = []
  if (options.transcript !== undefined) {
    const checked = Transcript.checkResumable(options.transcript)
    if (Either.isLeft(checked)) issues.push(checked.left.message)
    else waiting = checked.right
  }
  if (waiting.length > 0) {
    if (options.prompt !== undefined) issues.push("a transcript waiting for tool results cannot take a new prompt")
    if (options.runId === undefined) issues.push("resuming a transcript waiting for tool results needs its runId")
  } else if (options.prompt === undefined || options.prompt.trim().length === 0) {
    issues.push("prompt must not be empty")
  }
  if (issues.length > 0 || Either.isLeft(budget) || Either.isLeft(retry)) return Either.left(new InvalidOptions({ issues }))
  const limits = { maxChars: options.maxToolResultChars, maxTokens: options.maxToolResultTokens }
  const bounded = limits.maxChars !== undefined || limits.maxTokens !== undefined
  return Either.right({
    waiting,
    config: {
      budget: budget.right,
      retry: retry.right,
      permissionPolicy: policy,
      concurrency,
      registry: {
        runId: env.runId,
        tools,
        names: [...tools.keys()],
        principal: env.principal,
        store: env.store,
        emitter: env.emitter,
        settings: env.settings,
        bound: bounded ? (result) => ToolOutput.bound(result, limits, env.tokenizer) : undefined
      },
      wire: Model.makeWire(options.toolkit.tools, options.streaming === true),
      window: options.context ?? {}
    }
  })
}

/** The transcript a run starts from: a continued one, the system text, the prompt. */
const initialMessages = <Tools extends Record<string, Tool.Any>>(options: Options<Tools>): Array<Prompt.Message> => {
  const messages: Array<Prompt.Message> = [...(options.transcript ?? [])]
  if (options.system !== undefined) {
    const system = Prompt.makeMessage("system", { content: options.system })
    if (messages[0]?.role === "system") messages[0] = system
    else messages.unshift(system)
  }
  if (options.prompt !== undefined) {
    messages.push(Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: options.prompt })] }))
  }
  return messages
}

const outcomeOf = (exit: Exit.Exit<unknown, AgentError | InvalidOptions>): string =>
  Exit.isSuccess(exit)
    ? "success"
    : Exit.isInterrupted(exit)
    ? "interrupted"
    : Option.match(Cause.failureOption(exit.cause), { onNone: () => "defect", onSome: (error) => error._tag })

const runWith = <Tools extends Record<string, Tool.Any>>(
  options: Options<Tools>,
  mailbox: Mailbox.Mailbox<HarnessEvent.HarnessEvent, unknown> | undefined
): Effect.Effect<
  Result,
  AgentError | InvalidOptions,
  Requirements<Tools>
> =>
  Effect.gen(function*() {
    const runId = options.runId ?? (yield* makeRunId)
    const providerName = Option.getOrUndefined(yield* Effect.serviceOption(AiModel.ProviderName))
    const settings: Telemetry.Settings = {
      agentName: options.telemetry?.agentName ?? "agent",
      provider: options.telemetry?.provider ?? providerName,
      model: options.telemetry?.model,
      recordPayloads: options.telemetry?.recordPayloads ?? false
    }
    const emitter = new Telemetry.Emitter(runId, {
      observer: options.onEvent,
      onObserverError: options.onObserverError,
      mailbox
    })
    const env: Environment = {
      runId,
      emitter,
      settings,
      handlers: yield* Effect.context<never>(),
      tokenizer: Option.getOrUndefined(yield* Effect.serviceOption(Tokenizer.Tokenizer)),
      principal: Option.getOrUndefined(yield* Effect.serviceOption(Authorization.Principal)),
      store: Option.getOrUndefined(yield* Effect.serviceOption(Idempotency.IdempotencyStore))
    }
    const checked = yield* checkOptions(options, env)
    const timeout = checked.config.budget.timeout
    const config: Loop.Config = {
      ...checked.config,
      deadline: timeout === undefined ? undefined : (yield* Clock.currentTimeMillis) + Duration.toMillis(timeout),
      tokenizer: env.tokenizer,
      checkpoint: options.onCheckpoint ?? (() => Effect.void)
    }
    const model = yield* LanguageModel.LanguageModel
    const window = config.window
    const measure = window.maxTokens !== undefined && env.tokenizer !== undefined
      ? tokenCount(env.tokenizer)
      : window.maxChars !== undefined
      ? (message: Prompt.Message) => Effect.succeed(ContextWindow.charSize(message))
      : undefined
    const state = new RunState(runId, measure)
    const start = yield* Clock.currentTimeNanos
    yield* emitter.emit((base) =>
      new HarnessEvent.RunStarted({
        ...base,
        agentName: settings.agentName,
        ...(settings.recordPayloads && options.prompt !== undefined ? { prompt: options.prompt } : {})
      })
    )
    const body = Effect.gen(function*() {
      yield* Effect.mapError(state.recordAll(initialMessages(options)), (e) => Loop.modelError(state)(Model.fromAiError(e)))
      const loop = Loop.loop(state, config, model, checked.waiting)
      if (timeout === undefined) return yield* loop
      // The snapshot is taken after the timeout has interrupted the loop and its
      // finalizers have recorded the cancelled calls.
      const outcome = yield* Effect.timeoutOption(loop, timeout)
      if (Option.isSome(outcome)) return outcome.value
      return yield* new DeadlineExceeded({ timeoutMillis: Duration.toMillis(timeout), snapshot: state.snapshot() })
    })
    return yield* body.pipe(
      Effect.tapError((error) => Effect.annotateCurrentSpan("error.type", error._tag)),
      Effect.withSpan(`invoke_agent ${settings.agentName}`, {
        kind: "internal",
        captureStackTrace: false,
        attributes: {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.name": settings.agentName,
          "gen_ai.conversation.id": runId,
          ...(settings.provider === undefined ? {} : { "gen_ai.provider.name": settings.provider }),
          ...(settings.model === undefined ? {} : { "gen_ai.request.model": settings.model })
        }
      }),
      Effect.onExit((exit) =>
        Effect.flatMap(Telemetry.elapsedMs(start), (durationMs) =>
          emitter.emit((base) => {
            const snapshot = state.snapshot()
            return new HarnessEvent.RunEnded({
              ...base,
              outcome: outcomeOf(exit),
              steps: snapshot.steps,
              toolCalls: snapshot.toolCalls,
              usage: snapshot.usage,
              durationMs
            })
          }))
      )
    )
  })

/**
 * Runs an agent to its answer, or to the first error that ends it.
 *
 * Needs the `LanguageModel` to call and the handlers of `options.toolkit` (for example
 * from `toolkit.toLayer(...)`); a `Tokenizer` is used when token limits are set, an
 * `Authorization.Principal` and an `Idempotency.IdempotencyStore` when tools need them.
 * Tool-call problems (unknown tool, invalid or non-JSON arguments, a failing or dying
 * handler) never end the run: they become results the model reads. Interrupting the
 * returned effect interrupts the model call or the tools in flight; the last checkpoint
 * then still has one result for every recorded call.
 */
export const run = <Tools extends Record<string, Tool.Any>>(
  options: Options<Tools>
): Effect.Effect<
  Result,
  AgentError | InvalidOptions,
  Requirements<Tools>
> => runWith(options, undefined)

/** Options of {@link stream}. */
export interface StreamOptions {
  /**
   * Events kept for a consumer that falls behind (default 4096). The run never waits for
   * the consumer: past this many unread events the oldest are dropped, and the gap shows
   * in the sequence numbers. The last event, `RunEnded`, is always delivered.
   */
  readonly bufferSize?: number | undefined
}

/**
 * Runs an agent and streams its events. The stream ends after `RunEnded`, failing with
 * the run's error if it failed; stopping the stream early interrupts the run.
 *
 * @example
 * ```ts
 * Agent.stream({ prompt, toolkit }).pipe(Stream.runForEach((event) => Console.log(HarnessEvent.summary(event))))
 * ```
 */
export const stream = <Tools extends Record<string, Tool.Any>>(
  options: Options<Tools>,
  streamOptions: StreamOptions = {}
): Stream.Stream<
  HarnessEvent.HarnessEvent,
  AgentError | InvalidOptions,
  Requirements<Tools>
> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const mailbox = yield* Mailbox.make<HarnessEvent.HarnessEvent, AgentError | InvalidOptions>({
        capacity: Math.max(1, streamOptions.bufferSize ?? 4096),
        strategy: "sliding"
      })
      yield* runWith(options, mailbox as Mailbox.Mailbox<HarnessEvent.HarnessEvent, unknown>).pipe(
        Effect.exit,
        Effect.flatMap((exit) => mailbox.done(Exit.asVoid(exit))),
        Effect.forkScoped
      )
      return Mailbox.toStream(mailbox)
    })
  )
