import { Agent, ToolError } from "@agent-harness/core"
import { HarnessOtel } from "@agent-harness/otel"
import { ScriptedModel } from "@agent-harness/testing"
import { NodeSdk } from "@effect/opentelemetry"
import { AiError, Tool, Toolkit } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { ConfigProvider, Effect, Layer, Option, Schema } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

const S = ScriptedModel

const Rate = Tool.make("rate", {
  parameters: { country: Schema.String },
  success: Schema.Number,
  failure: ToolError.BusinessError
})
const Kit = Toolkit.make(Rate)
const KitLive = Kit.toLayer({
  rate: ({ country }) =>
    country === "UK"
      ? Effect.succeed(20)
      : Effect.fail(new ToolError.BusinessError({ code: "UNSUPPORTED_JURISDICTION", message: `no rules for ${country}` }))
})

const script = [
  S.callsWith(
    { usage: { inputTokens: 100, outputTokens: 20 } },
    S.call("rate", { country: "UK" }),
    S.call("rate", { country: "DE" })
  ),
  S.text("UK is 20%; DE is not supported.", { usage: { inputTokens: 150, outputTokens: 12 } })
]

const runAgent = Agent.run({
  prompt: "rates for UK and DE",
  toolkit: Kit,
  runId: "run_otel",
  telemetry: { agentName: "tax-agent", provider: "openai", model: "gpt-test" }
}).pipe(Effect.provide(KitLive), Effect.provide(S.layer(script)))

const inMemory = (exporter: InMemorySpanExporter) =>
  NodeSdk.layer(() => ({ resource: { serviceName: "test" }, spanProcessor: new SimpleSpanProcessor(exporter) }))

const attrs = (span: ReadableSpan) => span.attributes as Record<string, unknown>

describe("spans (in-memory exporter)", () => {
  it.effect("a run with two steps and a failing tool gives the GenAI span tree", () =>
    Effect.gen(function*() {
      const exporter = new InMemorySpanExporter()
      // Read before the SDK layer closes: shutting down clears the exporter.
      const spans = yield* runAgent.pipe(
        Effect.zipRight(Effect.sync(() => exporter.getFinishedSpans())),
        Effect.provide(inMemory(exporter))
      )
      const byName = (name: string) => spans.filter((s) => s.name === name)
      const [root] = byName("invoke_agent tax-agent")
      assert.isDefined(root)
      assert.deepInclude(attrs(root!), {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "tax-agent",
        "gen_ai.conversation.id": "run_otel",
        "gen_ai.provider.name": "openai"
      })
      const chats = byName("chat gpt-test")
      assert.strictEqual(chats.length, 2)
      const rootId = root!.spanContext().spanId
      for (const chat of chats) assert.strictEqual(chat.parentSpanContext?.spanId, rootId)
      assert.deepInclude(attrs(chats[0]!), {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-test",
        "gen_ai.usage.input_tokens": 100,
        "gen_ai.usage.output_tokens": 20
      })
      // @effect/opentelemetry's bridge turns array attributes into JSON text.
      const reasons = (span: ReadableSpan) => {
        const value = attrs(span)["gen_ai.response.finish_reasons"]
        return typeof value === "string" ? JSON.parse(value) : value
      }
      assert.deepStrictEqual(reasons(chats[0]!), ["tool-calls"])
      assert.deepStrictEqual(reasons(chats[1]!), ["stop"])
      const tools = byName("execute_tool rate")
      assert.strictEqual(tools.length, 2)
      for (const tool of tools) assert.strictEqual(tool.parentSpanContext?.spanId, rootId)
      const failing = tools.find((t) => attrs(t)["gen_ai.tool.call.id"] === "call_1_2")!
      assert.deepInclude(attrs(failing), {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "rate",
        "error.type": "UNSUPPORTED_JURISDICTION"
      })
      assert.notProperty(attrs(tools.find((t) => t !== failing)!), "error.type")
      // No payloads unless asked for.
      assert.notInclude(JSON.stringify(spans.map(attrs)), "rates for UK and DE")
      assert.notInclude(JSON.stringify(spans.map(attrs)), "no rules for DE")
    }))

  it.live("each retry of a model call is an event on its chat span", () =>
    Effect.gen(function*() {
      const exporter = new InMemorySpanExporter()
      const unavailable = new AiError.HttpResponseError({
        module: "Test",
        method: "generateText",
        reason: "StatusCode",
        request: { method: "POST", url: "http://127.0.0.1/v1", urlParams: [], hash: Option.none(), headers: {} },
        response: { status: 503, headers: {} }
      })
      const spans = yield* Agent.run({
        prompt: "go",
        toolkit: Kit,
        retry: { initialDelay: "1 millis" },
        telemetry: { agentName: "a", model: "m" }
      }).pipe(
        Effect.zipRight(Effect.sync(() => exporter.getFinishedSpans())),
        Effect.provide(KitLive),
        Effect.provide(S.layer([S.fail(unavailable), S.fail(unavailable), S.text("ok")])),
        Effect.provide(inMemory(exporter))
      )
      const chat = spans.find((s) => s.name === "chat m")!
      const retries = chat.events.filter((e) => e.name === "gen_ai.client.retry")
      assert.deepStrictEqual(retries.map((e) => e.attributes?.["gen_ai.client.retry.attempt"]), [1, 2])
      assert.deepStrictEqual(retries.map((e) => e.attributes?.["error.type"]), ["unavailable", "unavailable"])
    }))

  it.effect("a failed run marks its root span with error.type", () =>
    Effect.gen(function*() {
      const exporter = new InMemorySpanExporter()
      const spans = yield* Agent.run({ prompt: "go", toolkit: Kit, budget: { maxSteps: 1 }, telemetry: { agentName: "a" } }).pipe(
        Effect.flip,
        Effect.zipRight(Effect.sync(() => exporter.getFinishedSpans())),
        Effect.provide(KitLive),
        Effect.provide(S.layer([S.calls(S.call("rate", { country: "UK" }))])),
        Effect.provide(inMemory(exporter))
      )
      const root = spans.find((s) => s.name === "invoke_agent a")!
      assert.strictEqual(attrs(root)["error.type"], "BudgetExceeded")
      assert.strictEqual(root.status.code, 2)
    }))
})

