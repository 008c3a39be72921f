/**
 * Offline demo: two agents on scripted models, printing each step and the outcome.
 *
 * 1. A shop assistant whose model misbehaves on purpose (a failing lookup, invalid
 *    arguments), so that the harness's handling shows.
 * 2. The invoice agent (examples/invoice): taxes in two jurisdictions, one refused, an
 *    invoice recorded once under an idempotency key by a principal allowed to.
 */
import { Agent, AgentError, Authorization, Idempotency } from "@agent-harness/core"
import { Invoice, InvoiceScript } from "@agent-harness/example-invoice"
import { ScriptedModel } from "@agent-harness/testing"
import { Tool, Toolkit } from "@effect/ai"
import { Console, Effect, Layer, Logger, LogLevel, Ref, Schema } from "effect"

class UnknownSku extends Schema.TaggedError<UnknownSku>()("UnknownSku", { sku: Schema.String }) {}

const LookupPrice = Tool.make("lookup_price", {
  description: "Price of one unit of a product, in euros",
  parameters: { sku: Schema.String },
  success: Schema.Number,
  failure: UnknownSku
})

const AddToCart = Tool.make("add_to_cart", {
  description: "Adds a quantity of a product to the cart",
  parameters: { sku: Schema.String, qty: Schema.Int.pipe(Schema.positive()) },
  success: Schema.Struct({ lines: Schema.Number })
})

const Shop = Toolkit.make(LookupPrice, AddToCart)

const prices: Record<string, number> = { apple: 0.5, pear: 0.8 }
const ShopLive = Shop.toLayer({
  lookup_price: ({ sku }) => {
    const price = prices[sku]
    return price === undefined ? Effect.fail(new UnknownSku({ sku })) : Effect.succeed(price)
  },
  add_to_cart: () => Effect.succeed({ lines: 1 })
})

const S = ScriptedModel
const usage = { inputTokens: 120, outputTokens: 24 }
const shopScript = [
  S.callsWith(
    { usage, text: "Let me check both prices." },
    S.call("lookup_price", { sku: "apple" }),
    S.call("lookup_price", { sku: "durian" })
  ),
  S.callsWith({ usage }, S.call("add_to_cart", { sku: "apple", qty: "three" })),
  S.callsWith({ usage }, S.call("add_to_cart", { sku: "apple", qty: 3 })),
  S.text("Added 3 apples at 0.50 EUR each. Durian is not sold here.", { usage })
]

/** Prints what each checkpoint added to the transcript. */
const printer = Effect.map(Ref.make(0), (printed) => (snapshot: AgentError.RunSnapshot) =>
  Effect.gen(function*() {
    const from = yield* Ref.getAndSet(printed, snapshot.transcript.length)
    for (const message of snapshot.transcript.slice(from)) {
      if (message.role === "assistant") {
        yield* Console.log(`step ${snapshot.steps}: model`)
        for (const part of message.content) {
          if (part.type === "text") yield* Console.log(`  says   ${part.text}`)
          if (part.type === "tool-call") yield* Console.log(`  calls  ${part.name} ${JSON.stringify(part.params)}  [${part.id}]`)
        }
      } else if (message.role === "tool") {
        for (const part of message.content) {
          const result = part.result as { status: string; data?: unknown; error?: { code: string; message: string } }
          const detail = result.status === "success" ? JSON.stringify(result.data) : `${result.error?.code}: ${result.error?.message}`
          yield* Console.log(`  result ${part.id} ${result.status}  ${detail}`)
        }
      }
    }
  }))

const report = (result: Agent.Result) =>
  Effect.gen(function*() {
    yield* Console.log(`outcome: success after ${result.steps} steps and ${result.toolCalls} tool calls`)
    yield* Console.log(`usage:   ${result.usage.inputTokens} input + ${result.usage.outputTokens} output tokens`)
    yield* Console.log(`answer:  ${result.answer}\n`)
  })

const shop = Effect.gen(function*() {
  yield* Console.log("== shop assistant (scripted model, offline)\n")
  const result = yield* Agent.run({
    prompt: "Put three apples and a durian in my cart.",
    system: "You are a shop assistant.",
    toolkit: Shop,
    budget: { maxSteps: 6, maxToolCalls: 10, timeout: "10 seconds" },
    onCheckpoint: yield* printer
  })
  yield* report(result)
}).pipe(Effect.provide(ShopLive), Effect.provide(S.layer(shopScript)))

const invoice = Effect.gen(function*() {
  yield* Console.log("== invoice agent (scripted model, offline)\n")
  const result = yield* Agent.run({
    prompt: InvoiceScript.prompt,
    system: InvoiceScript.system,
    toolkit: Invoice.InvoiceTools,
    budget: { maxSteps: 5, maxToolCalls: 6, timeout: "10 seconds" },
    onCheckpoint: yield* printer
  })
  yield* report(result)
  const recorded = result.transcript.flatMap((m) => (m.role === "tool" ? m.content : [])).at(-1)
  yield* Console.log(`the recorded invoice's result, as the model read it:\n${JSON.stringify(recorded?.result, null, 2)}`)
  const ledger = yield* (yield* Invoice.Ledger).invoices
  yield* Console.log(`ledger: ${ledger.map((i) => `${i.id} ${i.customer} ${i.country} net ${i.netCents} tax ${i.taxCents}`).join("; ")}`)
}).pipe(
  Effect.provide(Invoice.InvoiceToolsLive.pipe(Layer.provideMerge(Invoice.Ledger.layerMemory), Layer.merge(Idempotency.layerMemory))),
  Effect.provide(S.layer(InvoiceScript.turns)),
  Effect.provideService(Authorization.Principal, { userId: "ana", tenantId: "acme", permissions: ["billing:write"] })
)

const program = Effect.zipRight(shop, invoice).pipe(
  Effect.catchAll((error: AgentError.AgentError | AgentError.InvalidOptions) =>
    Effect.zipRight(Console.error(`outcome: ${error._tag}: ${error.message}`), Effect.sync(() => process.exit(1)))),
  Logger.withMinimumLogLevel(LogLevel.Warning)
)

Effect.runPromise(program)
