import { Agent, HarnessEvent } from "@agent-harness/core"
import { ScriptedModel } from "@agent-harness/testing"
import { AiError, type Toolkit } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Chunk, Effect, Exit, Fiber, Ref, Stream, TestClock } from "effect"
import { makeLog, Tools, toolsLayer } from "./fixtures.js"

const S = ScriptedModel
const script = [
  S.callsWith(
    { usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 4 }, delay: "2 seconds" },
    S.call("slow", { ms: 500, label: "a" }),
    S.call("nope", { secret: "s3cr3t" })
  ),
  S.text("the answer is 42", { delay: "1 second" })
]

const withWorld = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(makeLog, (log) => self.pipe(Effect.provide(toolsLayer(log))))

const options = (extra: Partial<Agent.Options<Toolkit.Tools<typeof Tools>>> = {}) => ({
  prompt: "what is the answer?",
  toolkit: Tools,
  runId: "run_ev",
  ...extra
})

const collect = (extra: Partial<Agent.Options<Toolkit.Tools<typeof Tools>>> = {}) =>
  Effect.gen(function*() {
    const events = yield* Ref.make<ReadonlyArray<HarnessEvent.HarnessEvent>>([])
    const fiber = yield* Effect.fork(
      withWorld(Agent.run(options({ ...extra, onEvent: (e) => Ref.update(events, (all) => [...all, e]) })))
    )
    yield* TestClock.adjust("10 seconds")
    const exit = yield* Fiber.await(fiber)
    return { events: yield* Ref.get(events), exit }
  })

