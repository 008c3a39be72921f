import { Agent, type HarnessEvent, Retry } from "@agent-harness/core"
import { ScriptedModel } from "@agent-harness/testing"
import { AiError, LanguageModel, type Toolkit } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Either, Exit, Fiber, Option, Ref, TestClock } from "effect"
import { type Log, makeLog, Tools, toolsLayer } from "./fixtures.js"

const S = ScriptedModel

const httpError = (status: number, headers: Record<string, string> = {}, body?: string) =>
  new AiError.HttpResponseError({
    module: "Test",
    method: "generateText",
    reason: "StatusCode",
    request: { method: "POST", url: "http://127.0.0.1/v1", urlParams: [], hash: Option.none(), headers: {} },
    response: { status, headers },
    ...(body === undefined ? {} : { body })
  })

const transportError = new AiError.HttpRequestError({
  module: "Test",
  method: "generateText",
  reason: "Transport",
  request: { method: "POST", url: "http://127.0.0.1/v1", urlParams: [], hash: Option.none(), headers: {} },
  description: "socket hang up"
})

const truncatedBody = new AiError.HttpResponseError({
  module: "Test",
  method: "generateText",
  reason: "Decode",
  request: { method: "POST", url: "http://127.0.0.1/v1", urlParams: [], hash: Option.none(), headers: {} },
  response: { status: 200, headers: {} },
  description: "Unexpected end of JSON input"
})

type Options = Partial<Agent.Options<Toolkit.Tools<typeof Tools>>>

/** Runs under TestClock, moving time until the run ends; returns what it did. */
const play = (script: ReadonlyArray<ScriptedModel.Turn>, options: Options = {}, advance: Duration.DurationInput = "10 minutes") =>
  Effect.gen(function*() {
    const log: Log = yield* makeLog
    const events = yield* Ref.make<ReadonlyArray<HarnessEvent.HarnessEvent>>([])
    const [model, scripted] = yield* ScriptedModel.make(script)
    const fiber = yield* Agent.run({
      prompt: "go",
      toolkit: Tools,
      onEvent: (e) => Ref.update(events, (all) => [...all, e]),
      ...options
    }).pipe(Effect.provide(toolsLayer(log)), Effect.provideService(LanguageModel.LanguageModel, model), Effect.fork)
    yield* TestClock.adjust(advance)
    // A run still waiting is stopped, so that a test can look at it mid-way.
    const exit = Option.getOrElse(yield* Fiber.poll(fiber), () => Exit.interrupt(fiber.id()))
    yield* Fiber.interrupt(fiber)
    const all = yield* Ref.get(events)
    return {
      exit,
      requests: (yield* scripted.requests).length,
      started: yield* Ref.get(log.started),
      retries: all.filter((e): e is HarnessEvent.ModelCallRetrying => e._tag === "ModelCallRetrying"),
      events: all
    }
  })

const modelError = (exit: Exit.Exit<Agent.Result, unknown>) => {
  assert(Exit.isFailure(exit) && exit.cause._tag === "Fail")
  const error = exit.cause.error as { _tag: string; reason: string; description: string }
  assert.strictEqual(error._tag, "ModelError")
  return error
}

