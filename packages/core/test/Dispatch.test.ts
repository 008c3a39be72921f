import { Agent, Authorization, Idempotency, Transcript } from "@agent-harness/core"
import { Tool, Toolkit } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Ref, Schema, TestClock } from "effect"
import { billing, bookTwice, handlers, Kit, makeWorld, run, S, viewer } from "./dispatchFixtures.js"
import { toolResults } from "./fixtures.js"

describe("result envelope", () => {
  it.effect("a BusinessError is a business_error with its code; other typed failures say only their tag", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const result = yield* run().pipe(Effect.provide(handlers(world)))
      const [uk, de, fr] = toolResults(result.transcript)
      assert.deepStrictEqual(uk, { status: "success", data: 20, metadata: { tool: "quote", callId: "call_1_1", latencyMs: 0 } })
      assert.deepStrictEqual(de, {
        status: "business_error",
        error: { code: "UNSUPPORTED_JURISDICTION", message: "no tax rules for DE" },
        metadata: { tool: "quote", callId: "call_1_2", latencyMs: 0 }
      })
      assert.deepStrictEqual(fr?.error, { code: "TOOL_FAILED", message: "the tool failed (DbDown)" })
      assert.strictEqual(fr?.status, "fatal_error")
      assert.notInclude(JSON.stringify(result.transcript), "10.0.0.3")
    }).pipe(Effect.provide(S.layer([
      S.calls(S.call("quote", { country: "UK" }), S.call("quote", { country: "DE" }), S.call("quote", { country: "FR" })),
      S.text("done")
    ])), Effect.provide(Idempotency.layerMemory)))
})

describe("authorization", () => {
  const script = [S.calls(S.call("quote", { country: "UK" }), S.call("book", { amount: 10 })), S.text("done")]

  it.effect("policy stop: the run ends with PermissionDenied, no call of the batch ran, the batch is not recorded", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const error = yield* Effect.flip(run().pipe(Effect.provide(handlers(world)), Effect.provideService(Authorization.Principal, viewer)))
      assert(error._tag === "PermissionDenied")
      assert.strictEqual(error.callId, "call_1_2")
      assert.strictEqual(error.permission, "billing:write")
      assert.strictEqual(error.userId, "bo")
      assert.include(error.message, "which bo lacks")
      assert.deepStrictEqual(yield* Ref.get(world.booked), [])
      assert.deepStrictEqual(error.snapshot.transcript.map((m) => m.role), ["user"])
      assert.strictEqual(error.snapshot.toolCalls, 0)
    }).pipe(Effect.provide(S.layer(script)), Effect.provide(Idempotency.layerMemory)))

  it.effect("policy feedback: the denied call is answered permission_denied, the others run", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const result = yield* run({ permissionPolicy: "feedback" }).pipe(
        Effect.provide(handlers(world)),
        Effect.provideService(Authorization.Principal, viewer)
      )
      const [quote, book] = toolResults(result.transcript)
      assert.strictEqual(quote?.status, "success")
      assert.strictEqual(book?.status, "permission_denied")
      assert.deepStrictEqual(book?.error, { code: "PERMISSION_DENIED", message: "not permitted: tool 'book' requires 'billing:write'" })
      assert.deepStrictEqual(yield* Ref.get(world.booked), [])
    }).pipe(Effect.provide(S.layer(script)), Effect.provide(Idempotency.layerMemory)))

  it.effect("without a principal a tool that requires a permission never runs", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const error = yield* Effect.flip(run().pipe(Effect.provide(handlers(world))))
      assert(error._tag === "PermissionDenied")
      assert.isUndefined(error.userId)
      assert.include(error.message, "the run has no principal")
      assert.deepStrictEqual(yield* Ref.get(world.booked), [])
    }).pipe(Effect.provide(S.layer(script)), Effect.provide(Idempotency.layerMemory)))

  it.effect("the holder of the permission runs the tool", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const result = yield* run().pipe(Effect.provide(handlers(world)), Effect.provideService(Authorization.Principal, billing))
      assert.deepStrictEqual(toolResults(result.transcript).map((r) => r.status), ["success", "success"])
      assert.deepStrictEqual(yield* Ref.get(world.booked), ["run_1:call_1_2"])
    }).pipe(Effect.provide(S.layer(script)), Effect.provide(Idempotency.layerMemory)))

  it.effect("a malformed permission declaration is refused at start-up", () =>
    Effect.gen(function*() {
      const Bad = Tool.make("bad", { success: Schema.String }).annotate(Authorization.RequiresPermission, "has spaces!")
      const BadKit = Toolkit.make(Bad)
      const error = yield* Effect.flip(
        Agent.run({ prompt: "go", toolkit: BadKit }).pipe(Effect.provide(BadKit.toLayer({ bad: () => Effect.succeed("x") })))
      )
      assert(error._tag === "InvalidOptions")
      assert.include(error.message, `tool 'bad' declares a malformed permission "has spaces!"`)
    }).pipe(Effect.provide(S.layer([]))))
})


