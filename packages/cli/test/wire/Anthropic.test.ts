/**
 * `Agent.run` over the real `@effect/ai-anthropic` provider (Messages API), served the
 * recorded responses by a local server: what the follow-up requests carry.
 */
import { Agent } from "@agent-harness/core"
import { StrictSchema } from "@agent-harness/testing"
import { Tool, Toolkit } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as ProviderServer from "./ProviderServer.js"
import { anthropic, type Fixture } from "./providers.js"

const GetUserCountry = Tool.make("get_user_country", { description: "The user's country", success: Schema.String })
const RetrieveEntityInfo = Tool.make("retrieve_entity_info", {
  parameters: { name: Schema.String },
  success: Schema.Struct({ name: Schema.String, age: Schema.Int })
})
const CheckSandboxErrors = Tool.make("checkSandboxErrors", { success: Schema.Array(Schema.String) })
const GetWeather = Tool.make("getWeather", {
  parameters: { location: Schema.String, unit: Schema.optional(Schema.Literal("C", "F")) },
  success: Schema.String
})
const Tools = Toolkit.make(GetUserCountry, RetrieveEntityInfo, CheckSandboxErrors, GetWeather)
const ages: Record<string, number> = { Alice: 31, Bob: 27, Charlie: 40, Daisy: 22 }
const handlers = Tools.toLayer({
  get_user_country: () => Effect.succeed("Mexico"),
  retrieve_entity_info: ({ name }) => Effect.succeed({ name, age: ages[name] ?? 0 }),
  checkSandboxErrors: () => Effect.succeed([]),
  getWeather: ({ location }) => Effect.succeed(`sunny in ${location}`)
})

interface Block {
  readonly type: string
  readonly [key: string]: unknown
}
interface RawMessage {
  readonly content: ReadonlyArray<Block>
  readonly usage: { readonly input_tokens: number; readonly output_tokens: number; readonly cache_read_input_tokens: number }
}
const recorded = (name: Fixture): RawMessage => JSON.parse(ProviderServer.readFixture(name)) as RawMessage
const reply = (name: Fixture) => ProviderServer.Reply.fixture(name)

interface Message {
  readonly role: string
  readonly content: ReadonlyArray<Block>
}
const messages = (request: ProviderServer.RecordedRequest | undefined): ReadonlyArray<Message> =>
  (request?.json as { messages?: ReadonlyArray<Message> } | undefined)?.messages ?? []
const results = (message: Message | undefined) =>
  (message?.content ?? []).filter((block) => block.type === "tool_result").map((block) => ({
    id: block.tool_use_id,
    isError: block.is_error,
    content: JSON.parse(String(block.content)) as { status: string; data: unknown; metadata: { callId: string } }
  }))

const THINKING_TEXT_TOOL: Fixture = "anthropic/message-thinking-text-tool-use.json"
const PARALLEL: Fixture = "anthropic/message-tool-use-parallel.json"
const FINAL_CACHE: Fixture = "anthropic/message-end-turn-text-cache-usage.json"
const THINKING_TOOL: Fixture = "anthropic/message-thinking-then-tool-use.json"
const SINGLE: Fixture = "anthropic/message-tool-use-single.json"

