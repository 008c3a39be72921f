import { Agent, ContextWindow, Transcript } from "@agent-harness/core"
import { ScriptedModel } from "@agent-harness/testing"
import { Prompt, Tokenizer } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Ref, Schema } from "effect"
import { makeLog, toolResults, Tools, toolsLayer } from "./fixtures.js"

const S = ScriptedModel

const user = (text: string) => Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text })] })
const system = (text: string) => Prompt.makeMessage("system", { content: text })
const assistantCalls = (ids: ReadonlyArray<string>, text = "") =>
  Prompt.makeMessage("assistant", {
    content: [
      ...(text === "" ? [] : [Prompt.makePart("text", { text })]),
      ...ids.map((id) => Prompt.makePart("tool-call", { id, name: "add", params: { a: 1, b: 2 }, providerExecuted: false }))
    ]
  })
const results = (ids: ReadonlyArray<string>, payload = "ok") =>
  Prompt.makeMessage("tool", {
    content: ids.map((id) =>
      Prompt.makePart("tool-result", { id, name: "add", isFailure: false, result: payload, providerExecuted: false })
    )
  })

const indexOf = (transcript: Transcript.Transcript) => {
  const index = ContextWindow.makeIndex()
  for (const message of transcript) ContextWindow.append(index, message, ContextWindow.charSize(message))
  return index
}

describe("Transcript.check", () => {
  const base = [system("s"), user("u")]
  it("accepts a complete history", () => {
    assert.isTrue(Either.isRight(Transcript.check([...base, assistantCalls(["a", "b"]), results(["a", "b"])])))
  })
  const refused: ReadonlyArray<[string, Transcript.Transcript, string, string]> = [
    ["an orphan result", [...base, results(["ghost"])], "ghost", "answers no tool call"],
    ["a call without a result", [...base, assistantCalls(["a"])], "a", "has no result"],
    ["a batch answered only in part", [...base, assistantCalls(["a", "b"]), results(["a"])], "b", "has no result"],
    ["a result after the next turn", [...base, assistantCalls(["a"]), user("more"), results(["a"])], "a", "has no result before the next user message"],
    ["a duplicate call id", [...base, assistantCalls(["a"]), results(["a"]), assistantCalls(["a"]), results(["a"])], "a", "is used twice"],
    ["a duplicate result", [...base, assistantCalls(["a"]), results(["a"]), results(["a"])], "a", "more than one result"],
    ["an empty call id", [...base, assistantCalls([""]), results([""])], "", "empty id"]
  ]
  for (const [label, transcript, callId, reason] of refused) {
    it(`refuses ${label}, naming the call`, () => {
      const checked = Transcript.check(transcript)
      assert(Either.isLeft(checked))
      assert.strictEqual(checked.left.callId, callId)
      assert.include(checked.left.message, reason)
    })
  }

  it.effect("a continued transcript that breaks it is refused before the model is called", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Agent.run({ prompt: "go", toolkit: Tools, transcript: [...base, assistantCalls(["x1", "x2"]), results(["x1"])] }))
      assert(error._tag === "InvalidOptions")
      assert.include(error.message, "'x2'")
      assert.strictEqual((yield* (yield* S.ScriptedModel).requests).length, 0)
    }).pipe(Effect.provide(toolsLayer({} as never)), Effect.provide(S.layer([]))))
})

