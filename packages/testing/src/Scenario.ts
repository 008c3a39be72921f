/**
 * Seeded whole-run scenarios for fault testing: scripts of model turns mixing text,
 * valid and broken calls, malformed envelopes, failures and slow turns; tools that
 * succeed, refuse, die, hang or take their time; tight budgets; principals with and
 * without permissions; an interruption at a random moment; an observer that throws.
 *
 * {@link run} plays one scenario under `TestClock` and {@link check} lists every
 * promise of the harness it broke.
 *
 * @example
 * ```ts
 * it.effect.prop("scenarios", { scenario: Scenario.arbitrary }, ({ scenario }) =>
 *   Effect.map(Scenario.run(scenario), (outcome) => assert.deepStrictEqual(Scenario.check(outcome), [])))
 * ```
 */
import { Agent, type AgentError, Authorization, type HarnessEvent, Idempotency, Transcript } from "@agent-harness/core"
import { AiError, LanguageModel, Tool, Toolkit } from "@effect/ai"
import {
  Cause,
  Effect,
  Either,
  Exit,
  FastCheck as fc,
  Fiber,
  Logger,
  LogLevel,
  Option,
  Ref,
  Schema,
  Supervisor,
  TestClock
} from "effect"
import * as ScriptedModel from "./ScriptedModel.js"

const S = ScriptedModel

/** What a tool call asks its tool to do. */
export const Behaviour = Schema.Literal("ok", "business", "fail", "die", "hang", "slow")

const WorkParams = { behaviour: Behaviour, ms: Schema.Number }

export class Refused extends Schema.TaggedError<Refused>()("Refused", { reason: Schema.String }) {}

const Work = Tool.make("work", {
  parameters: WorkParams,
  success: Schema.String,
  failure: Refused
})
const Pay = Tool.make("pay", { parameters: WorkParams, success: Schema.String, failure: Refused, dependencies: [Idempotency.Key] })
  .annotate(Idempotency.Mutating, true)
  .annotate(Authorization.RequiresPermission, "pay:write")
const Lease = Tool.make("lease", { parameters: WorkParams, success: Schema.String, failure: Refused })

/** The scenario tools: plain work, a guarded mutating payment, and one holding a resource. */
export const Tools = Toolkit.make(Work, Pay, Lease)

/** One scenario. */
export interface Scenario {
  readonly turns: ReadonlyArray<ScriptedModel.Turn>
  readonly budget: Agent.Options<Toolkit.Tools<typeof Tools>>["budget"]
  readonly concurrency: number
  readonly principal: "none" | "payer" | "viewer"
  readonly policy: Authorization.Policy
  /** Interrupt the run this many ms after it starts, or never. */
  readonly interruptAt: number | undefined
  /** Every n-th event the observer throws (odd n) or fails (even n); 0: never. */
  readonly observerFaultEvery: number
  /** The run's retry policy for failed model calls. */
  readonly retry: Agent.Options<Toolkit.Tools<typeof Tools>>["retry"]
}

const arbBehaviour = fc.constantFrom("ok", "ok", "ok", "business", "fail", "die", "hang", "slow") as fc.Arbitrary<
  typeof Behaviour.Type
>
const arbParams = fc.record({ behaviour: arbBehaviour, ms: fc.integer({ min: 0, max: 5_000 }) })

const arbCall: fc.Arbitrary<ScriptedModel.ScriptedCall> = fc.oneof(
  { weight: 5, arbitrary: arbParams.map((p) => S.call("work", p)) },
  { weight: 2, arbitrary: arbParams.map((p) => S.call("pay", p)) },
  { weight: 2, arbitrary: arbParams.map((p) => S.call("lease", p)) },
  { weight: 1, arbitrary: fc.constant(S.call("work", { behaviour: 42 })) },
  { weight: 1, arbitrary: fc.constant(S.call("work", "{not json")) },
  { weight: 1, arbitrary: fc.constantFrom("nope", "Work", "").map((name) => S.call(name, {})) }
)

const arbUsage = fc.option(
  fc.record({ inputTokens: fc.nat({ max: 300 }), outputTokens: fc.nat({ max: 100 }) }),
  { nil: undefined }
)
const arbDelay = fc.option(fc.integer({ min: 1, max: 20_000 }), { nil: undefined })

