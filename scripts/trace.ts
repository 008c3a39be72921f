/**
 * Prints the span tree of the invoice agent's run (scripted model, offline), as an
 * OpenTelemetry SDK records it: the spans `@agent-harness/otel` exports.
 *
 *   npm run trace
 */
import { Agent, Authorization, Idempotency } from "@agent-harness/core"
import { Invoice, InvoiceScript } from "@agent-harness/example-invoice"
import { ScriptedModel } from "@agent-harness/testing"
import { NodeSdk } from "@effect/opentelemetry"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Console, Effect, Layer } from "effect"

const exporter = new InMemorySpanExporter()

const shown = (key: string) => key.startsWith("gen_ai.") || key === "error.type"

// The SDK bridge stores array attributes as JSON text; print them compactly.
const display = (value: unknown) =>
  typeof value === "string" ? (value.startsWith("[") ? JSON.stringify(JSON.parse(value)) : value) : JSON.stringify(value)

const print = (spans: ReadonlyArray<ReadableSpan>) => {
  const children = new Map<string | undefined, Array<ReadableSpan>>()
  const ids = new Set(spans.map((s) => s.spanContext().spanId))
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId
    const key = parent !== undefined && ids.has(parent) ? parent : undefined
    children.set(key, [...(children.get(key) ?? []), span])
  }
  const lines: Array<string> = []
  const walk = (span: ReadableSpan, depth: number) => {
    const ms = (span.duration[0] * 1e3 + span.duration[1] / 1e6).toFixed(1)
    const attributes = Object.entries(span.attributes).filter(([k]) => shown(k)).map(([k, v]) => `${k}=${display(v)}`)
    lines.push(`${"  ".repeat(depth)}${span.name}  (${ms} ms)${attributes.length > 0 ? "  " + attributes.join(" ") : ""}`)
    const kids = [...(children.get(span.spanContext().spanId) ?? [])].sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
    for (const child of kids) walk(child, depth + 1)
  }
  for (const root of children.get(undefined) ?? []) walk(root, 0)
  return lines.join("\n")
}

const program = Agent.run({
  prompt: InvoiceScript.prompt,
  system: InvoiceScript.system,
  toolkit: Invoice.InvoiceTools,
  telemetry: { agentName: "invoice-agent", provider: "scripted", model: "scripted-invoice" }
}).pipe(
  Effect.zipRight(Effect.sync(() => print(exporter.getFinishedSpans()))),
  Effect.flatMap(Console.log),
  Effect.provide(Invoice.InvoiceToolsLive.pipe(Layer.provideMerge(Invoice.Ledger.layerMemory), Layer.merge(Idempotency.layerMemory))),
  Effect.provide(ScriptedModel.layer(InvoiceScript.turns)),
  Effect.provideService(Authorization.Principal, { userId: "ana", permissions: ["billing:write"] }),
  Effect.provide(NodeSdk.layer(() => ({ resource: { serviceName: "invoice-demo" }, spanProcessor: new SimpleSpanProcessor(exporter) })))
)

Effect.runPromise(program)
