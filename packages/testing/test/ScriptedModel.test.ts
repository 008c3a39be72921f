import { ScriptedModel } from "@agent-harness/testing"
import { AiError, LanguageModel, Tool, Toolkit } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Schema, Stream, TestClock } from "effect"

const S = ScriptedModel
const Echo = Tool.make("echo", { parameters: { text: Schema.String }, success: Schema.String })
const kit = { tools: Toolkit.make(Echo).tools, handle: () => Effect.die("not used") } as const

const ask = (prompt: string) =>
  Effect.flatMap(LanguageModel.LanguageModel, (model) =>
    model.generateText({ prompt, toolkit: kit, disableToolCallResolution: true }))

describe("ScriptedModel", () => {
  it.effect("plays the turns in order and records every request", () =>
    Effect.gen(function*() {
      const first = yield* ask("one")
      assert.deepStrictEqual(first.toolCalls.map((c) => [c.id, c.name, c.params]), [
        ["call_1_1", "echo", { text: "a" }],
        ["mine", "echo", { text: "b" }]
      ])
      assert.strictEqual(first.finishReason, "tool-calls")
      const second = yield* ask("two")
      assert.strictEqual(second.text, "done")
      assert.deepStrictEqual(second.usage.inputTokens, 3)
      const requests = yield* (yield* S.ScriptedModel).requests
      assert.deepStrictEqual(requests.map((r) => r.step), [1, 2])
      assert.deepStrictEqual(requests[0]!.toolNames, ["echo"])
      const message = requests[1]!.messages[0]!
      assert(message.role === "user" && message.content[0]?.type === "text")
      assert.strictEqual(message.content[0].text, "two")
      yield* (yield* S.ScriptedModel).assertFinished
    }).pipe(Effect.provide(S.layer([
      S.calls(S.call("echo", { text: "a" }), S.call("echo", { text: "b" }, { id: "mine" })),
      S.text("done", { usage: { inputTokens: 3, outputTokens: 1 } })
    ]))))

  it.effect("a request beyond the script fails and names the step", () =>
    Effect.gen(function*() {
      yield* ask("one")
      const error = yield* Effect.flip(ask("two"))
      assert.strictEqual(error._tag, "UnknownError")
      assert.include(error.message, "request 2 has no scripted turn (the script has 1)")
    }).pipe(Effect.provide(S.layer([S.text("only")]))))

  it.effect("leftover turns are reported", () =>
    Effect.gen(function*() {
      const script = yield* S.ScriptedModel
      yield* ask("one")
      assert.strictEqual(yield* script.remaining, 2)
      const error = yield* Effect.flip(script.assertFinished)
      assert.strictEqual(error.remaining, 2)
      assert.include(error.message, "2 scripted turn(s) were never requested (1 request(s) made)")
    }).pipe(Effect.provide(S.layer([S.text("a"), S.text("b"), S.text("c")]))))

  it.effect("a scripted failure is the model call's error", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(ask("one"))
      assert.strictEqual(error._tag, "MalformedOutput")
    }).pipe(Effect.provide(S.layer([S.fail(new AiError.MalformedOutput({ module: "T", method: "m" }))]))))

  it.effect("a delayed turn waits on the clock", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(ask("one"))
      yield* TestClock.adjust("999 millis")
      assert.strictEqual(fiber.unsafePoll(), null)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual((yield* Fiber.join(fiber)).text, "late")
    }).pipe(Effect.provide(S.layer([S.text("late", { delay: "1 second" })]))))

  it.effect("raw parts are sent as they are, ids included", () =>
    Effect.gen(function*() {
      const model = yield* LanguageModel.LanguageModel
      const response = yield* model.generateText({ prompt: "x", toolkit: kit, disableToolCallResolution: true })
      assert.deepStrictEqual(response.toolCalls.map((c) => c.id), ["raw"])
    }).pipe(Effect.provide(S.layer([S.parts([{ type: "tool-call", id: "raw", name: "echo", params: { text: "x" } }])]))))

  it.effect("streaming is refused with a clear error", () =>
    Effect.gen(function*() {
      const model = yield* LanguageModel.LanguageModel
      const error = yield* Effect.flip(Stream.runDrain(model.streamText({ prompt: "x" })))
      assert.include(error.message, "only scripts generateText")
    }).pipe(Effect.provide(S.layer([]))))
})
