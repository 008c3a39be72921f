/** Tools and layers shared by the core tests. */
import { Tool, Toolkit } from "@effect/ai"
import { Effect, Layer, Ref, Schema } from "effect"
import type { Prompt } from "@effect/ai"

export class OutOfStock extends Schema.TaggedError<OutOfStock>()("OutOfStock", { sku: Schema.String }) {
  override get message() {
    return `${this.sku} is out of stock`
  }
}

export const Add = Tool.make("add", {
  description: "Adds two numbers",
  parameters: { a: Schema.Number, b: Schema.Number },
  success: Schema.Number
})

export const Order = Tool.make("order", {
  description: "Orders items",
  parameters: { items: Schema.Array(Schema.Struct({ sku: Schema.String, qty: Schema.Number })) },
  success: Schema.String,
  failure: OutOfStock
})

export const Boom = Tool.make("boom", { description: "Always dies", success: Schema.String })

export const Slow = Tool.make("slow", {
  description: "Sleeps, then answers",
  parameters: { ms: Schema.Number, label: Schema.String },
  success: Schema.String
})

export const Tools = Toolkit.make(Add, Order, Boom, Slow)

/** What the handlers did, for asserting that a tool ran or did not. */
export interface Log {
  readonly started: Ref.Ref<ReadonlyArray<string>>
  readonly finished: Ref.Ref<ReadonlyArray<string>>
  readonly interrupted: Ref.Ref<ReadonlyArray<string>>
}

export const makeLog = Effect.all({
  started: Ref.make<ReadonlyArray<string>>([]),
  finished: Ref.make<ReadonlyArray<string>>([]),
  interrupted: Ref.make<ReadonlyArray<string>>([])
})

const push = (ref: Ref.Ref<ReadonlyArray<string>>, entry: string) => Ref.update(ref, (all) => [...all, entry])

export const toolsLayer = (log: Log) =>
  Tools.toLayer({
    add: ({ a, b }) => push(log.started, "add").pipe(Effect.as(a + b), Effect.tap(() => push(log.finished, "add"))),
    order: ({ items }) =>
      Effect.gen(function*() {
        yield* push(log.started, "order")
        const missing = items.find((item) => item.sku === "none")
        if (missing !== undefined) return yield* new OutOfStock({ sku: missing.sku })
        yield* push(log.finished, "order")
        return `ordered ${items.length}`
      }),
    boom: () =>
      push(log.started, "boom").pipe(
        Effect.flatMap(() => Effect.sync((): string => {
          throw new Error("secret internal failure at /srv/app/tool.ts:12")
        }))
      ),
    slow: ({ label, ms }) =>
      push(log.started, label).pipe(
        Effect.zipRight(Effect.sleep(ms)),
        Effect.tap(() => push(log.finished, label)),
        Effect.as(`${label} slept ${ms}`),
        Effect.onInterrupt(() => push(log.interrupted, label))
      )
  })

export const withTools = (log: Log) => Layer.merge(toolsLayer(log), Layer.empty)

/** The envelope of every tool result in a transcript, in order. */
export const toolResults = (transcript: ReadonlyArray<Prompt.Message>) =>
  transcript.flatMap((message) =>
    message.role === "tool" ? message.content.map((part) => part.result as Record<string, unknown>) : []
  )