describe("ContextWindow.select", () => {
  const history = [
    system("sys"),
    user("task"),
    assistantCalls(["a1", "a2"], "x".repeat(10)),
    results(["a1", "a2"], "r".repeat(10)),
    user("more"),
    assistantCalls(["b1"]),
    results(["b1"], "r".repeat(10))
  ]
  const sizes = history.map(ContextWindow.charSize)
  const index = indexOf(history)
  const pinned = sizes[0]! + sizes[1]!

  it("with room for everything, sends everything", () => {
    const selection = Either.getOrThrow(ContextWindow.select(index, 10_000))
    assert.deepStrictEqual(ContextWindow.view(history, selection), history)
  })

  it("cuts between groups, never through a batch", () => {
    // Room for the newest group and the lone user message, one short of the batch before.
    const limit = pinned + sizes[4]! + sizes[5]! + sizes[6]! + sizes[2]! + sizes[3]! - 1
    const view = ContextWindow.view(history, Either.getOrThrow(ContextWindow.select(index, limit)))
    assert.deepStrictEqual(view, [history[0], history[1], history[4], history[5], history[6]])
    assert.isTrue(Either.isRight(Transcript.check(view)))
  })

  it("fails when the pinned part and the newest group do not fit, saying what they need", () => {
    const need = pinned + sizes[5]! + sizes[6]!
    assert.deepStrictEqual(ContextWindow.select(index, need - 1), Either.left({ required: need }))
    assert.isTrue(Either.isRight(ContextWindow.select(index, need)))
  })

  it("property: the view is valid, keeps the pinned part and the newest group, and is the largest that fits", () =>
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.tuple(fc.integer({ min: 1, max: 4 }), fc.nat({ max: 60 })).map(([n, size]) => ({ kind: "batch" as const, n, size })),
            fc.nat({ max: 60 }).map((size) => ({ kind: "user" as const, size }))
          ),
          { maxLength: 40 }
        ),
        fc.nat({ max: 1500 }),
        (groups, limit) => {
          let id = 0
          const transcript: Array<Prompt.Message> = [system("system text"), user("the task")]
          const newestStart: Array<number> = []
          for (const group of groups) {
            newestStart.push(transcript.length)
            if (group.kind === "user") transcript.push(user("u".repeat(group.size)))
            else {
              const ids = Array.from({ length: group.n }, () => `c${id++}`)
              transcript.push(assistantCalls(ids, "t".repeat(group.size)), results(ids, "r".repeat(group.size)))
            }
          }
          const idx = indexOf(transcript)
          const size = (ms: ReadonlyArray<Prompt.Message>) => ms.reduce((n, m) => n + ContextWindow.charSize(m), 0)
          const selection = ContextWindow.select(idx, limit)
          const newest = newestStart.at(-1) ?? transcript.length
          const minimal = size(transcript.slice(0, 2)) + size(transcript.slice(newest))
          if (Either.isLeft(selection)) {
            assert.isAbove(minimal, limit)
            return
          }
          const view = ContextWindow.view(transcript, selection.right)
          assert.isTrue(Either.isRight(Transcript.check(view)))
          assert.deepStrictEqual(view.slice(0, 2), transcript.slice(0, 2))
          assert.isTrue(view.length >= 2 + transcript.length - newest)
          assert.deepStrictEqual(view.slice(view.length - (transcript.length - newest)), transcript.slice(newest))
          assert.isAtMost(size(view), limit)
          assert.strictEqual(selection.right.size, size(view))
          // Maximal: one more (older) group would not have fit.
          const earlier = newestStart.filter((s) => s < selection.right.start).at(-1)
          if (earlier !== undefined) assert.isAbove(size(view) + size(transcript.slice(earlier, selection.right.start)), limit)
        }
      ),
      { numRuns: 1000 }
    ))
})

