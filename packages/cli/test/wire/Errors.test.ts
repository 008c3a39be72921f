/**
 * Provider failures on the wire become a `ModelError` whose `reason` a caller can branch
 * on: the recorded error bodies with their statuses, plus the statuses and transport
 * faults no recording covers.
 */
import { Agent, type AgentError } from "@agent-harness/core"
import { type LanguageModel, Tool, Toolkit } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer, Schema } from "effect"
import * as ProviderServer from "./ProviderServer.js"
import { anthropic, type Fixture, openAi } from "./providers.js"

const Echo = Tool.make("echo", { parameters: { text: Schema.String }, success: Schema.String })
const Tools = Toolkit.make(Echo)
const handlers = Tools.toLayer({ echo: ({ text }) => Effect.succeed(text) })

type Provider = (server: ProviderServer.ProviderServer) => Layer.Layer<LanguageModel.LanguageModel>
const providers: ReadonlyArray<readonly [string, Provider]> = [["openai", (s) => openAi(s)], ["anthropic", (s) => anthropic(s)]]

/** Runs one step against `reply` and returns the error the run ended with. */
const failWith = (provider: Provider, reply: ProviderServer.Reply) =>
  Effect.gen(function*() {
    const server = yield* ProviderServer.make([reply])
    const error: AgentError.AgentError | { readonly _tag: "InvalidOptions" } = yield* Agent.run({ prompt: "hi", toolkit: Tools, retry: false }).pipe(
      Effect.provide(provider(server)),
      Effect.provide(handlers),
      Effect.flip
    )
    assert.strictEqual(server.requests.length, 1, "one request, no retry")
    if (error._tag !== "ModelError") return assert.fail(`expected a ModelError, got ${error._tag}`)
    assert.strictEqual(error.snapshot.steps, 0)
    return error
  })

const recordedErrors: ReadonlyArray<readonly [Fixture, number, AgentError.ModelErrorReason]> = [
  ["openai/error-400-invalid-request-temperature.json", 400, "bad_request"],
  ["openai/error-400-reasoning-item-without-following-item.json", 400, "bad_request"],
  ["openai/error-400-function-call-output-without-call.json", 400, "bad_request"],
  // Out of quota is not transient, but the status (and so the reason) is the rate limit's.
  ["openai/error-429-insufficient-quota.json", 429, "rate_limited"],
  ["openai/error-429-rate-limit-exceeded.json", 429, "rate_limited"],
  ["anthropic/error-400-invalid-request-effort.json", 400, "bad_request"],
  ["anthropic/error-400-invalid-request-tool-result.json", 400, "bad_request"],
  ["anthropic/error-429-rate-limit.json", 429, "rate_limited"],
  ["anthropic/error-529-overloaded.json", 529, "unavailable"],
  ["anthropic/error-529-overloaded-no-request-id.json", 529, "unavailable"]
]

describe("recorded provider errors", () => {
  for (const [name, status, reason] of recordedErrors) {
    const provider = name.startsWith("openai/") ? openAi : anthropic
    it.scoped(`${name} (HTTP ${status}) -> ${reason}, with the provider's message`, () =>
      Effect.gen(function*() {
        const body = JSON.parse(ProviderServer.readFixture(name)) as { error: { message: string } }
        const headers = status === 429 ? { "retry-after": "20" } : {}
        const error = yield* failWith((s) => provider(s), ProviderServer.Reply.fixture(name, { status, headers }))
        assert.strictEqual(error.reason, reason)
        assert.include(error.description, String(status))
        assert.include(error.description, body.error.message.slice(0, 40))
      }))
  }
})

/** An error body in the provider's own envelope (hand-written: no recording has these statuses). */
const errorBody = (label: string, type: string, message: string) =>
  label === "anthropic" ? { type: "error", error: { type, message } } : { error: { message, type, param: null, code: null } }

describe("statuses and faults no recording covers", () => {
  for (const [label, provider] of providers) {
    const cases: ReadonlyArray<readonly [string, ProviderServer.Reply, AgentError.ModelErrorReason]> = [
      ["401", ProviderServer.Reply.json(errorBody(label, "authentication_error", "invalid x-api-key"), { status: 401 }), "authentication"],
      ["403", ProviderServer.Reply.json(errorBody(label, "permission_error", "not allowed"), { status: 403 }), "authentication"],
      ["500", ProviderServer.Reply.json(errorBody(label, "api_error", "Internal server error"), { status: 500 }), "unavailable"],
      ["503 with an HTML page", ProviderServer.Reply.text("<html>Service Unavailable</html>", { status: 503, headers: { "content-type": "text/html" } }), "unavailable"],
      // The bytes that arrived are not the provider's answer (a proxy, a captive portal): transport.
      ["200 with a body that is not JSON", ProviderServer.Reply.text("<html>captive portal</html>", { headers: { "content-type": "text/html" } }), "transport"],
      ["200 with a JSON body of the wrong shape", ProviderServer.Reply.json({ hello: "world" }), "malformed_output"],
      ["a connection reset before any byte", ProviderServer.Reply.reset(), "transport"]
    ]
    for (const [what, reply, reason] of cases) {
      it.scoped(`${label}: ${what} -> ${reason}`, () =>
        Effect.gen(function*() {
          const error = yield* failWith(provider, reply)
          assert.strictEqual(error.reason, reason, error.description)
        }))
    }
  }
})

const cutBody = () => ProviderServer.Reply.cut(ProviderServer.Reply.json({ id: "x", output: [], padding: "y".repeat(4000) }), 100)

describe("a body cut off midway (the connection dies after the headers)", () => {
  for (const [label, provider] of providers) {
    // @effect/ai's HttpResponseError keeps only reason "Decode" (the cause is dropped), so a
    // lost connection and a body that is not JSON look alike; both are transport faults.
    it.scoped(`${label}: -> transport`, () =>
      Effect.gen(function*() {
        const error = yield* failWith(provider, cutBody())
        assert.strictEqual(error.reason, "transport")
        assert.include(error.description, "Decode")
      }))
  }
})

describe("a 4xx whose body is not the provider's error envelope (a proxy or gateway page)", () => {
  it.scoped("openai: 403 with an HTML page -> authentication", () =>
    Effect.gen(function*() {
      const error = yield* failWith((s) => openAi(s), ProviderServer.Reply.text("<html>Forbidden</html>", { status: 403 }))
      assert.strictEqual(error.reason, "authentication")
    }))

  // @effect/ai-anthropic decodes every 4xx body as Anthropic's error envelope; when that
  // fails the status survives only on the HttpResponseError, which the harness reads.
  it.scoped("anthropic: 403 with an HTML page -> authentication", () =>
    Effect.gen(function*() {
      const error = yield* failWith((s) => anthropic(s), ProviderServer.Reply.text("<html>Forbidden</html>", { status: 403 }))
      assert.strictEqual(error.reason, "authentication")
    }))
})
