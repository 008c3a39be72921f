import { CodingDemo, InvoiceDemo, OfflineModel, Render } from "@agent-harness/cli"
import type { HarnessEvent } from "@agent-harness/core"
import { NodeContext } from "@effect/platform-node"
import { FileSystem } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { LanguageModel } from "@effect/ai"
import { Effect, Layer } from "effect"
import * as path from "node:path"

const collect = () => {
  const events: Array<HarnessEvent.HarnessEvent> = []
  return { events, onEvent: (e: HarnessEvent.HarnessEvent) => Effect.sync(() => void events.push(e)) }
}

const toolStatuses = (events: ReadonlyArray<HarnessEvent.HarnessEvent>) =>
  events.flatMap((e) => (e._tag === "ToolCallEnded" ? [`${e.tool}:${e.result.error?.code ?? e.status}`] : []))

describe("demo invoice on the offline model", () => {
  it.scoped("computes both taxes, books only the accepted one, and says why the other was refused", () =>
    Effect.gen(function*() {
      const runner = yield* InvoiceDemo.prepare({ provider: "offline" })
      const { events, onEvent } = collect()
      const result = yield* runner(onEvent).pipe(Effect.provide(OfflineModel.layer("invoice", InvoiceDemo.policy)))
      assert.deepStrictEqual(toolStatuses(events), ["compute_tax:success", "compute_tax:UNSUPPORTED_JURISDICTION", "record_invoice:success"])
      assert.include(result.answer, "Invoiced ACME Ltd: 1000.00 net + 200.00 VAT (INV-0001)")
      assert.include(result.answer, "Did not invoice ACME GmbH: no tax rules for DE")
    }))

  it("reacts to what the tools say: a supported country is booked, none refused", () => {
    const view = (results: ReadonlyArray<OfflineModel.SeenResult>): OfflineModel.View => ({
      request: "Invoice Foo SARL (FR) for 50.00 EUR net.",
      results,
      turns: results.length === 0 ? 0 : 1
    })
    const first = InvoiceDemo.policy(view([]))
    assert.deepStrictEqual(first.calls, [{ name: "compute_tax", params: { country: "FR", netCents: 5000 } }])
    const tax: OfflineModel.SeenResult = {
      id: "a",
      name: "compute_tax",
      params: { country: "FR", netCents: 5000 },
      status: "success",
      data: { country: "FR", rateBasisPoints: 2000, taxCents: 1000 },
      error: undefined
    }
    assert.deepStrictEqual(InvoiceDemo.policy(view([tax])).calls, [
      { name: "record_invoice", params: { customer: "Foo SARL", country: "FR", netCents: 5000, taxCents: 1000 } }
    ])
    // Without a customer it asks instead of guessing.
    assert.isUndefined(InvoiceDemo.policy({ request: "invoice someone", results: [], turns: 0 }).calls)
  })
})

/** The coding agent on a copy of the sample with one replacement made in `src/cart.js`. */
const codingRun = ([from, to]: readonly [string, string]) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const root = yield* CodingDemo.copySample
    const file = path.join(root, "src/cart.js")
    yield* fs.writeFileString(file, (yield* fs.readFileString(file)).replace(from, to))
    const runner = yield* CodingDemo.prepare({ root, test: CodingDemo.sampleTest, provider: "offline" })
    return yield* runner(() => Effect.void).pipe(Effect.provide(OfflineModel.layer("coding", CodingDemo.policy)))
  })

describe("demo coding on the offline model", () => {
  it.scoped("runs the failing tests, reads the code, fixes the bug, and sees the tests pass", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const root = yield* CodingDemo.copySample
      const runner = yield* CodingDemo.prepare({ root, test: CodingDemo.sampleTest, provider: "offline" })
      const { events, onEvent } = collect()
      const result = yield* runner(onEvent).pipe(Effect.provide(OfflineModel.layer("coding", CodingDemo.policy)))
      assert.deepStrictEqual(toolStatuses(events), [
        "list_dir:success",
        "list_dir:success",
        "run_command:success",
        "read_file:success",
        "read_file:success",
        "edit_file:success",
        "run_command:success"
      ])
      assert.include(result.answer, "All tests pass now")
      assert.include(yield* fs.readFileString(path.join(root, "src/cart.js")), "* (1 - discount))")
      // The test file is untouched.
      const original = yield* fs.readFileString(path.join(import.meta.dirname, "../sample/test/cart.test.js"))
      assert.strictEqual(yield* fs.readFileString(path.join(root, "test/cart.test.js")), original)
    }).pipe(Effect.provide(NodeContext.layer)), { timeout: 60_000 })

  it.scoped("a project whose tests already pass is left alone", () =>
    Effect.gen(function*() {
      const result = yield* codingRun(["* discount)", "* (1 - discount))"])
      assert.strictEqual(result.answer, "All tests already pass; nothing to change.")
      assert.strictEqual(result.steps, 2)
    }).pipe(Effect.provide(NodeContext.layer)), { timeout: 60_000 })

  it.scoped("a bug it does not know is reported, not papered over", () =>
    Effect.gen(function*() {
      const result = yield* codingRun(["line.priceCents * line.qty", "line.priceCents + line.qty"])
      // It fixes the discount it knows, sees the tests still fail, and stops.
      assert.include(result.answer, "still fail")
    }).pipe(Effect.provide(NodeContext.layer)), { timeout: 60_000 })

  it.scoped("a workspace that does not exist fails before anything runs", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(CodingDemo.prepare({ root: "/definitely/not/here", provider: "offline" }))
      assert.strictEqual(error._tag, "WorkspaceError")
    }))
})

