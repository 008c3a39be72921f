import { ToolOutput } from "@agent-harness/core"
import { AiError, Tokenizer } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"

const meta = { tool: "t", callId: "c", latencyMs: 0 }

/** One token per character: easy to reason about in assertions. */
const charTokenizer = Tokenizer.make({
  tokenize: (prompt) =>
    Effect.succeed(
      Array.from(prompt.content.flatMap((m) => m.role === "system" ? [m.content] : m.content.map((p) => p.type === "text" ? p.text : "")).join(""), (_, i) => i)
    )
})

describe("ToolOutput.truncate", () => {
  it("keeps text within the limit unchanged, also at exactly the limit", () => {
    assert.strictEqual(ToolOutput.truncate("hello", 10), "hello")
    assert.strictEqual(ToolOutput.truncate("hello", 5), "hello")
    assert.strictEqual(ToolOutput.truncate("", 0), "")
  })

  it("keeps head and tail with the marker counted inside the limit", () => {
    const text = "a".repeat(50) + "b".repeat(50)
    const out = ToolOutput.truncate(text, 40)
    assert.strictEqual(out.length, 40)
    const mark = ToolOutput.marker(100 - (40 - ToolOutput.marker(71).length))
    assert.strictEqual(out, "a".repeat(10) + mark + "b".repeat(10 - (mark.length - 20)))
    assert.include(out, "chars omitted")
  })

  it("gives the head the extra character of an odd room", () => {
    const text = "0123456789".repeat(10)
    const mark = ToolOutput.marker(100 - 5)
    const out = ToolOutput.truncate(text, mark.length + 5)
    assert.strictEqual(out, "012" + mark + "89")
  })

  it("leaves the tail empty when the room is one character", () => {
    const text = "x".repeat(1000)
    const mark = ToolOutput.marker(999)
    assert.strictEqual(ToolOutput.truncate(text, mark.length + 1), "x" + mark)
  })

  it("with a limit smaller than the marker, gives as much of the marker as fits", () => {
    assert.strictEqual(ToolOutput.truncate("y".repeat(1000), 5), "…[100")
    assert.strictEqual(ToolOutput.truncate("y".repeat(1000), 0), "")
  })

  it("never splits a surrogate pair", () => {
    const text = "😀".repeat(100)
    const out = ToolOutput.truncate(text, 41)
    assert.isAtMost(out.length, 41)
    assert.notMatch(out, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/)
    assert.notMatch(out, /(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/)
  })

  it("property: within the limit, a prefix and a suffix of the text, the omitted count exact", () =>
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.nat({ max: 320 }), (text, limit) => {
        const out = ToolOutput.truncate(text, limit)
        assert.isAtMost(out.length, limit)
        if (text.length <= limit) return assert.strictEqual(out, text)
        const match = /…\[(\d+) chars omitted\]…/.exec(out)
        if (match === null) return assert.isTrue(ToolOutput.marker(text.length).startsWith(out) || out.length === 0)
        const head = out.slice(0, match.index)
        const tail = out.slice(match.index + match[0].length)
        assert.isTrue(text.startsWith(head))
        assert.isTrue(text.endsWith(tail))
        assert.strictEqual(Number(match[1]), text.length - head.length - tail.length)
      }),
      { numRuns: 2000 }
    ))
})

describe("ToolOutput.bound", () => {
  it.effect("cuts a success's data as JSON text and says how long it was", () =>
    Effect.gen(function*() {
      const data = { rows: Array.from({ length: 100 }, (_, i) => i) }
      const out = yield* ToolOutput.bound({ status: "success", data, metadata: meta }, { maxChars: 60 }, undefined)
      assert.strictEqual(typeof out.data, "string")
      assert.strictEqual((out.data as string).length, 60)
      assert.deepStrictEqual(out.truncated, { originalChars: JSON.stringify(data).length })
    }))

  it.effect("cuts an error's message", () =>
    Effect.gen(function*() {
      const out = yield* ToolOutput.bound(
        { status: "fatal_error", error: { code: "X", message: "m".repeat(500) }, metadata: meta },
        { maxChars: 50 },
        undefined
      )
      assert.strictEqual(out.error?.message.length, 50)
      assert.strictEqual(out.error?.code, "X")
      assert.deepStrictEqual(out.truncated, { originalChars: 500 })
    }))

  it.effect("leaves a result within the limit untouched", () =>
    Effect.gen(function*() {
      const result = { status: "success" as const, data: "short", metadata: meta }
      assert.strictEqual(yield* ToolOutput.bound(result, { maxChars: 50 }, undefined), result)
    }))

  it.effect("bounds by tokens with a tokenizer", () =>
    Effect.gen(function*() {
      const out = yield* ToolOutput.bound({ status: "success", data: "z".repeat(1000), metadata: meta }, { maxTokens: 40 }, charTokenizer)
      assert.strictEqual((out.data as string).length, 40)
    }))

  it.effect("falls back to characters when the tokenizer fails", () =>
    Effect.gen(function*() {
      const broken = Tokenizer.make({
        tokenize: () => Effect.fail(new AiError.UnknownError({ module: "T", method: "tokenize" }))
      })
      const out = yield* ToolOutput.bound({ status: "success", data: "q".repeat(1000), metadata: meta }, { maxTokens: 10 }, broken)
      assert.strictEqual((out.data as string).length, 40)
    }))
})
