/**
 * The streaming recordings: decoded by each provider's `streamText` against the local
 * server, and driving `Agent.run({ streaming: true })`, which folds each stream into the
 * same turn `generateText` would give.
 */
import { Agent } from "@agent-harness/core"
import { LanguageModel, type Response, Tool, Toolkit } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Schema, Stream } from "effect"
import * as ProviderServer from "./ProviderServer.js"
import { anthropic, type Fixture, openAi } from "./providers.js"

const OPENAI_SSE: Fixture = "openai/stream-reasoning-then-function-call.sse"
const OPENAI_TURNS: Fixture = "openai/stream-reasoning-function-calls-multi-turn.data.jsonl"
const ANTHROPIC_SSE: Fixture = "anthropic/stream-thinking-then-text.sse"
const ANTHROPIC_TOOLS: Fixture = "anthropic/stream-tool-use-parallel.data.jsonl"
const FINAL_CACHE: Fixture = "anthropic/message-end-turn-text-cache-usage.json"

type Event = { readonly type: string; readonly [key: string]: unknown }

/** The events of a recording, in order (`.sse`: its `data:` lines; `.data.jsonl`: its lines). */
const events = (name: Fixture): ReadonlyArray<Event> =>
  (name.endsWith(".sse")
    ? ProviderServer.readFixture(name).split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6))
    : ProviderServer.dataLines(name)).map((line) => JSON.parse(line) as Event)

/** The recorded OpenAI responses of a multi-response recording, each a list of data lines. */
const openAiTurns = (name: Fixture): ReadonlyArray<ReadonlyArray<string>> => {
  const turns: Array<Array<string>> = []
  for (const line of ProviderServer.dataLines(name)) {
    if ((JSON.parse(line) as Event).type === "response.created") turns.push([])
    turns.at(-1)?.push(line)
  }
  return turns
}

const doneItems = (list: ReadonlyArray<Event>) =>
  list.filter((e) => e.type === "response.output_item.done").map((e) => e.item as Record<string, unknown>)

const FinalResult = Tool.make("final_result", { parameters: { result: Schema.Int }, success: Schema.String })
const Calculator = Tool.make("calculator", {
  parameters: { a: Schema.Number, b: Schema.Number, op: Schema.Literal("add", "subtract", "multiply", "divide") },
  success: Schema.Number
})
const SearchDocs = Tool.make("searchDocs", { parameters: { query: Schema.String }, success: Schema.Array(Schema.String) })
const OpenAiTools = Toolkit.make(FinalResult, Calculator)
const openAiHandlers = OpenAiTools.toLayer({
  final_result: ({ result }) => Effect.succeed(`recorded ${result}`),
  calculator: ({ a, b, op }) => Effect.succeed(op === "add" ? a + b : op === "subtract" ? a - b : op === "multiply" ? a * b : a / b)
})
const AnthropicTools = Toolkit.make(SearchDocs)
/** Both sets: the handlers above serve it, as handlers belong to tools, not toolkits. */
const AllTools = Toolkit.make(FinalResult, Calculator, SearchDocs)
const anthropicHandlers = AnthropicTools.toLayer({ searchDocs: ({ query }) => Effect.succeed([`${query}.md`]) })

type Part = Response.AnyPart
const collect = <P extends Part, E, R>(stream: Stream.Stream<P, E, R>) =>
  Effect.map(Stream.runCollect(stream), (chunk): ReadonlyArray<Part> => Chunk.toArray(chunk))
const openAiMeta = (part: Part | undefined) => (part?.metadata as { openai?: Record<string, unknown> } | undefined)?.openai
const anthropicMeta = (part: Part | undefined) => (part?.metadata as { anthropic?: Record<string, unknown> } | undefined)?.anthropic