const arbTurn: fc.Arbitrary<ScriptedModel.Turn> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(arbUsage, arbDelay).map(([usage, delay]) => S.text("answer", { usage, delay })) },
  {
    weight: 8,
    arbitrary: fc.tuple(fc.array(arbCall, { minLength: 1, maxLength: 5 }), arbUsage, arbDelay).map(([calls, usage, delay]) =>
      S.callsWith({ usage, delay }, ...calls)
    )
  },
  {
    weight: 1,
    arbitrary: fc.constant(S.parts([
      { type: "tool-call", id: "dup", name: "work", params: { behaviour: "ok", ms: 0 } },
      { type: "tool-call", id: "dup", name: "work", params: { behaviour: "ok", ms: 0 } }
    ]))
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<ReadonlyArray<unknown>>(
      [{ type: "tool-call", id: "", name: "work", params: {} }],
      [{ type: "tool-call", name: "work", params: {} }],
      [{ type: "finish", reason: "stop", usage: { inputTokens: -3, outputTokens: 1, totalTokens: 1 } }],
      [{ type: "finish", reason: "stop", usage: { inputTokens: 0.5, outputTokens: 1, totalTokens: 1 } }],
      [{ type: "mystery" }]
    ).map((parts) => S.parts(parts as never))
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(429, 500, 529, 401, 400), arbDelay, fc.option(fc.integer({ min: 0, max: 90 }), { nil: undefined })).map(([status, delay, retryAfter]) =>
      S.fail(
        new AiError.HttpResponseError({
          module: "Scenario",
          method: "generateText",
          reason: "StatusCode",
          request: { method: "POST", url: "http://127.0.0.1/", urlParams: [], hash: Option.none(), headers: {} },
          response: { status, headers: retryAfter === undefined ? {} : { "retry-after": String(retryAfter) } }
        }),
        { delay }
      )
    )
  }
)

/** Scenarios, from gentle to hostile. */
export const arbitrary: fc.Arbitrary<Scenario> = fc.record({
  turns: fc.array(arbTurn, { maxLength: 7 }),
  budget: fc.record({
    maxSteps: fc.integer({ min: 1, max: 6 }),
    maxToolCalls: fc.integer({ min: 0, max: 12 }),
    maxTotalTokens: fc.option(fc.integer({ min: 1, max: 900 }), { nil: undefined }),
    // Every scenario has a deadline, so that a hanging tool cannot hang the run.
    timeout: fc.integer({ min: 1, max: 120_000 }),
    toolTimeout: fc.option(fc.integer({ min: 1, max: 30_000 }), { nil: undefined })
  }),
  concurrency: fc.integer({ min: 1, max: 4 }),
  principal: fc.constantFrom("none", "payer", "viewer"),
  policy: fc.constantFrom("stop", "feedback"),
  interruptAt: fc.option(fc.integer({ min: 0, max: 60_000 }), { nil: undefined }),
  observerFaultEvery: fc.constantFrom(0, 0, 2, 3, 5),
  retry: fc.oneof(
    fc.constant(false as const),
    fc.constant(undefined),
    fc.record({ maxAttempts: fc.integer({ min: 1, max: 4 }), initialDelay: fc.integer({ min: 0, max: 2_000 }) })
  )
})

/** What {@link run} saw. */
export interface Outcome {
  readonly scenario: Scenario
  /** `success`, an `AgentError` tag, `interrupted`, or `defect: ...` / `hang`. */
  readonly outcome: string
  readonly transcript: Transcript.Transcript
  readonly steps: number
  readonly toolCalls: number
  readonly requests: number
  readonly events: ReadonlyArray<HarnessEvent.HarnessEvent>
  readonly started: ReadonlyArray<{ readonly tool: string; readonly key: string | undefined }>
  readonly liveFibers: number
  readonly leases: { readonly acquired: number; readonly released: number }
}

const principals: Record<Scenario["principal"], Authorization.PrincipalInfo | undefined> = {
  none: undefined,
  payer: { userId: "payer", permissions: ["pay:write"] },
  viewer: { userId: "viewer", permissions: [] }
}

/** The longest a scenario can take under `TestClock`: past every deadline it sets. */
const horizon = "10 minutes"

