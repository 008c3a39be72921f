/**
 * The accounting example. Two tools:
 *
 * - `compute_tax`: VAT for an amount in a jurisdiction the tool knows. There is no
 *   fallback rate: an unknown country is a business error with the code
 *   `UNSUPPORTED_JURISDICTION`, and the model has to say so.
 * - `record_invoice`: books an invoice in the {@link Ledger}. It changes the world, so it
 *   is mutating (at most once per idempotency key) and needs `billing:write`.
 */
import { Authorization, Idempotency, ToolError } from "@agent-harness/core"
import { Tool, Toolkit } from "@effect/ai"
import { Context, Effect, Layer, Ref, Schema } from "effect"

/** VAT rates in basis points, by ISO country code. Only these are supported. */
export const vatRates: Readonly<Record<string, number>> = { UK: 2000, FR: 2000, IE: 2300 }

const Country = Schema.String.pipe(Schema.pattern(/^[A-Z]{2}$/)).annotations({ description: "ISO 3166 alpha-2 code" })
const Cents = Schema.Int.pipe(Schema.positive()).annotations({ description: "amount in cents" })

export const ComputeTax = Tool.make("compute_tax", {
  description: "VAT due on a net amount in a country. Fails for countries without tax rules.",
  parameters: { country: Country, netCents: Cents },
  success: Schema.Struct({ country: Country, rateBasisPoints: Schema.Int, taxCents: Schema.Int }),
  failure: ToolError.BusinessError
})

/** A booked invoice. */
export const Invoice = Schema.Struct({
  id: Schema.String,
  customer: Schema.String,
  country: Country,
  netCents: Schema.Int,
  taxCents: Schema.Int,
  idempotencyKey: Schema.String
})

/** @see {@link Invoice} */
export type Invoice = typeof Invoice.Type

export const RecordInvoice = Tool.make("record_invoice", {
  description: "Books an invoice in the ledger.",
  parameters: { customer: Schema.NonEmptyTrimmedString, country: Country, netCents: Cents, taxCents: Schema.Int.pipe(Schema.nonNegative()) },
  success: Schema.Struct({ invoiceId: Schema.String }),
  failure: ToolError.BusinessError,
  dependencies: [Idempotency.Key]
})
  .annotate(Idempotency.Mutating, true)
  .annotate(Authorization.RequiresPermission, "billing:write")

export const InvoiceTools = Toolkit.make(ComputeTax, RecordInvoice)

/** The books. */
export class Ledger extends Context.Tag("@agent-harness/example-invoice/Ledger")<Ledger, {
  readonly record: (invoice: Omit<Invoice, "id">) => Effect.Effect<Invoice>
  readonly invoices: Effect.Effect<ReadonlyArray<Invoice>>
}>() {
  /** A ledger in memory. */
  static readonly layerMemory = Layer.effect(
    Ledger,
    Effect.map(Ref.make<ReadonlyArray<Invoice>>([]), (books) => ({
      record: (invoice) =>
        Ref.modify(books, (all) => {
          const booked = { ...invoice, id: `INV-${String(all.length + 1).padStart(4, "0")}` }
          return [booked, [...all, booked]] as const
        }),
      invoices: Ref.get(books)
    }))
  )
}

/** The handlers, on the {@link Ledger}. */
export const InvoiceToolsLive = InvoiceTools.toLayer(
  Effect.gen(function*() {
    const ledger = yield* Ledger
    return {
      compute_tax: ({ country, netCents }) => {
        const rate = vatRates[country]
        return rate === undefined
          ? Effect.fail(
            new ToolError.BusinessError({
              code: "UNSUPPORTED_JURISDICTION",
              message: `no tax rules for ${country}; supported: ${Object.keys(vatRates).join(", ")}`
            })
          )
          : Effect.succeed({ country, rateBasisPoints: rate, taxCents: Math.round((netCents * rate) / 10_000) })
      },
      record_invoice: (invoice) =>
        Effect.gen(function*() {
          if (vatRates[invoice.country] === undefined) {
            return yield* new ToolError.BusinessError({
              code: "UNSUPPORTED_JURISDICTION",
              message: `cannot invoice in ${invoice.country}`
            })
          }
          const idempotencyKey = yield* Idempotency.Key
          const booked = yield* ledger.record({ ...invoice, idempotencyKey })
          return { invoiceId: booked.id }
        })
    }
  })
)