describe("streamText decodes each recording", () => {
  it.scoped("OpenAI: reasoning with encrypted content (start and end), the call with its ids and params, usage", () =>
    Effect.gen(function*() {
      const server = yield* ProviderServer.make([ProviderServer.Reply.sseFixture(OPENAI_SSE)])
      const parts = yield* collect(LanguageModel.streamText({ prompt: "compute", toolkit: OpenAiTools, disableToolCallResolution: true })).pipe(
        Effect.provide(openAi(server)),
        Effect.provide(openAiHandlers)
      )
      assert.strictEqual((server.requests[0]?.json as { stream?: boolean }).stream, true)
      const recorded = events(OPENAI_SSE)
      const added = recorded.find((e) => e.type === "response.output_item.added")?.item as Record<string, unknown>
      const [reasoning, call] = doneItems(recorded)
      const start = parts.find((p) => p.type === "reasoning-start")
      const end = parts.find((p) => p.type === "reasoning-end")
      assert.deepStrictEqual(openAiMeta(start), { itemId: added.id, encryptedContent: added.encrypted_content })
      // The item is re-encrypted by the time it is done: the end carries the final blob.
      assert.deepStrictEqual(openAiMeta(end), { itemId: reasoning!.id, encryptedContent: reasoning!.encrypted_content })
      assert.notStrictEqual(added.encrypted_content, reasoning!.encrypted_content)
      const calls = parts.filter((p) => p.type === "tool-call")
      assert.deepStrictEqual(calls.map((p) => [p.id, p.name, p.params, openAiMeta(p)?.itemId]), [
        [call!.call_id, "final_result", { result: 6666 }, call!.id]
      ])
      const finish = parts.find((p) => p.type === "finish")
      assert.strictEqual(finish?.reason, "tool-calls")
      assert.deepStrictEqual(finish?.usage, { inputTokens: 53, outputTokens: 469, totalTokens: 522, reasoningTokens: 448, cachedInputTokens: 0 })
    }))

  it.scoped("Anthropic: thinking deltas, the signature as delta metadata, text, stop reason and usage", () =>
    Effect.gen(function*() {
      const server = yield* ProviderServer.make([ProviderServer.Reply.sseFixture(ANTHROPIC_SSE)])
      const parts = yield* collect(LanguageModel.streamText({ prompt: "how far?" })).pipe(Effect.provide(anthropic(server)))
      const recorded = events(ANTHROPIC_SSE)
      const deltas = recorded.filter((e) => e.type === "content_block_delta").map((e) => e.delta as Record<string, string>)
      const thinking = deltas.filter((d) => d.type === "thinking_delta").map((d) => d.thinking).join("")
      const signature = deltas.find((d) => d.type === "signature_delta")?.signature
      const text = deltas.filter((d) => d.type === "text_delta").map((d) => d.text).join("")
      assert.isAbove(thinking.length, 0)
      assert.isAbove(signature?.length ?? 0, 0)
      const reasoningDeltas = parts.filter((p) => p.type === "reasoning-delta")
      assert.strictEqual(reasoningDeltas.map((p) => p.delta).join(""), thinking)
      assert.deepStrictEqual(reasoningDeltas.map(anthropicMeta).filter((m) => m !== undefined), [{ type: "thinking", signature }])
      assert.strictEqual(parts.filter((p) => p.type === "text-delta").map((p) => p.delta).join(""), text)
      const finish = parts.find((p) => p.type === "finish")
      const usage = recorded.find((e) => e.type === "message_delta")?.usage as { output_tokens: number }
      assert.strictEqual(finish?.reason, "stop")
      assert.strictEqual(finish?.usage.outputTokens, usage.output_tokens)
      assert.strictEqual(finish?.usage.inputTokens, 43)
    }))

  it.scoped("Anthropic: three parallel tool_use blocks from input_json_delta chunks, with ids and params", () =>
    Effect.gen(function*() {
      const server = yield* ProviderServer.make([ProviderServer.Reply.dataFixture(ANTHROPIC_TOOLS)])
      const parts = yield* collect(
        LanguageModel.streamText({ prompt: "search", toolkit: AnthropicTools, disableToolCallResolution: true })
      ).pipe(Effect.provide(anthropic(server)), Effect.provide(anthropicHandlers))
      const starts = events(ANTHROPIC_TOOLS).filter((e) => e.type === "content_block_start").map((e) => e.content_block as { id: string })
      const calls = parts.filter((p) => p.type === "tool-call")
      assert.deepStrictEqual(calls.map((p) => [p.id, p.name, p.params]), [
        [starts[0]!.id, "searchDocs", { query: "alpha" }],
        [starts[1]!.id, "searchDocs", { query: "beta" }],
        [starts[2]!.id, "searchDocs", { query: "gamma" }]
      ])
      const finish = parts.find((p) => p.type === "finish")
      assert.strictEqual(finish?.reason, "tool-calls")
      assert.strictEqual(finish?.usage.outputTokens, 110)
    }))
})

