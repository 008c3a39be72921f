import { Agent, Authorization, Idempotency, Transcript } from "@agent-harness/core"
import { Invoice, InvoiceScript } from "@agent-harness/example-invoice"
import { ScriptedModel } from "@agent-harness/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"

const accountant: Authorization.PrincipalInfo = { userId: "ana", tenantId: "acme", permissions: ["billing:read", "billing:write"] }
const intern: Authorization.PrincipalInfo = { userId: "ivo", tenantId: "acme", permissions: ["billing:read"] }

const World = Invoice.InvoiceToolsLive.pipe(Layer.provideMerge(Invoice.Ledger.layerMemory), Layer.merge(Idempotency.layerMemory))

const run = (runId = "run_inv") =>
  Agent.run({
    prompt: InvoiceScript.prompt,
    system: InvoiceScript.system,
    toolkit: Invoice.InvoiceTools,
    runId,
    permissionPolicy: "stop",
    budget: { maxSteps: 5, maxToolCalls: 6 }
  })

const results = (transcript: Transcript.Transcript) =>
  transcript.flatMap((m) => (m.role === "tool" ? m.content.map((p) => p.result as Record<string, unknown>) : []))

describe("the invoice agent", () => {
  it.effect("computes UK and DE in parallel, is refused DE, records the UK invoice once and explains", () =>
    Effect.gen(function*() {
      const result = yield* run()
      const [uk, de, recorded] = results(result.transcript)
      assert.deepStrictEqual(uk?.data, { country: "UK", rateBasisPoints: 2000, taxCents: 20_000 })
      assert.strictEqual(de?.status, "business_error")
      assert.strictEqual((de?.error as { code: string }).code, "UNSUPPORTED_JURISDICTION")
      assert.deepStrictEqual(recorded?.data, { invoiceId: "INV-0001" })
      assert.strictEqual((recorded?.metadata as { idempotencyKey: string }).idempotencyKey, "run_inv:call_2_1")
      const invoices = yield* (yield* Invoice.Ledger).invoices
      assert.deepStrictEqual(invoices.map((i) => [i.customer, i.country, i.taxCents]), [["ACME Ltd", "UK", 20_000]])
      assert.include(result.answer, "no tax rules for Germany")
      assert.isTrue(Either.isRight(Transcript.check(result.transcript)))
      yield* (yield* ScriptedModel.ScriptedModel).assertFinished
    }).pipe(
      Effect.provide(World),
      Effect.provide(ScriptedModel.layer(InvoiceScript.turns)),
      Effect.provideService(Authorization.Principal, accountant)
    ))

  it.effect("recording twice with the same call id books one invoice", () =>
    Effect.gen(function*() {
      yield* run().pipe(Effect.provide(ScriptedModel.layer(InvoiceScript.turns)))
      const again = yield* run().pipe(Effect.provide(ScriptedModel.layer(InvoiceScript.turns)))
      const recorded = results(again.transcript)[2]
      assert.strictEqual((recorded?.metadata as { replayed?: boolean }).replayed, true)
      assert.deepStrictEqual(recorded?.data, { invoiceId: "INV-0001" })
      assert.strictEqual((yield* (yield* Invoice.Ledger).invoices).length, 1)
    }).pipe(Effect.provide(World), Effect.provideService(Authorization.Principal, accountant)))

  it.effect("a caller without billing:write gets PermissionDenied and no invoice", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(run())
      assert(error._tag === "PermissionDenied")
      assert.strictEqual(error.tool, "record_invoice")
      assert.strictEqual(error.permission, "billing:write")
      assert.strictEqual(error.userId, "ivo")
      assert.deepStrictEqual(yield* (yield* Invoice.Ledger).invoices, [])
      // The taxes were computed; the refused batch left no trace.
      assert.deepStrictEqual(error.snapshot.transcript.map((m) => m.role), ["system", "user", "assistant", "tool"])
    }).pipe(
      Effect.provide(World),
      Effect.provide(ScriptedModel.layer(InvoiceScript.turns)),
      Effect.provideService(Authorization.Principal, intern)
    ))

  it.effect("the tax tool has no fallback rate", () =>
    Effect.gen(function*() {
      const result = yield* Agent.run({ prompt: "tax for XX", toolkit: Invoice.InvoiceTools }).pipe(
        Effect.provide(ScriptedModel.layer([
          ScriptedModel.calls(ScriptedModel.call("compute_tax", { country: "XX", netCents: 100 })),
          ScriptedModel.text("unsupported")
        ]))
      )
      const [tax] = results(result.transcript)
      assert.strictEqual(tax?.status, "business_error")
      assert.include((tax?.error as { message: string }).message, "no tax rules for XX; supported: UK, FR, IE")
    }).pipe(Effect.provide(World)))
})