describe("Retry", () => {
  it.effect("a 503 then an answer: retried once after the first delay, the run succeeds", () =>
    Effect.gen(function*() {
      const r = yield* play([S.fail(httpError(503)), S.text("done")])
      assert(Exit.isSuccess(r.exit))
      assert.strictEqual(r.exit.value.answer, "done")
      assert.strictEqual(r.exit.value.steps, 1)
      assert.strictEqual(r.requests, 2)
      assert.strictEqual(r.retries.length, 1)
      const [retry] = r.retries
      assert.strictEqual(retry!.attempt, 1)
      assert.strictEqual(retry!.reason, "unavailable")
      // 500 ms, jittered by 0.8x-1.2x.
      assert.isAtLeast(retry!.delayMs, 400)
      assert.isAtMost(retry!.delayMs, 600)
      // One model call for the step, announced once, ended once.
      assert.deepStrictEqual(r.events.map((e) => e._tag), ["RunStarted", "ModelCallStarted", "ModelCallRetrying", "ModelCallEnded", "RunEnded"])
    }))

  it.effect("the delay waits for real: the retry is not made before it", () =>
    Effect.gen(function*() {
      const r = yield* play([S.fail(httpError(429, { "retry-after": "7" })), S.text("done")], {}, "6 seconds")
      // Not finished: the provider asked for 7 s.
      assert(Exit.isInterrupted(r.exit))
      assert.strictEqual(r.requests, 1)
      assert.strictEqual(r.retries[0]!.delayMs, 7000)
      assert.strictEqual(r.retries[0]!.retryAfterMs, 7000)
    }))

  const retryAfter: ReadonlyArray<[string, Record<string, string>, number]> = [
    ["retry-after in seconds", { "retry-after": "3" }, 3000],
    ["retry-after-ms", { "retry-after-ms": "1500" }, 1500],
    ["retry-after as an HTTP date", { "retry-after": new Date(12_000).toUTCString() }, 12_000],
    ["a retry-after shorter than the backoff", { "retry-after": "0" }, -1],
    ["an unreadable retry-after (the backoff alone)", { "retry-after": "soon" }, -1]
  ]
  for (const [label, headers, expected] of retryAfter) {
    it.effect(`honours ${label}`, () =>
      Effect.gen(function*() {
        const r = yield* play([S.fail(httpError(429, headers)), S.text("done")])
        assert(Exit.isSuccess(r.exit))
        const delay = r.retries[0]!.delayMs
        if (expected < 0) assert.isAtLeast(delay, 400)
        else assert.strictEqual(delay, expected)
      }))
  }

  const transient: ReadonlyArray<[string, AiError.AiError, string]> = [
    ["429", httpError(429), "rate_limited"],
    ["408", httpError(408), "transport"],
    ["500", httpError(500), "unavailable"],
    ["529 overloaded", httpError(529), "unavailable"],
    ["a reset connection", transportError, "transport"],
    ["a body that stopped midway", truncatedBody, "transport"],
    ["a 400 the provider says to retry (x-should-retry)", httpError(400, { "x-should-retry": "true" }), "bad_request"]
  ]
  for (const [label, error, reason] of transient) {
    it.effect(`retries ${label}`, () =>
      Effect.gen(function*() {
        const r = yield* play([S.fail(error), S.fail(error), S.text("done")])
        assert(Exit.isSuccess(r.exit))
        assert.strictEqual(r.requests, 3)
        assert.deepStrictEqual(r.retries.map((e) => [e.attempt, e.reason]), [[1, reason], [2, reason]])
      }))
  }

  const permanent: ReadonlyArray<[string, AiError.AiError, string]> = [
    ["400", httpError(400), "bad_request"],
    ["401", httpError(401), "authentication"],
    ["403", httpError(403), "authentication"],
    ["an exhausted quota (429 insufficient_quota)", httpError(429, {}, "{\"error\":{\"code\":\"insufficient_quota\"}}"), "rate_limited"],
    ["a 503 the provider says not to retry", httpError(503, { "x-should-retry": "false" }), "unavailable"],
    ["malformed output", new AiError.MalformedOutput({ module: "Test", method: "generateText", description: "bad" }), "malformed_output"]
  ]
  for (const [label, error, reason] of permanent) {
    it.effect(`does not retry ${label}`, () =>
      Effect.gen(function*() {
        const r = yield* play([S.fail(error), S.text("never")])
        const e = modelError(r.exit)
        assert.strictEqual(e.reason, reason)
        assert.strictEqual(r.requests, 1)
        assert.strictEqual(r.retries.length, 0)
      }))
  }

  it.effect("gives up after maxAttempts with the last error", () =>
    Effect.gen(function*() {
      const r = yield* play([S.fail(httpError(500)), S.fail(httpError(502)), S.fail(httpError(503)), S.text("never")], {
        retry: { maxAttempts: 3, initialDelay: "100 millis" }
      })
      const e = modelError(r.exit)
      assert.strictEqual(e.reason, "unavailable")
      assert.include(e.description, "gave up after 3 attempts")
      assert.include(e.description, "503")
      assert.strictEqual(r.requests, 3)
      assert.deepStrictEqual(r.retries.map((x) => x.attempt), [1, 2])
      // Exponential: the second delay is about twice the first.
      assert.isAtLeast(r.retries[1]!.delayMs, 160)
      assert.isAtMost(r.retries[1]!.delayMs, 240)
    }))

  it.effect("retry: false makes one attempt", () =>
    Effect.gen(function*() {
      const r = yield* play([S.fail(httpError(503)), S.text("never")], { retry: false })
      assert.strictEqual(modelError(r.exit).reason, "unavailable")
      assert.strictEqual(r.requests, 1)
    }))

  it.effect("no retry starts that cannot finish before the deadline: ModelError at once, not a wait into DeadlineExceeded", () =>
    Effect.gen(function*() {
      // The failed attempt took 1 s; 5 s of retry-after plus 1 s would pass the 4 s deadline.
      const r = yield* play([S.fail(httpError(429, { "retry-after": "2" }), { delay: "1 second" }), S.text("never")], {
        budget: { timeout: "4 seconds" }
      })
      // 1 s + 2 s wait + 1 s (estimated attempt) = 4 s: not before the deadline.
      const e = modelError(r.exit)
      assert.include(e.description, "before the deadline")
      assert.strictEqual(r.requests, 1)
      assert.strictEqual(r.retries.length, 0)
    }))

  it.effect("a retry that fits before the deadline is made", () =>
    Effect.gen(function*() {
      const r = yield* play([S.fail(httpError(429, { "retry-after": "2" }), { delay: "1 second" }), S.text("ok")], {
        budget: { timeout: "4001 millis" }
      })
      assert(Exit.isSuccess(r.exit))
      assert.strictEqual(r.requests, 2)
    }))

  it.effect("a retry-after longer than maxDelay ends the run instead of holding it", () =>
    Effect.gen(function*() {
      const r = yield* play([S.fail(httpError(429, { "retry-after": "120" })), S.text("never")])
      const e = modelError(r.exit)
      assert.include(e.description, "more than retry.maxDelay")
      assert.strictEqual(r.requests, 1)
    }))

  it.effect("a retried model call never repeats a tool", () =>
    Effect.gen(function*() {
      const r = yield* play([
        S.calls(S.call("add", { a: 1, b: 2 })),
        S.fail(httpError(500)),
        S.fail(transportError),
        S.text("3")
      ])
      assert(Exit.isSuccess(r.exit))
      assert.deepStrictEqual(r.started, ["add"])
      assert.strictEqual(r.exit.value.toolCalls, 1)
      assert.strictEqual(r.exit.value.steps, 2)
      assert.strictEqual(r.requests, 4)
    }))

  it.effect("bad retry options are InvalidOptions", () =>
    Effect.gen(function*() {
      const r = yield* play([], { retry: { maxAttempts: 0, initialDelay: "-1 seconds" as Duration.DurationInput, maxDelay: "1 millis" } })
      assert(Exit.isFailure(r.exit) && r.exit.cause._tag === "Fail")
      const error = r.exit.cause.error
      assert(error._tag === "InvalidOptions")
      assert.include(error.message, "retry.maxAttempts must be an integer >= 1")
    }))
})

describe("Retry.make", () => {
  it("checks every field", () => {
    assert.deepStrictEqual(Retry.make(false), Either.right(Retry.none))
    assert.deepStrictEqual(Retry.make(), Either.right(Retry.defaults))
    const bad = Retry.make({ maxAttempts: 1.5, initialDelay: "2 seconds", maxDelay: "1 second" })
    assert(Either.isLeft(bad))
    assert.strictEqual(bad.left.length, 2)
    assert(Either.isLeft(Retry.make({ maxDelay: Duration.infinity })))
  })
})
