/**
 * `Agent.run` over the real `@effect/ai-openai` provider (Responses API), served the
 * recorded responses by a local server: what the follow-up requests carry.
 */
import { Agent } from "@agent-harness/core"
import { StrictSchema } from "@agent-harness/testing"
import { Tool, Toolkit } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as ProviderServer from "./ProviderServer.js"
import { type Fixture, openAi } from "./providers.js"

const GetCapital = Tool.make("get_capital", {
  description: "The capital of a country",
  parameters: { country: Schema.String },
  success: Schema.String
})
const GetLocation = Tool.make("get_location", {
  parameters: { loc_name: Schema.String },
  success: Schema.Struct({ lat: Schema.Number, lng: Schema.Number })
})
const UpdatePlan = Tool.make("update_plan", { parameters: { plan: Schema.NonEmptyString }, success: Schema.String })
/** Never called by the recordings; here for the schema it advertises. */
const DraftInvoice = Tool.make("draft_invoice", {
  parameters: {
    customer: Schema.NonEmptyString,
    lines: Schema.Array(Schema.Struct({ sku: Schema.String, qty: Schema.Int, note: Schema.optional(Schema.String) })),
    currency: Schema.Literal("EUR", "USD"),
    dueInDays: Schema.optional(Schema.Int)
  },
  success: Schema.String
})
const Tools = Toolkit.make(GetCapital, GetLocation, UpdatePlan, DraftInvoice)
const handlers = Tools.toLayer({
  get_capital: ({ country }) => Effect.succeed(`capital of ${country}`),
  get_location: ({ loc_name }) => Effect.succeed(loc_name === "London" ? { lat: 51.5, lng: -0.12 } : { lat: 0, lng: 0 }),
  update_plan: () => Effect.succeed("plan updated"),
  draft_invoice: () => Effect.succeed("INV-1")
})

interface RawResponse {
  readonly output: ReadonlyArray<Record<string, unknown>>
  readonly usage: {
    readonly input_tokens: number
    readonly output_tokens: number
    readonly input_tokens_details: { readonly cached_tokens: number }
    readonly output_tokens_details: { readonly reasoning_tokens: number }
  }
}
const recorded = (name: Fixture): RawResponse => JSON.parse(ProviderServer.readFixture(name)) as RawResponse
const reply = (name: Fixture) => ProviderServer.Reply.fixture(name)

type Item = Record<string, unknown>
const input = (request: ProviderServer.RecordedRequest | undefined): ReadonlyArray<Item> =>
  (request?.json as { input?: ReadonlyArray<Item> } | undefined)?.input ?? []
const outputsOf = (items: ReadonlyArray<Item>) =>
  items.filter((item) => item.type === "function_call_output").map((item) => ({
    call_id: item.call_id,
    output: JSON.parse(String(item.output)) as { status: string; data: unknown; metadata: { callId: string } }
  }))

const SINGLE: Fixture = "openai/response-function-call-single.json"
const PARALLEL: Fixture = "openai/response-function-call-parallel.json"
const REASONING: Fixture = "openai/response-reasoning-then-function-call.json"
const FINAL_CACHED: Fixture = "openai/response-final-message-after-tool-call-cached-tokens.json"
const FINAL_PHASES: Fixture = "openai/response-final-messages-reasoning-and-cached-tokens.json"