/** Plays a scenario under `TestClock`. Never fails: what happened is in the outcome. */
export const run = (scenario: Scenario): Effect.Effect<Outcome, never, never> =>
  Effect.gen(function*() {
    const started = yield* Ref.make<ReadonlyArray<{ readonly tool: string; readonly key: string | undefined }>>([])
    const leases = yield* Ref.make({ acquired: 0, released: 0 })
    const events: Array<HarnessEvent.HarnessEvent> = []
    let lastTranscript: Transcript.Transcript = []
    const behave = (tool: string, key: string | undefined, p: { behaviour: typeof Behaviour.Type; ms: number }) =>
      Effect.gen(function*() {
        yield* Ref.update(started, (all) => [...all, { tool, key }])
        switch (p.behaviour) {
          case "ok":
            return `${tool} ok`
          case "slow":
            yield* Effect.sleep(p.ms)
            return `${tool} slow ${p.ms}`
          case "business":
            return yield* new Refused({ reason: "rule" })
          case "fail":
            return yield* Effect.fail(new Refused({ reason: "internal /srv/x" }))
          case "die":
            return yield* Effect.die(new Error("tool exploded"))
          case "hang":
            return yield* Effect.never
        }
      })
    const handlers = Tools.toLayer({
      work: (p) => behave("work", undefined, p),
      pay: (p) => Effect.flatMap(Idempotency.Key, (key) => behave("pay", key, p)),
      lease: (p) =>
        Effect.scoped(
          Effect.acquireRelease(
            Ref.update(leases, (l) => ({ ...l, acquired: l.acquired + 1 })),
            () => Ref.update(leases, (l) => ({ ...l, released: l.released + 1 }))
          ).pipe(Effect.zipRight(behave("lease", undefined, p)))
        )
    })
    let count = 0
    const observer = (event: HarnessEvent.HarnessEvent) =>
      Effect.suspend(() => {
        events.push(event)
        count += 1
        const every = scenario.observerFaultEvery
        if (every === 0 || count % every !== 0) return Effect.void
        return every % 2 === 1 ? Effect.die(new Error("observer threw")) : Effect.fail("observer failed")
      })
    const principal = principals[scenario.principal]
    const supervisor = yield* Supervisor.track
    const program = Agent.run({
      prompt: "do the work",
      toolkit: Tools,
      runId: "run_scenario",
      budget: scenario.budget,
      concurrency: scenario.concurrency,
      permissionPolicy: scenario.policy,
      retry: scenario.retry,
      onEvent: observer,
      onCheckpoint: (snapshot) => Effect.sync(() => void (lastTranscript = snapshot.transcript))
    }).pipe(
      Effect.provide(handlers),
      Effect.provide(Idempotency.layerMemory),
      principal === undefined ? (self) => self : Effect.provideService(Authorization.Principal, principal),
      Effect.supervised(supervisor)
    )
    const [model, script] = yield* ScriptedModel.make(scenario.turns)
    const fiber = yield* program.pipe(
      Effect.provideService(LanguageModel.LanguageModel, model),
      Logger.withMinimumLogLevel(LogLevel.None),
      Effect.fork
    )
    if (scenario.interruptAt !== undefined) {
      yield* TestClock.adjust(scenario.interruptAt)
      yield* Fiber.interrupt(fiber)
    }
    yield* TestClock.adjust(horizon)
    const exit = fiber.unsafePoll()
    const requests = (yield* script.requests).length
    const base = {
      scenario,
      requests,
      events,
      started: yield* Ref.get(started),
      liveFibers: (yield* supervisor.value).length,
      leases: yield* Ref.get(leases)
    }
    if (exit === null) {
      yield* Fiber.interrupt(fiber)
      return { ...base, outcome: "hang", transcript: lastTranscript, steps: 0, toolCalls: 0 }
    }
    if (Exit.isSuccess(exit)) {
      const r = exit.value
      return { ...base, outcome: "success", transcript: r.transcript, steps: r.steps, toolCalls: r.toolCalls }
    }
    if (Exit.isInterrupted(exit)) {
      const steps = events.filter((e) => e._tag === "ModelCallEnded").length
      return { ...base, outcome: "interrupted", transcript: lastTranscript, steps, toolCalls: -1 }
    }
    const failure = Cause.failureOption(exit.cause)
    if (Option.isNone(failure)) {
      return { ...base, outcome: `defect: ${Cause.pretty(exit.cause)}`, transcript: lastTranscript, steps: 0, toolCalls: 0 }
    }
    const error: AgentError.AgentError | AgentError.InvalidOptions = failure.value
    if (error._tag === "InvalidOptions") {
      return { ...base, outcome: `InvalidOptions: ${error.message}`, transcript: [], steps: 0, toolCalls: 0 }
    }
    return {
      ...base,
      outcome: error._tag,
      transcript: error.snapshot.transcript,
      steps: error.snapshot.steps,
      toolCalls: error.snapshot.toolCalls
    }
  })

const recordedCalls = (transcript: Transcript.Transcript) =>
  transcript.flatMap((m) => (m.role === "assistant" ? m.content.filter((p) => p.type === "tool-call") : []))

const results = (transcript: Transcript.Transcript) =>
  transcript.flatMap((m) => (m.role === "tool" ? m.content : []))