describe("Agent.run({ streaming: true })", () => {
  it.scoped("OpenAI: four recorded streamed turns; the reasoning item goes back with its final encrypted content", () =>
    Effect.gen(function*() {
      const turns = openAiTurns(OPENAI_TURNS)
      assert.strictEqual(turns.length, 4)
      const server = yield* ProviderServer.make(turns.map((lines) => ProviderServer.Reply.sse(ProviderServer.sseFromData(lines))))
      const result = yield* Agent.run({ prompt: "((12 + 7) * 3) * 10", toolkit: OpenAiTools, streaming: true }).pipe(
        Effect.provide(openAi(server, "gpt-5.1-codex-max")),
        Effect.provide(openAiHandlers)
      )
      assert.strictEqual(result.answer, "The final result is **570**.")
      assert.strictEqual(result.steps, 4)
      const perTurn = turns.map((lines) => doneItems(lines.map((line) => JSON.parse(line) as Event)))
      const [reasoning, firstCall] = perTurn[0]!
      const inputs = server.requests.map((r) => (r.json as { stream: boolean; input: ReadonlyArray<Record<string, unknown>> }))
      for (const body of inputs) assert.strictEqual(body.stream, true)
      const second = inputs[1]!.input
      assert.deepStrictEqual(second.map((item) => item.type ?? item.role), ["user", "reasoning", "function_call", "function_call_output"])
      assert.deepStrictEqual(second[1], {
        id: reasoning!.id,
        type: "reasoning",
        summary: reasoning!.summary,
        encrypted_content: reasoning!.encrypted_content
      })
      assert.deepStrictEqual([second[2]?.id, second[2]?.call_id, second[3]?.call_id], [firstCall!.id, firstCall!.call_id, firstCall!.call_id])
      assert.strictEqual(JSON.parse(String(second[3]?.output)).data, 19)
      const outputs = inputs[3]!.input.filter((item) => item.type === "function_call_output")
      assert.deepStrictEqual(outputs.map((o) => o.call_id), perTurn.slice(0, 3).map((items) => items.at(-1)!.call_id))
      assert.deepStrictEqual(outputs.map((o) => JSON.parse(String(o.output)).data), [19, 57, 570])
      assert.deepStrictEqual(result.usage, {
        calls: 4,
        reportedCalls: 4,
        inputTokens: 134 + 221 + 260 + 299,
        outputTokens: 28 + 26 + 26 + 12,
        totalTokens: 162 + 247 + 286 + 311,
        reasoningTokens: 0,
        cachedInputTokens: 0
      })
    }))

  it.scoped("OpenAI: a reasoning item with no summary keeps its encrypted content when streamed", () =>
    Effect.gen(function*() {
      const finalTurn = openAiTurns(OPENAI_TURNS)[3]!
      const server = yield* ProviderServer.make([
        ProviderServer.Reply.sseFixture(OPENAI_SSE),
        ProviderServer.Reply.sse(ProviderServer.sseFromData(finalTurn))
      ])
      yield* Agent.run({ prompt: "compute", toolkit: OpenAiTools, streaming: true }).pipe(
        Effect.provide(openAi(server)),
        Effect.provide(openAiHandlers)
      )
      const [reasoning, call] = doneItems(events(OPENAI_SSE))
      const second = (server.requests[1]?.json as { input: ReadonlyArray<Record<string, unknown>> }).input
      assert.deepStrictEqual(second.slice(1), [
        { id: reasoning!.id, type: "reasoning", summary: [], encrypted_content: reasoning!.encrypted_content },
        { id: call!.id, type: "function_call", call_id: call!.call_id, name: "final_result", arguments: "{\"result\":6666}" },
        second[3]!
      ])
      assert.strictEqual(second[3]?.call_id, call!.call_id)
    }))

  it.scoped("Anthropic: streamed parallel calls answered by id; the streamed thinking signature goes back on the next run", () =>
    Effect.gen(function*() {
      const server = yield* ProviderServer.make([
        ProviderServer.Reply.dataFixture(ANTHROPIC_TOOLS),
        ProviderServer.Reply.sseFixture(ANTHROPIC_SSE),
        ProviderServer.Reply.fixture(FINAL_CACHE)
      ])
      const first = yield* Agent.run({ prompt: "search alpha, beta, gamma", toolkit: AnthropicTools, streaming: true }).pipe(
        Effect.provide(anthropic(server)),
        Effect.provide(anthropicHandlers)
      )
      const recorded = events(ANTHROPIC_SSE)
      const deltas = recorded.filter((e) => e.type === "content_block_delta").map((e) => e.delta as Record<string, string>)
      const thinking = deltas.filter((d) => d.type === "thinking_delta").map((d) => d.thinking).join("")
      const signature = deltas.find((d) => d.type === "signature_delta")?.signature
      const text = deltas.filter((d) => d.type === "text_delta").map((d) => d.text).join("")
      assert.strictEqual(first.answer, text)
      const ids = events(ANTHROPIC_TOOLS).filter((e) => e.type === "content_block_start").map((e) => (e.content_block as { id: string }).id)
      const second = (server.requests[1]?.json as { messages: ReadonlyArray<{ role: string; content: ReadonlyArray<Record<string, unknown>> }> }).messages
      assert.deepStrictEqual(second[1]?.content.map((b) => b.id), ids)
      assert.deepStrictEqual(second[2]?.content.map((b) => [b.type, b.tool_use_id]), ids.map((id) => ["tool_result", id]))
      // A later, non-streamed run continues the transcript: the streamed thinking block is sent whole.
      yield* Agent.run({ prompt: "and which is best?", toolkit: AnthropicTools, transcript: first.transcript }).pipe(
        Effect.provide(anthropic(server)),
        Effect.provide(anthropicHandlers)
      )
      const third = (server.requests[2]?.json as { messages: ReadonlyArray<{ role: string; content: ReadonlyArray<Record<string, unknown>> }> }).messages
      assert.deepStrictEqual(third[3]?.content, [
        { type: "thinking", thinking, signature },
        { type: "text", text }
      ])
    }))

  for (const [label, provider, body] of [
    ["openai", openAi, ProviderServer.Reply.sse(ProviderServer.sseFromData(openAiTurns(OPENAI_TURNS)[0]!))],
    ["anthropic", anthropic, ProviderServer.Reply.dataFixture(ANTHROPIC_TOOLS)]
  ] as const) {
    const cutRun = Effect.gen(function*() {
      const server = yield* ProviderServer.make([ProviderServer.Reply.cut(body, 1500)])
      const error = yield* Agent.run({ prompt: "go", toolkit: AllTools, streaming: true, retry: false }).pipe(
        Effect.provide(provider(server)),
        Effect.provide(openAiHandlers),
        Effect.provide(anthropicHandlers),
        Effect.flip
      )
      if (error._tag !== "ModelError") return assert.fail(`expected a ModelError, got ${error._tag}`)
      assert.strictEqual(error.snapshot.toolCalls, 0)
      return error
    })

    // As for a cut JSON body (Errors.test.ts): the lost connection arrives as
    // HttpResponseError "Decode", which the harness reads as transport (and retries).
    it.scoped(`${label}: a stream cut off midway ends the run with transport before any tool runs`, () =>
      Effect.map(cutRun, (error) => assert.strictEqual(error.reason, "transport")))
  }
})
