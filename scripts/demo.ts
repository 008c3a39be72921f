/**
 * Offline demo: an agent on the scripted model, printing each step and the outcome.
 * The script makes the model misbehave on purpose (a failing lookup, invalid arguments)
 * so that the harness's handling shows.
 */
import { Agent, type AgentError } from "@agent-harness/core"
import { ScriptedModel } from "@agent-harness/testing"
import { Tool, Toolkit } from "@effect/ai"
import { Console, Effect, Logger, LogLevel, Schema } from "effect"

class UnknownSku extends Schema.TaggedError<UnknownSku>()("UnknownSku", { sku: Schema.String }) {
  override get message() {
    return `no product '${this.sku}'`
  }
}

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
const Model = S.layer([
  S.callsWith({ usage, text: "Let me check both prices." }, S.call("lookup_price", { sku: "apple" }), S.call("lookup_price", { sku: "durian" })),
  S.callsWith({ usage }, S.call("add_to_cart", { sku: "apple", qty: "three" })),
  S.callsWith({ usage }, S.call("add_to_cart", { sku: "apple", qty: 3 })),
  S.text("Added 3 apples at 0.50 EUR each. Durian is not sold here.", { usage })
])

let printed = 0
const program = Effect.gen(function*() {
  yield* Console.log("agent-harness demo (scripted model, offline)\n")
  const result = yield* Agent.run({
    prompt: "Put three apples and a durian in my cart.",
    system: "You are a shop assistant.",
    toolkit: Shop,
    budget: { maxSteps: 6, maxToolCalls: 10, timeout: "10 seconds" },
    onCheckpoint: (snapshot) =>
      Effect.gen(function*() {
        for (const message of snapshot.transcript.slice(printed)) {
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
        printed = snapshot.transcript.length
      })
  })
  yield* Console.log(`\noutcome: success after ${result.steps} steps and ${result.toolCalls} tool calls`)
  yield* Console.log(`usage:   ${result.usage.inputTokens} input + ${result.usage.outputTokens} output tokens`)
  yield* Console.log(`answer:  ${result.answer}`)
}).pipe(
  Effect.catchAll((error: AgentError.AgentError | AgentError.InvalidOptions) => Console.error(`outcome: ${error._tag}: ${error.message}`)),
  Effect.provide(ShopLive),
  Effect.provide(Model),
  Logger.withMinimumLogLevel(LogLevel.Warning)
)

Effect.runPromise(program)
