/**
 * A scripted model for the invoice example: computes UK and DE taxes in parallel, is
 * refused DE, records the UK invoice and explains the limitation.
 */
import { ScriptedModel } from "@agent-harness/testing"

const S = ScriptedModel

export const prompt = "Invoice ACME Ltd (UK) and ACME GmbH (DE) for 1,000.00 EUR net each."

export const system = "You are a billing assistant. Use the tools; never guess a tax rate."

export const turns: ReadonlyArray<ScriptedModel.Turn> = [
  S.callsWith(
    { text: "I'll compute VAT for both jurisdictions.", usage: { inputTokens: 412, outputTokens: 61 } },
    S.call("compute_tax", { country: "UK", netCents: 100_000 }),
    S.call("compute_tax", { country: "DE", netCents: 100_000 })
  ),
  S.callsWith(
    { text: "UK VAT is 200.00; DE is not supported. Recording the UK invoice.", usage: { inputTokens: 598, outputTokens: 48 } },
    S.call("record_invoice", { customer: "ACME Ltd", country: "UK", netCents: 100_000, taxCents: 20_000 })
  ),
  S.text(
    "Recorded the UK invoice for ACME Ltd: 1,000.00 net + 200.00 VAT. I could not invoice ACME GmbH: " +
      "there are no tax rules for Germany (DE) in this system, so I did not guess a rate. " +
      "Add DE to the supported jurisdictions or invoice it manually.",
    { usage: { inputTokens: 701, outputTokens: 72 } }
  )
]