describe("idempotency", () => {
  it.effect("a mutating tool without a store is refused at start-up", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const error = yield* Effect.flip(run().pipe(Effect.provide(handlers(world))))
      assert(error._tag === "InvalidOptions")
      assert.include(error.message, "tool 'book' is mutating, and no IdempotencyStore is in the environment")
    }).pipe(Effect.provide(S.layer([]))))

  it.effect("the same key twice runs the handler once; the second gets the recorded result", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const first = yield* run().pipe(Effect.provide(handlers(world)), Effect.provide(S.layer(bookTwice)))
      const second = yield* run().pipe(Effect.provide(handlers(world)), Effect.provide(S.layer(bookTwice)))
      assert.deepStrictEqual(yield* Ref.get(world.booked), ["run_1:same"])
      const [a] = toolResults(first.transcript)
      const [b] = toolResults(second.transcript)
      assert.deepStrictEqual(a, { status: "success", data: "booked 10", metadata: { tool: "book", callId: "same", latencyMs: 0, idempotencyKey: "run_1:same" } })
      assert.deepStrictEqual(b, { ...a, metadata: { ...(a!.metadata as object), replayed: true } })
    }).pipe(Effect.provide(Idempotency.layerMemory), Effect.provideService(Authorization.Principal, billing)))

  it.effect("the same key arriving at the same time: one runs, the other waits for its result", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld(1000)
      const both = Effect.all(
        [run().pipe(Effect.provide(S.layer(bookTwice))), run().pipe(Effect.provide(S.layer(bookTwice)))],
        { concurrency: 2 }
      ).pipe(Effect.provide(handlers(world)))
      const fiber = yield* Effect.fork(both)
      yield* TestClock.adjust("1 second")
      const [a, b] = yield* Fiber.join(fiber)
      assert.deepStrictEqual(yield* Ref.get(world.booked), ["run_1:same"])
      const replayed = [a, b].map((r) => (toolResults(r.transcript)[0]!.metadata as { replayed?: boolean }).replayed === true)
      assert.deepStrictEqual(replayed.sort(), [false, true])
    }).pipe(Effect.provide(Idempotency.layerMemory), Effect.provideService(Authorization.Principal, billing)))

  it.effect("a call interrupted while it ran is not run again: its outcome is reported unknown", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld(60_000)
      const checkpoints = yield* Ref.make<ReadonlyArray<Transcript.Transcript>>([])
      const fiber = yield* Effect.fork(
        run({ onCheckpoint: (s) => Ref.update(checkpoints, (all) => [...all, s.transcript]) }).pipe(
          Effect.provide(handlers(world)),
          Effect.provide(S.layer(bookTwice))
        )
      )
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(fiber)
      const waiting = (yield* Ref.get(checkpoints))[0]!
      const resumed = yield* Agent.run({ toolkit: Kit, runId: "run_1", transcript: waiting }).pipe(
        Effect.provide(handlers(world)),
        Effect.provide(S.layer([S.text("checked")]))
      )
      const [result] = toolResults(resumed.transcript)
      assert.strictEqual(result?.status, "fatal_error")
      assert.strictEqual((result?.error as { code: string }).code, "OUTCOME_UNKNOWN")
      assert.deepStrictEqual(yield* Ref.get(world.booked), [])
    }).pipe(Effect.provide(Idempotency.layerMemory), Effect.provideService(Authorization.Principal, billing)))
})

describe("parallel calls", () => {
  const withStore = Effect.provide(Idempotency.layerMemory)
  it.effect("ten calls of 100 ms with enough concurrency take about 100 ms together", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const calls = Array.from({ length: 10 }, () => S.call("wait", { ms: 100 }))
      const fiber = yield* Effect.fork(
        run({ concurrency: 10 }).pipe(Effect.provide(handlers(world)), Effect.provide(S.layer([S.calls(...calls), S.text("done")])))
      )
      yield* TestClock.adjust("100 millis")
      const result = yield* Fiber.join(fiber)
      const results = toolResults(result.transcript)
      assert.strictEqual(results.length, 10)
      assert.isTrue(results.every((r) => r.status === "success" && (r.metadata as { latencyMs: number }).latencyMs === 100))
    }).pipe(withStore))

  it.effect("with concurrency 2 the same batch takes five rounds", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const calls = Array.from({ length: 10 }, () => S.call("wait", { ms: 100 }))
      const fiber = yield* Effect.fork(
        run({ concurrency: 2 }).pipe(Effect.provide(handlers(world)), Effect.provide(S.layer([S.calls(...calls), S.text("done")])))
      )
      yield* TestClock.adjust("400 millis")
      assert.isNull(fiber.unsafePoll())
      yield* TestClock.adjust("100 millis")
      assert.strictEqual((yield* Fiber.join(fiber)).answer, "done")
    }).pipe(withStore))

  it.effect("a hung call becomes a timeout result; the others are not held back", () =>
    Effect.gen(function*() {
      const world = yield* makeWorld()
      const fiber = yield* Effect.fork(
        run().pipe(
          Effect.provide(handlers(world)),
          Effect.provide(S.layer([S.calls(S.call("wait", { ms: 600_000 }), S.call("wait", { ms: 10 })), S.text("done")]))
        )
      )
      yield* TestClock.adjust("1 second")
      const result = yield* Fiber.join(fiber)
      const [hung, quick] = toolResults(result.transcript)
      assert.strictEqual(hung?.status, "timeout")
      assert.deepStrictEqual(hung?.error, { code: "TIMEOUT", message: "the call did not finish within 1000 ms and was stopped" })
      assert.strictEqual(quick?.status, "success")
      assert.strictEqual((quick?.metadata as { latencyMs: number }).latencyMs, 10)
    }).pipe(withStore))

  it.effect("a default tool timeout from the budget; an invalid one is refused", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(run({ budget: { toolTimeout: "-1 seconds" } }).pipe(Effect.provide(handlers(yield* makeWorld()))))
      assert(error._tag === "InvalidOptions")
      assert.include(error.message, "budget.toolTimeout must be a finite positive duration")
    }).pipe(Effect.provide(S.layer([]))))
})

