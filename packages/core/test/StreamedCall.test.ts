import { Agent } from "@agent-harness/core"
import { LanguageModel, Response } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Option, Stream } from "effect"
import { collectStream } from "../src/internal/model.js"
import { makeLog, Tools, toolsLayer } from "./fixtures.js"

const part = Response.makePart

describe("collectStream", () => {
  it("joins deltas per block in start order and merges start, delta and end metadata", () => {
    const parts = [
      part("response-metadata", { id: Option.some("r"), modelId: Option.some("m"), timestamp: Option.none() }),
      part("reasoning-start", { id: "a", metadata: { p: { itemId: "rs_1", encrypted: "early" } } }),
      part("text-start", { id: "t", metadata: { p: { itemId: "msg_1" } } }),
      part("reasoning-delta", { id: "a", delta: "thin", metadata: {} }),
      part("text-delta", { id: "t", delta: "Hel", metadata: {} }),
      part("reasoning-delta", { id: "a", delta: "king", metadata: { q: { signature: "sig" } } }),
      part("text-delta", { id: "t", delta: "lo", metadata: {} }),
      part("reasoning-end", { id: "a", metadata: { p: { encrypted: "final", itemId: undefined } } }),
      part("text-end", { id: "t", metadata: {} }),
      part("tool-params-start", { id: "c", name: "add", providerExecuted: false, metadata: {} }),
      part("tool-call", { id: "c", name: "add", params: { a: 1, b: 2 }, providerExecuted: false, metadata: {} }),
      part("finish", { reason: "tool-calls", usage: new Response.Usage({ inputTokens: 1, outputTokens: 2, totalTokens: 3 }), metadata: {} })
    ]
    const collected = collectStream(parts)
    assert.isTrue(Either.isRight(collected))
    if (Either.isLeft(collected)) return
    assert.deepStrictEqual(collected.right.map((p) => p.type), ["response-metadata", "reasoning", "text", "tool-call", "finish"])
    const [, reasoning, text] = collected.right
    assert.strictEqual(reasoning?.type === "reasoning" ? reasoning.text : undefined, "thinking")
    // A later undefined never erases an earlier value; a later value replaces it.
    assert.deepStrictEqual(reasoning?.metadata, { p: { itemId: "rs_1", encrypted: "final" }, q: { signature: "sig" } })
    assert.strictEqual(text?.type === "text" ? text.text : undefined, "Hello")
    assert.deepStrictEqual(text?.metadata, { p: { itemId: "msg_1" } })
  })

  it("an error part in the stream fails the call as unavailable", () => {
    const collected = collectStream([part("text-delta", { id: "t", delta: "x", metadata: {} }), part("error", { error: { code: "server_error" }, metadata: {} })])
    assert.isTrue(Either.isLeft(collected))
    if (Either.isRight(collected)) return
    assert.strictEqual(collected.left.reason, "unavailable")
    assert.include(collected.left.description, "server_error")
  })
})

describe("Agent.run({ streaming: true })", () => {
  const streamingModel = (turns: ReadonlyArray<ReadonlyArray<Response.StreamPartEncoded>>) =>
    Layer.effect(
      LanguageModel.LanguageModel,
      Effect.gen(function*() {
        let step = 0
        return yield* LanguageModel.make({
          generateText: () => Effect.dieMessage("a streaming run must not call generateText"),
          streamText: () => Stream.fromIterable(turns[step++] ?? [])
        })
      })
    )

  it.effect("runs the calls of a streamed turn and answers from the streamed text", () =>
    Effect.gen(function*() {
      const log = yield* makeLog
      const result = yield* Agent.run({ prompt: "add", toolkit: Tools, streaming: true }).pipe(
        Effect.provide(toolsLayer(log)),
        Effect.provide(streamingModel([
          [
            { type: "tool-params-start", id: "c1", name: "add" },
            { type: "tool-params-delta", id: "c1", delta: "{\"a\":2,\"b\":3}" },
            { type: "tool-params-end", id: "c1" },
            { type: "tool-call", id: "c1", name: "add", params: { a: 2, b: 3 } },
            { type: "finish", reason: "tool-calls", usage: { inputTokens: 5, outputTokens: 1, totalTokens: 6 } }
          ],
          [
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "2 + 3 " },
            { type: "text-delta", id: "t", delta: "= 5" },
            { type: "text-end", id: "t" },
            { type: "finish", reason: "stop", usage: { inputTokens: 9, outputTokens: 4, totalTokens: 13 } }
          ]
        ]))
      )
      assert.strictEqual(result.answer, "2 + 3 = 5")
      assert.strictEqual(result.toolCalls, 1)
      assert.deepStrictEqual(result.usage, { calls: 2, reportedCalls: 2, inputTokens: 14, outputTokens: 5, totalTokens: 19 })
    }))

  it.effect("a stream that reports an error ends the run with a ModelError", () =>
    Effect.gen(function*() {
      const log = yield* makeLog
      const error = yield* Agent.run({ prompt: "add", toolkit: Tools, streaming: true }).pipe(
        Effect.provide(toolsLayer(log)),
        Effect.provide(streamingModel([[{ type: "error", error: { type: "overloaded_error" } }]])),
        Effect.flip
      )
      assert.strictEqual(error._tag, "ModelError")
      if (error._tag === "ModelError") assert.strictEqual(error.reason, "unavailable")
    }))

  it.effect("a streamed call to an unknown tool fails the step as malformed_output (no raw-part recovery for streams)", () =>
    Effect.gen(function*() {
      const log = yield* makeLog
      const error = yield* Agent.run({ prompt: "add", toolkit: Tools, streaming: true }).pipe(
        Effect.provide(toolsLayer(log)),
        Effect.provide(streamingModel([[
          { type: "tool-call", id: "c1", name: "no_such_tool", params: {} },
          { type: "finish", reason: "tool-calls", usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }
        ]])),
        Effect.flip
      )
      assert.strictEqual(error._tag, "ModelError")
      if (error._tag === "ModelError") assert.strictEqual(error.reason, "malformed_output")
    }))
})