/** Every promise of the harness the outcome breaks, as readable lines (none: all kept). */
export const check = (o: Outcome): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const fail = (problem: string) => problems.push(problem)
  const { budget } = o.scenario
  const typed = ["success", "ModelError", "BudgetExceeded", "DeadlineExceeded", "ContextLimit", "PermissionDenied"]
  if (!(typed.includes(o.outcome) || (o.outcome === "interrupted" && o.scenario.interruptAt !== undefined))) {
    fail(`untyped outcome: ${o.outcome}`)
  }
  const checked = Transcript.check(o.transcript)
  if (Either.isLeft(checked)) fail(`transcript invariant: ${checked.left.message}`)
  const json = Schema.encodeEither(Transcript.Json)(o.transcript)
  if (Either.isLeft(json)) fail("transcript does not encode to JSON")
  else {
    const back = Schema.decodeEither(Transcript.Json)(json.right)
    if (Either.isLeft(back) || JSON.stringify(Schema.encodeSync(Transcript.Transcript)(back.right)) !== JSON.stringify(Schema.encodeSync(Transcript.Transcript)(o.transcript))) {
      fail("transcript does not round-trip through JSON")
    }
  }
  const maxToolCalls = budget?.maxToolCalls ?? 100
  const maxSteps = budget?.maxSteps ?? 20
  if (o.started.length > maxToolCalls) fail(`${o.started.length} handlers ran, maxToolCalls is ${maxToolCalls}`)
  const attempts = o.scenario.retry === false ? 1 : o.scenario.retry?.maxAttempts ?? 4
  if (o.requests > maxSteps * attempts) fail(`${o.requests} model calls, maxSteps is ${maxSteps}, ${attempts} attempts each`)
  const recorded = recordedCalls(o.transcript)
  if (o.outcome !== "interrupted" && o.toolCalls !== recorded.length) {
    fail(`${recorded.length} calls recorded but ${o.toolCalls} admitted (a refused batch left a trace?)`)
  }
  if (o.started.length > recorded.length && o.outcome !== "interrupted") {
    fail(`${o.started.length} handlers ran for ${recorded.length} recorded calls`)
  }
  if (o.scenario.principal !== "payer" && o.started.some((s) => s.tool === "pay")) fail("a denied call ran")
  const keys = o.started.flatMap((s) => (s.key === undefined ? [] : [s.key]))
  if (new Set(keys).size !== keys.length) fail(`a mutating call ran twice for one key: ${keys.join(", ")}`)
  if (o.liveFibers > 0) fail(`${o.liveFibers} fibers of the run still running`)
  if (o.leases.acquired !== o.leases.released) fail(`${o.leases.acquired} scopes opened, ${o.leases.released} closed`)
  if (o.outcome.startsWith("InvalidOptions")) return problems
  // Events: contiguous, bracketed by the run, every start ended, counts as recorded.
  const ev = o.events
  ev.forEach((e, i) => e.seq !== i && fail(`event ${i} has seq ${e.seq}`))
  if (ev[0]?._tag !== "RunStarted") fail("first event is not RunStarted")
  if (ev.at(-1)?._tag !== "RunEnded") fail("last event is not RunEnded")
  const open = new Map<string, number>()
  let modelOpen: number | undefined
  for (const e of ev) {
    if (e._tag === "ToolCallStarted") open.set(e.callId, e.seq)
    if (e._tag === "ToolCallEnded") open.delete(e.callId)
    if (e._tag === "ModelCallStarted") {
      if (modelOpen !== undefined) fail(`model call ${modelOpen} overlaps ${e.step}`)
      modelOpen = e.step
    }
    if (e._tag === "ModelCallRetrying") {
      if (modelOpen !== e.step) fail(`retry of model call ${e.step} outside it`)
      if (e.attempt >= attempts) fail(`attempt ${e.attempt} retried, only ${attempts} allowed`)
      if (!["rate_limited", "unavailable", "transport"].includes(e.reason)) fail(`a ${e.reason} failure was retried`)
    }
    if (e._tag === "ModelCallEnded" || e._tag === "ModelCallFailed") {
      if (modelOpen !== e.step) fail(`model call ${e.step} ended without starting`)
      modelOpen = undefined
    }
  }
  if (open.size > 0) fail(`tool calls started and never ended: ${[...open.keys()].join(", ")}`)
  if (modelOpen !== undefined) fail(`model call ${modelOpen} never ended`)
  const toolEnds = ev.filter((e) => e._tag === "ToolCallEnded").length
  if (toolEnds !== results(o.transcript).length) {
    fail(`${toolEnds} tool ends reported, ${results(o.transcript).length} results recorded`)
  }
  const modelEnds = ev.filter((e) => e._tag === "ModelCallEnded").length
  if (modelEnds !== o.steps) fail(`${modelEnds} model calls ended, ${o.steps} steps`)
  // Each request is a step's first attempt or a retry that was announced.
  const modelStarts = ev.filter((e) => e._tag === "ModelCallStarted").length
  const retries = ev.filter((e) => e._tag === "ModelCallRetrying").length
  if (o.outcome !== "interrupted" && o.requests !== modelStarts + retries) {
    fail(`${o.requests} model requests, ${modelStarts} model calls and ${retries} retries announced`)
  }
  return problems
}