describe("OpenAI Responses on the wire", () => {
  it.scoped("a four-step run sends every result with its call id, and the reasoning item back before its call", () =>
    Effect.gen(function*() {
      const server = yield* ProviderServer.make([reply(SINGLE), reply(PARALLEL), reply(REASONING), reply(FINAL_CACHED)])
      const result = yield* Agent.run({ prompt: "Plan an acrostic of capitals", toolkit: Tools }).pipe(
        Effect.provide(openAi(server)),
        Effect.provide(handlers)
      )
      const [first, second, third, fourth] = server.requests
      assert.strictEqual(server.requests.length, 4)
      assert.strictEqual(server.pending(), 0)
      for (const request of server.requests) {
        assert.strictEqual(request.method, "POST")
        assert.strictEqual(request.path, "/v1/responses")
        assert.strictEqual(request.headers.authorization, "Bearer sk-test")
      }

      // The tools, as strict function tools OpenAI accepts.
      const tools = (first?.json as { tools: ReadonlyArray<{ type: string; name: string; strict: boolean; parameters: unknown }> }).tools
      assert.deepStrictEqual(tools.map((t) => [t.type, t.name, t.strict]), [
        ["function", "get_capital", true],
        ["function", "get_location", true],
        ["function", "update_plan", true],
        ["function", "draft_invoice", true]
      ])
      for (const tool of tools) assert.deepStrictEqual(StrictSchema.violations(tool.parameters), [], tool.name)
      assert.deepStrictEqual(tools[0]?.parameters, {
        type: "object",
        required: ["country"],
        properties: { country: { type: "string" } },
        additionalProperties: false
      })
      const invoice = tools[3]?.parameters as { required: ReadonlyArray<string>; properties: Record<string, unknown> }
      assert.deepStrictEqual(invoice.required, ["customer", "lines", "currency", "dueInDays"])

      // Request 2 answers the single call.
      const single = recorded(SINGLE).output[0]!
      const items2 = input(second)
      assert.deepStrictEqual(items2.map((item) => item.type ?? item.role), ["user", "function_call", "function_call_output"])
      assert.deepStrictEqual(items2[1], {
        id: single.id,
        type: "function_call",
        call_id: single.call_id,
        name: "get_capital",
        arguments: single.arguments
      })
      const out2 = outputsOf(items2)
      assert.deepStrictEqual(out2.map((o) => [o.call_id, o.output.status, o.output.data]), [
        [single.call_id, "success", "capital of PotatoLand"]
      ])

      // Request 3 answers both parallel calls, in the model's order.
      const parallel = recorded(PARALLEL).output
      const out3 = outputsOf(input(third))
      assert.deepStrictEqual(out3.map((o) => o.call_id), [single.call_id, parallel[0]!.call_id, parallel[1]!.call_id])
      assert.deepStrictEqual(out3[2]?.output.data, { lat: 51.5, lng: -0.12 })
      for (const o of out3) assert.strictEqual(o.output.metadata.callId, o.call_id)

      // Request 4 sends the reasoning item back (id, encrypted content, every summary) right before its call.
      const [reasoning, planCall] = recorded(REASONING).output
      const items4 = input(fourth)
      const at = items4.findIndex((item) => item.type === "reasoning")
      assert.isAtLeast(at, 0)
      assert.deepStrictEqual(items4[at], {
        id: reasoning!.id,
        type: "reasoning",
        summary: reasoning!.summary,
        encrypted_content: reasoning!.encrypted_content
      })
      assert.deepStrictEqual(items4[at + 1]?.call_id, planCall!.call_id)
      assert.deepStrictEqual(items4[at + 1]?.id, planCall!.id)
      assert.deepStrictEqual(outputsOf(items4).at(-1)?.call_id, planCall!.call_id)
      assert.strictEqual(items4.length, 1 + 2 + 4 + 3)

      // The answer and the usage of all four calls, cached and reasoning tokens included.
      const final = recorded(FINAL_CACHED)
      assert.strictEqual(result.answer, (final.output[0]!.content as ReadonlyArray<{ text: string }>)[0]!.text)
      assert.strictEqual(result.steps, 4)
      assert.strictEqual(result.toolCalls, 4)
      const usages = [SINGLE, PARALLEL, REASONING, FINAL_CACHED].map((name) => recorded(name).usage)
      const sum = (f: (u: RawResponse["usage"]) => number) => usages.reduce((n, u) => n + f(u), 0)
      assert.deepStrictEqual(result.usage, {
        calls: 4,
        reportedCalls: 4,
        inputTokens: sum((u) => u.input_tokens),
        outputTokens: sum((u) => u.output_tokens),
        totalTokens: sum((u) => u.input_tokens + u.output_tokens),
        reasoningTokens: 1792,
        cachedInputTokens: 2048
      })
      assert.strictEqual(sum((u) => u.output_tokens_details.reasoning_tokens), 1792)
    }))

  it.scoped("the trimmed recording as stored is refused by the provider's schema: a malformed_output ModelError", () =>
    Effect.gen(function*() {
      const server = yield* ProviderServer.make([reply(SINGLE), reply(FINAL_PHASES)])
      const error = yield* Agent.run({ prompt: "news?", toolkit: Tools, retry: false }).pipe(
        Effect.provide(openAi(server, "gpt-5.3-codex")),
        Effect.provide(handlers),
        Effect.flip
      )
      assert.strictEqual(error._tag, "ModelError")
      if (error._tag !== "ModelError") return
      assert.strictEqual(error.reason, "malformed_output")
      assert.include(error.description, "[\"error\"]")
      // The first step was done and answered before the refusal.
      assert.strictEqual(error.snapshot.steps, 1)
      assert.strictEqual(error.snapshot.toolCalls, 1)
    }))

  it.scoped("the trimmed two-message answer, its fields restored: both texts, their item ids, reasoning and cached tokens", () =>
    Effect.gen(function*() {
      // vercel/ai trimmed the top-level fields every real response has; these are the
      // values the API sends for a request like this one.
      const restored = {
        error: null,
        incomplete_details: null,
        instructions: null,
        metadata: {},
        parallel_tool_calls: true,
        temperature: 1,
        top_p: 1,
        tool_choice: "auto",
        tools: [],
        ...recorded(FINAL_PHASES)
      }
      const server = yield* ProviderServer.make([reply(SINGLE), ProviderServer.Reply.json(restored)])
      const result = yield* Agent.run({ prompt: "news?", toolkit: Tools }).pipe(
        Effect.provide(openAi(server, "gpt-5.3-codex")),
        Effect.provide(handlers)
      )
      const final = recorded(FINAL_PHASES)
      const texts = final.output.map((item) => (item.content as ReadonlyArray<{ text: string }>)[0]!.text)
      assert.strictEqual(result.answer, texts.join(""))
      const last = result.transcript.at(-1)
      assert.deepStrictEqual(
        last?.role === "assistant" ? last.content.map((part) => (part.options.openai as { itemId?: string } | undefined)?.itemId) : [],
        final.output.map((item) => item.id)
      )
      assert.strictEqual(result.usage.cachedInputTokens, 3072)
      assert.strictEqual(result.usage.reasoningTokens, 58)
      assert.strictEqual(result.usage.inputTokens, recorded(SINGLE).usage.input_tokens + final.usage.input_tokens)
    }))

  // Known gap in @effect/ai-openai's non-streamed decoding: a reasoning item without
  // summary parts becomes a reasoning part with only its item id, so its encrypted content
  // never reaches the next request (streamed, it does: see Streaming.test.ts). Derived
  // from the recording by emptying its summary, as reasoning without a summary is sent.
  it.scoped.fails("a reasoning item without a summary goes back with its encrypted content (fails: the provider drops it)", () =>
    Effect.gen(function*() {
      const raw = recorded(REASONING)
      const [reasoning] = raw.output
      const noSummary = { ...raw, output: raw.output.map((item) => item.type === "reasoning" ? { ...item, summary: [] } : item) }
      const server = yield* ProviderServer.make([ProviderServer.Reply.json(noSummary), reply(FINAL_CACHED)])
      yield* Agent.run({ prompt: "plan", toolkit: Tools }).pipe(Effect.provide(openAi(server)), Effect.provide(handlers))
      const sent = input(server.requests[1]).find((item) => item.type === "reasoning")
      assert.deepStrictEqual(sent, { id: reasoning!.id, type: "reasoning", summary: [], encrypted_content: reasoning!.encrypted_content })
    }))
})
