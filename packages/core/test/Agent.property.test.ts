/**
 * Random scripts and budgets against the loop's promises. Replay a failure with the seed
 * fast-check prints: `PROPERTY_SEED=<seed> npm test -- Agent.property`.
 */
import { Agent, Transcript } from "@agent-harness/core"
import { ScriptedModel } from "@agent-harness/testing"
import { AiError } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Either, Exit, FastCheck as fc, Logger, LogLevel, Ref } from "effect"
import { makeLog, Tools, toolsLayer } from "./fixtures.js"

const S = ScriptedModel

const arbCall: fc.Arbitrary<ScriptedModel.ScriptedCall> = fc.oneof(
  fc.record({ a: fc.integer(), b: fc.integer() }).map((p) => S.call("add", p)),
  fc.constant(S.call("add", { a: "not a number" })),
  fc.constant(S.call("add", "{not json")),
  fc.constant(S.call("no_such_tool", {})),
  fc.constant(S.call("boom", {})),
  fc.constantFrom("a", "none").map((sku) => S.call("order", { items: [{ sku, qty: 1 }] }))
)

const arbUsage = fc.option(
  fc.record({ inputTokens: fc.nat({ max: 200 }), outputTokens: fc.nat({ max: 100 }) }),
  { nil: undefined }
)

const arbTurn: fc.Arbitrary<ScriptedModel.Turn> = fc.oneof(
  { weight: 1, arbitrary: arbUsage.map((usage) => S.text("answer", { usage })) },
  {
    weight: 4,
    arbitrary: fc.tuple(fc.array(arbCall, { minLength: 1, maxLength: 5 }), arbUsage).map(([calls, usage]) =>
      S.callsWith({ usage }, ...calls)
    )
  },
  {
    weight: 1,
    arbitrary: fc.constant(S.fail(new AiError.UnknownError({ module: "Test", method: "generateText" })))
  }
)

const arbBudget = fc.record({
  maxSteps: fc.integer({ min: 1, max: 6 }),
  maxToolCalls: fc.integer({ min: 0, max: 10 }),
  maxTotalTokens: fc.option(fc.integer({ min: 1, max: 800 }), { nil: undefined })
})

const seed = process.env.PROPERTY_SEED === undefined ? undefined : Number(process.env.PROPERTY_SEED)

describe("Agent.run under random scripts and budgets", () => {
  it.effect.prop(
    "never exceeds the tool budget, leaves no trace of refused batches, and answers every recorded call once",
    { script: fc.array(arbTurn, { minLength: 0, maxLength: 7 }), budget: arbBudget, concurrency: fc.integer({ min: 1, max: 4 }) },
    ({ budget, concurrency, script }) =>
      Effect.gen(function*() {
        const log = yield* makeLog
        const exit = yield* Agent.run({ prompt: "go", toolkit: Tools, budget, concurrency }).pipe(
          Effect.provide(toolsLayer(log)),
          Effect.provide(S.layer(script)),
          // Dying tools are logged by design; the log is noise here.
          Logger.withMinimumLogLevel(LogLevel.None),
          Effect.exit
        )
        // A typed outcome, never a defect from the harness.
        if (Exit.isFailure(exit) && Either.isRight(Cause.failureOrCause(exit.cause))) {
          assert.fail(`run died: ${Cause.pretty(exit.cause)}`)
        }
        const snapshot = Exit.isSuccess(exit) ? exit.value : Cause.failureOption(exit.cause).pipe((o) => {
          assert(o._tag === "Some")
          assert(o.value._tag !== "InvalidOptions", o.value.message)
          return o.value.snapshot
        })
        const started = (yield* Ref.get(log.started)).length
        assert.isAtMost(snapshot.toolCalls, budget.maxToolCalls)
        assert.isAtMost(started, snapshot.toolCalls)
        assert.isAtMost(snapshot.steps, budget.maxSteps)
        const checked = Transcript.check(snapshot.transcript)
        assert(Either.isRight(checked), Either.isLeft(checked) ? checked.left.message : "")
        // Refused batches leave no trace: the recorded calls are exactly the admitted ones.
        const recorded = snapshot.transcript.flatMap((m) =>
          m.role === "assistant" ? m.content.filter((p) => p.type === "tool-call") : []
        )
        assert.strictEqual(recorded.length, snapshot.toolCalls)
      }),
    { timeout: 120_000, fastCheck: { numRuns: 1000, ...(seed === undefined ? {} : { seed }) } }
  )
})
