/**
 * The invoice agent of `agent-harness demo invoice`: the accounting example's tools
 * (`compute_tax`, `record_invoice`) behind a principal allowed to bill, with an in-memory
 * ledger and idempotency store, and an offline policy that reads the request and the
 * tool results.
 */
import { Agent, Authorization, Idempotency } from "@agent-harness/core"
import { Invoice } from "@agent-harness/example-invoice"
import { Effect, Layer, type Scope } from "effect"
import type * as OfflineModel from "./OfflineModel.js"
import type { Runner } from "./Render.js"

/** The demo's request. */
export const prompt = "Invoice ACME Ltd (UK) and ACME GmbH (DE) for 1,000.00 EUR net each."

/** The invoice agent's system text. */
export const system = "You are a billing assistant. Use the tools; never guess a tax rate."

/** The tools' handlers, the ledger, an idempotency store and the billing principal. */
const layer = Invoice.InvoiceToolsLive.pipe(
  Layer.provideMerge(Invoice.Ledger.layerMemory),
  Layer.merge(Idempotency.layerMemory),
  Layer.merge(Layer.succeed(Authorization.Principal, { userId: "ana", tenantId: "acme", permissions: ["billing:write"] }))
)

/** Builds the invoice agent's world (in memory) and returns the run, waiting for a model. */
export const prepare = (options: { readonly provider: string }): Effect.Effect<Runner, never, Scope.Scope> =>
  Effect.map(Layer.build(layer), (context) => (onEvent) =>
    Agent.run({
      prompt,
      system,
      toolkit: Invoice.InvoiceTools,
      budget: { maxSteps: 6, maxToolCalls: 8, timeout: "60 seconds" },
      telemetry: { agentName: "invoice-agent", provider: options.provider },
      onEvent
    }).pipe(Effect.provide(context)))

interface Customer {
  readonly name: string
  readonly country: string
}

/** `ACME Ltd (UK)`: a capitalised name, then an ISO country code in brackets. */
const customers = (request: string): ReadonlyArray<Customer> =>
  [...request.matchAll(/([A-Z][\w&.'-]*(?: [A-Z][\w&.'-]*)*) \(([A-Z]{2})\)/g)].map((m) => ({
    // The request's own verb is capitalised too: "Invoice ACME Ltd (UK)".
    name: m[1]!.replace(/^(?:Invoice|Bill|Charge)\s+/, ""),
    country: m[2]!
  }))

/** The first amount with two decimals, in cents. */
const netCents = (request: string): number | undefined => {
  const match = /(\d{1,3}(?:,\d{3})*|\d+)\.(\d{2})/.exec(request)
  return match === null ? undefined : Number(match[1]!.replaceAll(",", "")) * 100 + Number(match[2])
}

const money = (cents: number) => (cents / 100).toFixed(2)

/**
 * Computes the tax of every customer's country at once, books an invoice for each
 * country the tax tool accepted, and answers with what was booked and what was refused,
 * quoting the tools' own error messages.
 */
export const policy: OfflineModel.Policy = (view) => {
  const wanted = customers(view.request)
  const net = netCents(view.request)
  if (wanted.length === 0 || net === undefined) {
    return { text: "Please name each customer with a country code, like 'ACME Ltd (UK)', and a net amount like 1,000.00." }
  }
  const taxes = view.results.filter((r) => r.name === "compute_tax")
  if (taxes.length === 0) {
    return {
      text: `I'll compute VAT for ${wanted.map((c) => c.country).join(" and ")}.`,
      calls: wanted.map((c) => ({ name: "compute_tax", params: { country: c.country, netCents: net } }))
    }
  }
  const taxOf = (country: string) => taxes.find((r) => (r.params as { country?: unknown }).country === country)
  const bookings = view.results.filter((r) => r.name === "record_invoice")
  if (bookings.length === 0) {
    const toBook = wanted.flatMap((c) => {
      const tax = taxOf(c.country)
      return tax?.status === "success"
        ? [{ name: "record_invoice", params: { customer: c.name, country: c.country, netCents: net, taxCents: (tax.data as { taxCents: number }).taxCents } }]
        : []
    })
    if (toBook.length > 0) return { text: `Booking ${toBook.length} invoice(s).`, calls: toBook }
  }
  const lines = wanted.map((c) => {
    const booking = bookings.find((b) => (b.params as { customer?: unknown }).customer === c.name)
    if (booking?.status === "success") {
      const tax = (taxOf(c.country)?.data as { taxCents: number }).taxCents
      return `Invoiced ${c.name}: ${money(net)} net + ${money(tax)} VAT (${(booking.data as { invoiceId: string }).invoiceId}).`
    }
    const refusal = booking?.error ?? taxOf(c.country)?.error
    return `Did not invoice ${c.name}: ${refusal?.message ?? "the tools gave no answer"}${refusal === undefined ? "" : ` (${refusal.code})`}.`
  })
  return { text: lines.join(" ") }
}