describe("Anthropic Messages on the wire", () => {
  it.scoped("a three-step run sends the thinking block with its signature back, and every result with its tool_use_id", () =>
    Effect.gen(function*() {
      const server = yield* ProviderServer.make([reply(THINKING_TEXT_TOOL), reply(PARALLEL), reply(FINAL_CACHE)])
      const result = yield* Agent.run({ prompt: "Who is youngest, in my country's largest city?", toolkit: Tools }).pipe(
        Effect.provide(anthropic(server)),
        Effect.provide(handlers)
      )
      assert.strictEqual(server.requests.length, 3)
      for (const request of server.requests) {
        // The provider always calls the beta Messages endpoint.
        assert.strictEqual(request.path, "/v1/messages?beta=true")
        assert.strictEqual(request.headers["x-api-key"], "sk-ant-test")
        assert.strictEqual(request.headers["anthropic-version"], "2023-06-01")
      }
      const [first, second, third] = server.requests

      // Tools as Anthropic expects them: name, description, input_schema.
      const tools = (first?.json as { tools: ReadonlyArray<{ name: string; description?: string; input_schema: unknown }> }).tools
      assert.deepStrictEqual(tools.map((t) => t.name), ["get_user_country", "retrieve_entity_info", "checkSandboxErrors", "getWeather"])
      assert.strictEqual(tools[0]?.description, "The user's country")
      assert.deepStrictEqual(tools[1]?.input_schema, {
        type: "object",
        required: ["name"],
        properties: { name: { type: "string" } },
        additionalProperties: false
      })
      // The same strict-valid shape every provider gets: an optional field is nullable.
      assert.deepStrictEqual(tools[3]?.input_schema, {
        type: "object",
        required: ["location", "unit"],
        properties: {
          location: { type: "string" },
          unit: { anyOf: [{ type: "string", enum: ["C", "F"] }, { type: "null" }] }
        },
        additionalProperties: false
      })
      for (const tool of tools) assert.deepStrictEqual(StrictSchema.violations(tool.input_schema), [], tool.name)

      // Request 2: the assistant turn as recorded (thinking with signature, text, tool_use), then its result.
      const [thinking, text, call] = recorded(THINKING_TEXT_TOOL).content
      const m2 = messages(second)
      assert.deepStrictEqual(m2.map((m) => m.role), ["user", "assistant", "user"])
      assert.deepStrictEqual(m2[1]?.content, [
        { type: "thinking", thinking: thinking!.thinking, signature: thinking!.signature },
        { type: "text", text: text!.text },
        { type: "tool_use", id: call!.id, name: "get_user_country", input: {} }
      ])
      assert.deepStrictEqual(results(m2[2]).map((r) => [r.id, r.isError, r.content.data]), [[call!.id, false, "Mexico"]])

      // Request 3: the first turn again (signature intact), then four results in call order.
      const parallel = recorded(PARALLEL).content.filter((block) => block.type === "tool_use")
      const m3 = messages(third)
      assert.deepStrictEqual(m3.map((m) => m.role), ["user", "assistant", "user", "assistant", "user"])
      assert.deepStrictEqual(m3[1], m2[1])
      assert.deepStrictEqual(m3[3]?.content.map((block) => block.type === "tool_use" ? block.id : block.type), [
        "text",
        ...parallel.map((block) => block.id)
      ])
      const r3 = results(m3[4])
      assert.deepStrictEqual(r3.map((r) => r.id), parallel.map((block) => block.id))
      assert.deepStrictEqual(r3.map((r) => r.content.data), [
        { name: "Alice", age: 31 },
        { name: "Bob", age: 27 },
        { name: "Charlie", age: 40 },
        { name: "Daisy", age: 22 }
      ])
      for (const r of r3) assert.strictEqual(r.content.metadata.callId, r.id)

      // The answer, and usage with the cache reads of the last call.
      const final = recorded(FINAL_CACHE)
      assert.strictEqual(result.answer, final.content[0]!.text)
      assert.strictEqual(result.finishReason, "stop")
      const usages = [THINKING_TEXT_TOOL, PARALLEL, FINAL_CACHE].map((name) => recorded(name).usage)
      const sum = (f: (u: RawMessage["usage"]) => number) => usages.reduce((n, u) => n + f(u), 0)
      assert.deepStrictEqual(result.usage, {
        calls: 3,
        reportedCalls: 3,
        inputTokens: sum((u) => u.input_tokens),
        outputTokens: sum((u) => u.output_tokens),
        totalTokens: sum((u) => u.input_tokens + u.output_tokens),
        cachedInputTokens: 1111
      })
    }))

  it.scoped("thinking straight before a tool_use (newer response fields) goes back whole; a failed tool is an is_error result", () =>
    Effect.gen(function*() {
      const server = yield* ProviderServer.make([reply(THINKING_TOOL), reply(SINGLE), reply(FINAL_CACHE)])
      const result = yield* Agent.run({ prompt: "check the sandbox, then Tokyo's weather", toolkit: Tools }).pipe(
        Effect.provide(anthropic(server)),
        Effect.provide(Tools.toLayer({
          get_user_country: () => Effect.succeed("Mexico"),
          retrieve_entity_info: ({ name }) => Effect.succeed({ name, age: 0 }),
          checkSandboxErrors: () => Effect.dieMessage("sandbox unreachable"),
          getWeather: ({ location }) => Effect.succeed(`sunny in ${location}`)
        }))
      )
      const [thinking, sandbox] = recorded(THINKING_TOOL).content
      const weather = recorded(SINGLE).content[0]!
      const [, second, third] = server.requests
      const m2 = messages(second)
      assert.deepStrictEqual(m2[1]?.content, [
        { type: "thinking", thinking: thinking!.thinking, signature: thinking!.signature },
        { type: "tool_use", id: sandbox!.id, name: "checkSandboxErrors", input: {} }
      ])
      assert.deepStrictEqual(results(m2[2]).map((r) => [r.id, r.isError, r.content.status]), [[sandbox!.id, true, "fatal_error"]])
      const m3 = messages(third)
      assert.deepStrictEqual(m3[3]?.content, [{ type: "tool_use", id: weather.id, name: "getWeather", input: { location: "Tokyo" } }])
      assert.deepStrictEqual(results(m3[4]).map((r) => [r.id, r.content.data]), [[weather.id, "sunny in Tokyo"]])
      assert.strictEqual(result.steps, 3)
      assert.strictEqual(result.toolCalls, 2)
      // Thinking tokens are inside output_tokens for Anthropic; the provider does not report them apart.
      assert.isUndefined(result.usage.reasoningTokens)
    }))
})