interface Received {
  readonly path: string
  readonly contentType: string | undefined
  readonly body: unknown
}

/** An OTLP/HTTP receiver on 127.0.0.1 that keeps what it is sent. */
const receiver = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly received: Array<Received>; readonly server: http.Server }>((resume) => {
    const received: Array<Received> = []
    const server = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        received.push({
          path: req.url ?? "",
          contentType: req.headers["content-type"],
          body: JSON.parse(Buffer.concat(chunks).toString("utf8"))
        })
        res.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, received, server }))
    })
  }),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

type OtlpValue = { stringValue?: string; intValue?: string | number; arrayValue?: { values: Array<OtlpValue> } }
type OtlpSpan = { name: string; attributes: Array<{ key: string; value: OtlpValue }>; parentSpanId?: string; spanId: string }

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue))
}

describe("OTLP/HTTP export", () => {
  it.scopedLive("the spans and metrics of a run reach an OTLP receiver, with their attributes", () =>
    Effect.gen(function*() {
      const { received, url } = yield* receiver
      yield* runAgent.pipe(
        Effect.provide(HarnessOtel.layer({ endpoint: url, serviceName: "tax-service", exportInterval: "50 millis" }))
      )
      // The layer is closed here: everything buffered has been sent.
      const traces = received.filter((r) => r.path === "/v1/traces")
      assert.isAbove(traces.length, 0)
      assert.strictEqual(traces[0]!.contentType, "application/json")
      const spans = traces.flatMap((t) =>
        (t.body as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<OtlpSpan> }> }> }).resourceSpans
          .flatMap((r) => r.scopeSpans.flatMap((s) => s.spans))
      )
      const names = spans.map((s) => s.name).sort()
      assert.includeMembers(names, ["invoke_agent tax-agent", "chat gpt-test", "execute_tool rate"])
      const root = spans.find((s) => s.name === "invoke_agent tax-agent")!
      assert.strictEqual(attribute(root, "gen_ai.conversation.id"), "run_otel")
      const tool = spans.find((s) => s.name === "execute_tool rate" && attribute(s, "gen_ai.tool.call.id") === "call_1_2")!
      assert.strictEqual(attribute(tool, "error.type"), "UNSUPPORTED_JURISDICTION")
      assert.strictEqual(tool.parentSpanId, root.spanId)
      const chat = spans.find((s) => s.name === "chat gpt-test")!
      assert.strictEqual(attribute(chat, "gen_ai.usage.input_tokens"), 100)
      assert.deepStrictEqual(
        chat.attributes.find((a) => a.key === "gen_ai.response.finish_reasons")?.value.arrayValue?.values.map((v) => v.stringValue),
        ["tool-calls"]
      )
      const resource = JSON.stringify((traces[0]!.body as { resourceSpans: Array<{ resource: unknown }> }).resourceSpans[0]!.resource)
      assert.include(resource, "tax-service")
      const metrics = JSON.stringify(received.filter((r) => r.path === "/v1/metrics").map((r) => r.body))
      assert.include(metrics, "gen_ai.client.token.usage")
      assert.include(metrics, "gen_ai.client.operation.duration")
    }))
})

describe("configuration", () => {
  const withEnv = (env: Record<string, string>) => Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

  it.effect("reads the standard OTEL_* variables; options win", () =>
    Effect.gen(function*() {
      const config = yield* HarnessOtel.resolve({ serviceName: "mine" }).pipe(withEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "http://metrics:9000/m",
        OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc, x-tenant=acme",
        OTEL_SERVICE_NAME: "from-env"
      }))
      assert.strictEqual(config.tracesUrl, "http://collector:4318/v1/traces")
      assert.strictEqual(config.metricsUrl, "http://metrics:9000/m")
      assert.deepStrictEqual(config.headers, { authorization: "Bearer abc", "x-tenant": "acme" })
      assert.strictEqual(config.serviceName, "mine")
      assert.strictEqual(config.protocol, "http/json")
    }))

  it.effect("defaults to localhost:4318", () =>
    Effect.gen(function*() {
      const config = yield* HarnessOtel.resolve().pipe(withEnv({}))
      assert.strictEqual(config.tracesUrl, "http://localhost:4318/v1/traces")
      assert.strictEqual(config.serviceName, "agent-harness")
    }))

  const refused: ReadonlyArray<[string, Record<string, string>, HarnessOtel.Options, string]> = [
    ["a URL that is not http", {}, { endpoint: "ftp://x" }, "endpoint must be an http(s) URL"],
    ["malformed headers", { OTEL_EXPORTER_OTLP_HEADERS: "novalue" }, {}, "header 'novalue' is not key=value"],
    ["an unknown protocol", { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, {}, "protocol must be http/json or http/protobuf"]
  ]
  for (const [label, env, options, message] of refused) {
    it.effect(`refuses ${label}`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(HarnessOtel.resolve(options).pipe(withEnv(env)))
        assert.include(error.message, message)
        // The layer fails the same way, at build time.
        const layerError = yield* Effect.flip(Layer.build(HarnessOtel.layer(options)).pipe(Effect.scoped, withEnv(env)))
        assert.include(layerError.message, message)
      }))
  }
})