describe("HarnessEvent", () => {
  it.effect("a run emits its events in order, numbered from 0 by one, with durations from the Clock", () =>
    Effect.gen(function*() {
      const { events, exit } = yield* collect()
      assert(Exit.isSuccess(exit))
      assert.deepStrictEqual(events.map((e) => e._tag), [
        "RunStarted",
        "ModelCallStarted",
        "ModelCallEnded",
        "ToolCallStarted",
        "ToolCallStarted",
        "ToolCallEnded",
        "ToolCallEnded",
        "ModelCallStarted",
        "ModelCallEnded",
        "RunEnded"
      ])
      assert.deepStrictEqual(events.map((e) => e.seq), events.map((_, i) => i))
      assert.isTrue(events.every((e) => e.runId === "run_ev"))
      const [, , firstModel, , , unknownTool, slowTool, , , end] = events
      assert(firstModel?._tag === "ModelCallEnded" && firstModel.durationMs === 2000)
      assert.deepStrictEqual(firstModel.usage, { inputTokens: 10, outputTokens: 5, totalTokens: 15, cachedInputTokens: 4 })
      assert.strictEqual(firstModel.toolCalls, 2)
      assert(unknownTool?._tag === "ToolCallEnded" && unknownTool.status === "validation_error" && unknownTool.durationMs === 0)
      assert(slowTool?._tag === "ToolCallEnded" && slowTool.status === "success" && slowTool.durationMs === 500)
      assert(end?._tag === "RunEnded")
      assert.strictEqual(end.outcome, "success")
      assert.strictEqual(end.durationMs, 3500)
      assert.deepStrictEqual(end.usage, { calls: 2, reportedCalls: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15, cachedInputTokens: 4 })
      assert.isTrue(events.every((e, i) => i === 0 || e.timestamp >= events[i - 1]!.timestamp))
    }).pipe(Effect.provide(S.layer(script))))

  it.effect("regression (found writing the fault suite): a model call cut short by the deadline still ends", () =>
    Effect.gen(function*() {
      const { events, exit } = yield* collect({ budget: { timeout: "1 second" } })
      assert(Exit.isFailure(exit))
      assert.deepStrictEqual(events.map((e) => e._tag), ["RunStarted", "ModelCallStarted", "ModelCallFailed", "RunEnded"])
      const failed = events[2]
      assert(failed?._tag === "ModelCallFailed")
      assert.strictEqual(failed.reason, "interrupted")
      assert.strictEqual(failed.durationMs, 1000)
      assert.strictEqual(events[3]?._tag === "RunEnded" && events[3].outcome, "DeadlineExceeded")
    }).pipe(Effect.provide(S.layer(script))))

  it.effect("events carry no prompt, arguments or results unless payloads are recorded", () =>
    Effect.gen(function*() {
      const { events } = yield* collect()
      const text = JSON.stringify(events)
      assert.notInclude(text, "what is the answer")
      assert.notInclude(text, "s3cr3t")
      assert.notInclude(text, "a slept 500")
      const ended = events.find((e) => e._tag === "ToolCallEnded" && e.status === "success")
      assert(ended?._tag === "ToolCallEnded")
      assert.deepStrictEqual(Object.keys(ended.result).sort(), ["metadata", "status"])
    }).pipe(Effect.provide(S.layer(script))))

  it.effect("with recordPayloads they carry them", () =>
    Effect.gen(function*() {
      const { events } = yield* collect({ telemetry: { recordPayloads: true } })
      const text = JSON.stringify(events)
      assert.include(text, "what is the answer")
      assert.include(text, "s3cr3t")
      assert.include(text, "a slept 500")
    }).pipe(Effect.provide(S.layer(script))))

  it.effect("an observer that fails or dies is reported and changes nothing about the run", () =>
    Effect.gen(function*() {
      const reported = yield* Ref.make<ReadonlyArray<string>>([])
      let calls = 0
      const fiber = yield* Effect.fork(withWorld(Agent.run(options({
        onEvent: () => {
          calls += 1
          return calls % 2 === 0 ? Effect.fail("observer failed") : Effect.die(new Error("observer died"))
        },
        onObserverError: (cause) => Ref.update(reported, (all) => [...all, Cause.isDie(cause) ? "die" : "fail"])
      }))))
      yield* TestClock.adjust("10 seconds")
      const result = yield* Fiber.join(fiber)
      assert.strictEqual(result.answer, "the answer is 42")
      assert.strictEqual(result.steps, 2)
      assert.strictEqual((yield* Ref.get(reported)).length, 10)
      assert.deepStrictEqual([...new Set(yield* Ref.get(reported))].sort(), ["die", "fail"])
    }).pipe(Effect.provide(S.layer(script))))

  it.effect("an error handler that fails too is ignored", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(withWorld(Agent.run(options({
        onEvent: () => Effect.fail("no"),
        onObserverError: () => Effect.dieMessage("handler broken")
      }))))
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual((yield* Fiber.join(fiber)).answer, "the answer is 42")
    }).pipe(Effect.provide(S.layer(script))))

  it.effect("Agent.stream gives the same events and ends after RunEnded", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(Stream.runCollect(streamRun()))
      yield* TestClock.adjust("10 seconds")
      const events = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      assert.strictEqual(events.length, 10)
      assert.strictEqual(events.at(-1)?._tag, "RunEnded")
    }).pipe(Effect.provide(S.layer(script))))

  it.effect("a failing run's stream delivers RunEnded, then fails with the error", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<string>>([])
      const error = yield* Effect.flip(
        streamRun().pipe(
          Stream.runForEach((e) => Ref.update(seen, (all) => [...all, e._tag === "RunEnded" ? `RunEnded:${e.outcome}` : e._tag]))
        )
      )
      assert.strictEqual(error._tag, "ModelError")
      assert.deepStrictEqual(yield* Ref.get(seen), ["RunStarted", "ModelCallStarted", "ModelCallFailed", "RunEnded:ModelError"])
    }).pipe(Effect.provide(S.layer([S.fail(new AiError.UnknownError({ module: "T", method: "m" }))]))))

  it.effect("a slow consumer does not hold the run back: the oldest unread events are dropped", () =>
    Effect.gen(function*() {
      const calls = Array.from({ length: 20 }, (_, i) => S.call("add", { a: i, b: 1 }))
      const fiber = yield* Effect.fork(
        streamRun({}, { bufferSize: 4 }).pipe(
          Stream.tap(() => Effect.sleep("1 second")),
          Stream.runCollect,
          Effect.provide(S.layer([S.calls(...calls), S.text("sum")]))
        )
      )
      yield* TestClock.adjust("1 hour")
      const events = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      // 46 events were emitted; far fewer reached the consumer, in order, ending with RunEnded.
      assert.isBelow(events.length, 46)
      assert.strictEqual(events.at(-1)?._tag, "RunEnded")
      assert.isTrue(events.every((e, i) => i === 0 || e.seq > events[i - 1]!.seq))
      assert.strictEqual(events.at(-1)?.seq, 45)
    }))
})

function streamRun(
  extra: Partial<Agent.Options<Toolkit.Tools<typeof Tools>>> = {},
  streamOptions: Agent.StreamOptions = {}
) {
  return Stream.unwrap(
    Effect.map(makeLog, (log) => Agent.stream(options(extra), streamOptions).pipe(Stream.provideSomeLayer(toolsLayer(log))))
  )
}