describe("Agent.run with a context window", () => {
  const big = (label: string) => ({ ms: 0, label: label + "-".repeat(200) })
  const script = [
    S.calls(S.call("slow", big("one")), S.call("slow", big("two"))),
    S.calls(S.call("slow", big("three"))),
    S.calls(S.call("slow", big("four"))),
    S.text("done")
  ]

  it.effect("every request keeps the pinned part and whole groups; older groups drop out", () =>
    Effect.gen(function*() {
      const log = yield* makeLog
      const result = yield* Agent.run({ prompt: "the task", system: "sys", toolkit: Tools, context: { maxChars: 1200 } }).pipe(
        Effect.provide(toolsLayer(log))
      )
      assert.strictEqual(result.answer, "done")
      assert.strictEqual(result.transcript.length, 2 + 6 + 1)
      const requests = yield* (yield* S.ScriptedModel).requests
      for (const request of requests) {
        assert.strictEqual(request.messages[0]!.role, "system")
        assert.strictEqual(request.messages[1]!.role, "user")
        assert.isTrue(Either.isRight(Transcript.check(request.messages)))
        assert.isAtMost(request.messages.reduce((n, m) => n + ContextWindow.charSize(m), 0), 1200)
      }
      // The last request could not hold the first batch any more.
      assert.isBelow(requests[3]!.messages.length, result.transcript.length - 1)
    }).pipe(Effect.provide(S.layer(script))))

  it.effect("ends with ContextLimit when the newest group alone does not fit", () =>
    Effect.gen(function*() {
      const log = yield* makeLog
      const error = yield* Effect.flip(
        Agent.run({ prompt: "the task", toolkit: Tools, context: { maxChars: 300 } }).pipe(Effect.provide(toolsLayer(log)))
      )
      assert(error._tag === "ContextLimit")
      assert.strictEqual(error.unit, "chars")
      assert.strictEqual(error.limit, 300)
      assert.isAbove(error.required, 300)
      assert.strictEqual(error.snapshot.steps, 1)
      assert.isTrue(Either.isRight(Transcript.check(error.snapshot.transcript)))
    }).pipe(Effect.provide(S.layer(script))))

  it.effect("ends with ContextLimit before the first request when the task alone does not fit", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Agent.run({ prompt: "x".repeat(100), toolkit: Tools, context: { maxChars: 50 } }))
      assert(error._tag === "ContextLimit")
      assert.strictEqual(error.required, 100)
      assert.strictEqual((yield* (yield* S.ScriptedModel).requests).length, 0)
    }).pipe(Effect.provide(toolsLayer({} as never)), Effect.provide(S.layer([]))))

  it.effect("counts tokens with the Tokenizer when the limit is in tokens", () =>
    Effect.gen(function*() {
      const log = yield* makeLog
      const counted = yield* Ref.make(0)
      // Every message is 100 tokens: room for the pinned part and two more messages.
      const tokenizer = Tokenizer.make({
        tokenize: (prompt) => Effect.as(Ref.update(counted, (n) => n + 1), Array.from({ length: 100 * prompt.content.length }, (_, i) => i))
      })
      const result = yield* Agent.run({ prompt: "the task", system: "sys", toolkit: Tools, context: { maxTokens: 450 } }).pipe(
        Effect.provide(toolsLayer(log)),
        Effect.provideService(Tokenizer.Tokenizer, tokenizer)
      )
      assert.strictEqual(result.answer, "done")
      const requests = yield* (yield* S.ScriptedModel).requests
      assert.deepStrictEqual(requests.map((r) => r.messages.length), [2, 4, 4, 4])
      // Each message was measured once, when recorded: 2 + 2 per batch turn.
      assert.strictEqual(yield* Ref.get(counted), 2 + 2 * 3 + 1)
    }).pipe(Effect.provide(S.layer(script))))

  it.effect("a token limit without a Tokenizer is refused up front", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Agent.run({ prompt: "go", toolkit: Tools, context: { maxTokens: 10 }, maxToolResultTokens: 5 }))
      assert(error._tag === "InvalidOptions")
      assert.include(error.message, "context.maxTokens needs a Tokenizer")
      assert.include(error.message, "maxToolResultTokens needs a Tokenizer")
    }).pipe(Effect.provide(toolsLayer({} as never)), Effect.provide(S.layer([]))))

  it.effect("the compaction hook replaces dropped groups with its summary; the view stays valid", () =>
    Effect.gen(function*() {
      const log = yield* makeLog
      const compacted = yield* Ref.make<ReadonlyArray<number>>([])
      const result = yield* Agent.run({
        prompt: "the task",
        system: "sys",
        toolkit: Tools,
        context: {
          maxChars: 1200,
          compact: (dropped) =>
            Effect.as(Ref.update(compacted, (all) => [...all, dropped.length]), user(`summary of ${dropped.length} messages`))
        }
      }).pipe(Effect.provide(toolsLayer(log)))
      assert.strictEqual(result.answer, "done")
      assert.isAbove((yield* Ref.get(compacted)).length, 0)
      const requests = yield* (yield* S.ScriptedModel).requests
      const last = requests.at(-1)!.messages
      assert.isTrue(Either.isRight(Transcript.check(last)))
      const summary = last[2]!
      assert(summary.role === "user" && summary.content[0]?.type === "text")
      assert.match(summary.content[0].text, /^summary of \d+ messages$/)
      // The kept transcript is whole: compaction only changes what is sent.
      assert.strictEqual(result.transcript.length, 9)
    }).pipe(Effect.provide(S.layer(script))))

  it.effect("bounds tool results before they enter the transcript, successes and errors alike", () =>
    Effect.gen(function*() {
      const log = yield* makeLog
      const result = yield* Agent.run({ prompt: "go", toolkit: Tools, maxToolResultChars: 30 }).pipe(Effect.provide(toolsLayer(log)))
      const [ok, failed] = toolResults(result.transcript)
      assert.strictEqual((ok!.data as string).length, 30)
      assert.include(ok!.data as string, "chars omitted")
      assert.strictEqual((failed!.error as { message: string }).message.length, 30)
      assert.isDefined(failed!.truncated)
    }).pipe(Effect.provide(S.layer([
      S.calls(S.call("slow", { ms: 0, label: "y".repeat(100) }), S.call("nope_" + "n".repeat(50), {})),
      S.text("done")
    ]))))
})

describe("provider metadata", () => {
  const thinking = { anthropic: { info: { type: "thinking", signature: "sig-abc" } } }
  const reasoningItem = { openai: { itemId: "rs_1", encryptedContent: "enc-xyz" } }
  const callItem = { openai: { itemId: "fc_1" } }

  it.effect("survives into the next request and through JSON", () =>
    Effect.gen(function*() {
      const log = yield* makeLog
      const result = yield* Agent.run({ prompt: "go", toolkit: Tools }).pipe(Effect.provide(toolsLayer(log)))
      const requests = yield* (yield* S.ScriptedModel).requests
      const assistant = requests[1]!.messages[1]!
      assert(assistant.role === "assistant")
      assert.deepStrictEqual(assistant.content.map((p) => [p.type, p.options]), [
        ["reasoning", { ...thinking, ...reasoningItem }],
        ["text", {}],
        ["tool-call", callItem]
      ])
      const json = yield* Schema.encode(Transcript.Json)(result.transcript)
      assert.include(json, "sig-abc")
      assert.include(json, "enc-xyz")
      const back = yield* Schema.decode(Transcript.Json)(json)
      assert.deepStrictEqual(back, result.transcript)
    }).pipe(Effect.provide(S.layer([
      S.parts([
        { type: "reasoning", text: "let me think", metadata: { ...thinking, ...reasoningItem } },
        { type: "text", text: "adding" },
        { type: "tool-call", id: "call_9", name: "add", params: { a: 1, b: 2 }, metadata: callItem },
        { type: "finish", reason: "tool-calls", usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }
      ]),
      S.text("3")
    ]))))
})