/** Runs the invoice agent on `model` through a renderer writing to memory; returns what it wrote. */
const rendered = (options: {
  readonly json: boolean
  readonly interactive: boolean
  readonly model: Layer.Layer<LanguageModel.LanguageModel>
  readonly durationMs: number
}) =>
  Effect.gen(function*() {
    const memory = yield* Render.Output.memory(options.interactive)
    yield* Effect.gen(function*() {
      const runner = yield* InvoiceDemo.prepare({ provider: "offline" })
      const renderer = yield* Render.make({ json: options.json })
      const exit = yield* Effect.exit(runner(renderer.onEvent).pipe(Effect.provide(options.model)))
      yield* renderer.finish(exit, options.durationMs)
    }).pipe(Effect.scoped, Effect.provide(Layer.succeed(Render.Output, memory.service)))
    return memory.text()
  })

const offlineInvoice = OfflineModel.layer("invoice", InvoiceDemo.policy)

describe("rendering", () => {
  it.effect("a live line per model call and tool call, and a summary", () =>
    Effect.gen(function*() {
      const text = yield* rendered({ json: false, interactive: false, model: offlineInvoice, durationMs: 12 })
      const lines = text.split("\n")
      assert.match(lines[0]!, /^step 1 {2}model +tool-calls +\d+ ms +2 tool calls$/)
      assert.match(lines[2]!, /^ {2}✗ compute_tax +business_error +\d+ ms {2}UNSUPPORTED_JURISDICTION$/)
      assert.include(text, "outcome    success\nsteps      3\ntool calls 3\ntokens     not reported by the model\ntime       12 ms\n")
      assert.notInclude(text, "\r")
    }))

  it.live("on a terminal, a spinner while the model works, cleared before each line", () =>
    Effect.gen(function*() {
      const offline = yield* OfflineModel.make("invoice", InvoiceDemo.policy)
      // A model that thinks for 200 ms, so that the spinner turns.
      const slow = Layer.succeed(LanguageModel.LanguageModel, {
        ...offline,
        generateText: (options) => Effect.zipRight(Effect.sleep("200 millis"), offline.generateText(options))
      } as LanguageModel.Service)
      const text = yield* rendered({ json: false, interactive: true, model: slow, durationMs: 5 })
      assert.include(text, "\r\x1b[2K⠋ step 1  waiting for the model")
      assert.include(text, "\r\x1b[2K⠙ step 1  waiting for the model")
      assert.include(text, "\r\x1b[2Kstep 1  model")
      assert.include(text, "outcome    success")
    }))

  it.effect("--json: one JSON document with the outcome and every event, nothing else", () =>
    Effect.gen(function*() {
      const document = JSON.parse(yield* rendered({ json: true, interactive: true, model: offlineInvoice, durationMs: 5 }))
      assert.strictEqual(document.outcome, "success")
      assert.strictEqual(document.steps, 3)
      assert.strictEqual(document.events[0]._tag, "RunStarted")
      assert.strictEqual(document.events.at(-1)._tag, "RunEnded")
      assert.isArray(document.transcript)
    }))

  it.effect("a failed run's summary names the error", () =>
    Effect.gen(function*() {
      // A model that calls a tool forever runs into the step budget.
      const looping = OfflineModel.layer("loop", () => ({ calls: [{ name: "compute_tax", params: { country: "UK", netCents: 1 } }] }))
      const text = yield* rendered({ json: false, interactive: false, model: looping, durationMs: 5 })
      assert.include(text, "outcome    BudgetExceeded\nsteps      6\n")
      assert.include(text, "error      budget 'steps' exceeded")
    }))
})
