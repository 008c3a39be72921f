/**
 * Retries on the wire: each transient fault is served by the local provider server to the
 * real provider client, between a tool call and the answer, with `TestClock` driving the
 * waits. A retried model call must never run a tool again.
 */
import { Agent, type HarnessEvent } from "@agent-harness/core"
import { type LanguageModel, Tool, Toolkit } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Fiber, type Layer, Option, Ref, Schema, TestClock } from "effect"
import * as ProviderServer from "./ProviderServer.js"
import { anthropic, openAi } from "./providers.js"

const GetCapital = Tool.make("get_capital", { parameters: { country: Schema.String }, success: Schema.String })
const GetWeather = Tool.make("getWeather", { parameters: { location: Schema.String }, success: Schema.String })
const Tools = Toolkit.make(GetCapital, GetWeather)

const realWait = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 5)))

/**
 * Lets the run go until it ends: real time for the server to answer, and the TestClock
 * moved to each sleep the run waits on. Returns the exit and the virtual time it took.
 */
const drive = <A, E>(fiber: Fiber.RuntimeFiber<A, E>, advance: boolean) =>
  Effect.gen(function*() {
    const start = yield* TestClock.currentTimeMillis
    while (true) {
      const done = yield* Fiber.poll(fiber)
      if (Option.isSome(done)) return { exit: done.value, elapsedMs: (yield* TestClock.currentTimeMillis) - start }
      const wakes = Chunk.toReadonlyArray(yield* TestClock.sleeps())
      if (wakes.length === 0 || !advance) yield* realWait
      else yield* TestClock.setTime(Math.min(...wakes))
    }
  })

interface Setup {
  readonly label: string
  readonly provider: (server: ProviderServer.ProviderServer) => Layer.Layer<LanguageModel.LanguageModel>
  readonly call: ProviderServer.Reply
  readonly answer: ProviderServer.Reply
  readonly tool: string
  /** An error body in the provider's own envelope. */
  readonly error: (type: "rate_limit_error" | "timeout_error" | "api_error" | "invalid_request_error") => unknown
}

const setups: ReadonlyArray<Setup> = [
  {
    label: "openai",
    provider: (s) => openAi(s),
    call: ProviderServer.Reply.fixture("openai/response-function-call-single.json"),
    answer: ProviderServer.Reply.fixture("openai/response-final-message-after-tool-call-cached-tokens.json"),
    tool: "get_capital",
    error: (type) => ({ error: { message: "try again", type, param: null, code: null } })
  },
  {
    label: "anthropic",
    provider: (s) => anthropic(s),
    call: ProviderServer.Reply.fixture("anthropic/message-tool-use-single.json"),
    answer: ProviderServer.Reply.fixture("anthropic/message-end-turn-text-cache-usage.json"),
    tool: "getWeather",
    error: (type) => ({ type: "error", error: { type, message: "try again" } })
  }
]

/** call -> faults -> answer; returns what happened. */
const play = (setup: Setup, faults: ReadonlyArray<ProviderServer.Reply>, options: Partial<Agent.Options<Toolkit.Tools<typeof Tools>>> = {}) =>
  Effect.gen(function*() {
    const ran = yield* Ref.make<ReadonlyArray<string>>([])
    const handlers = Tools.toLayer({
      get_capital: ({ country }) => Effect.as(Ref.update(ran, (all) => [...all, "get_capital"]), `capital of ${country}`),
      getWeather: ({ location }) => Effect.as(Ref.update(ran, (all) => [...all, "getWeather"]), `sunny in ${location}`)
    })
    const server = yield* ProviderServer.make([setup.call, ...faults, setup.answer])
    const events: Array<HarnessEvent.HarnessEvent> = []
    const fiber = yield* Agent.run({
      prompt: "go",
      toolkit: Tools,
      onEvent: (e) => Effect.sync(() => void events.push(e)),
      ...options
    }).pipe(Effect.provide(setup.provider(server)), Effect.provide(handlers), Effect.fork)
    // A run with a deadline has its timer among the sleeps from the start: the clock must
    // not be moved for it.
    const { elapsedMs, exit } = yield* drive(fiber, options.budget?.timeout === undefined)
    return {
      exit,
      elapsedMs,
      requests: server.requests.length,
      ran: yield* Ref.get(ran),
      retries: events.filter((e): e is HarnessEvent.ModelCallRetrying => e._tag === "ModelCallRetrying")
    }
  })

const json = (value: unknown, status: number, headers: Record<string, string> = {}) => ProviderServer.Reply.json(value, { status, headers })
const overloaded = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }

describe("retries on the wire", () => {
  for (const setup of setups) {
    const faults: ReadonlyArray<readonly [string, ProviderServer.Reply, string]> = [
      ["429 with retry-after", json(setup.error("rate_limit_error"), 429, { "retry-after": "3" }), "rate_limited"],
      ["408", json(setup.error("timeout_error"), 408), "transport"],
      ["500", json(setup.error("api_error"), 500), "unavailable"],
      ["503 with an HTML page", ProviderServer.Reply.text("<html>down</html>", { status: 503, headers: { "content-type": "text/html" } }), "unavailable"],
      ["529 overloaded", json(overloaded, 529), "unavailable"],
      ["a connection reset", ProviderServer.Reply.reset(), "transport"],
      ["a body that stops midway", ProviderServer.Reply.cut(ProviderServer.Reply.json({ id: "x", padding: "y".repeat(4000) }), 100), "transport"]
    ]
    for (const [what, fault, reason] of faults) {
      it.scoped(`${setup.label}: ${what} is retried; the tool before it ran once`, () =>
        Effect.gen(function*() {
          const r = yield* play(setup, [fault])
          assert(Exit.isSuccess(r.exit), String(r.exit))
          assert.strictEqual(r.requests, 3)
          assert.deepStrictEqual(r.ran, [setup.tool])
          assert.deepStrictEqual(r.retries.map((e) => [e.step, e.attempt, e.reason]), [[2, 1, reason]])
          assert.strictEqual(r.exit.value.steps, 2)
          assert.strictEqual(r.exit.value.toolCalls, 1)
        }))
    }

    it.scoped(`${setup.label}: retry-after is waited out on the clock, not sooner`, () =>
      Effect.gen(function*() {
        const r = yield* play(setup, [json(setup.error("rate_limit_error"), 429, { "retry-after": "20" })])
        assert(Exit.isSuccess(r.exit))
        assert.strictEqual(r.retries[0]!.delayMs, 20_000)
        assert.strictEqual(r.elapsedMs, 20_000)
      }))

    it.scoped(`${setup.label}: an exhausted quota and a bad request are not retried`, () =>
      Effect.gen(function*() {
        const quota = yield* play(setup, [ProviderServer.Reply.fixture("openai/error-429-insufficient-quota.json", { status: 429 })])
        assert(Exit.isFailure(quota.exit))
        assert.strictEqual(quota.requests, 2)
        assert.strictEqual(quota.retries.length, 0)
        const bad = yield* play(setup, [json(setup.error("invalid_request_error"), 400)])
        assert(Exit.isFailure(bad.exit))
        assert.strictEqual(bad.requests, 2)
      }))
  }

  it.scoped("a retry that cannot finish before the deadline is not started", () =>
    Effect.gen(function*() {
      const openai = setups[0]!
      const r = yield* play(openai, [json(openai.error("rate_limit_error"), 429, { "retry-after": "20" })], { budget: { timeout: "10 seconds" } })
      assert(Exit.isFailure(r.exit) && r.exit.cause._tag === "Fail")
      const error = r.exit.cause.error
      assert(error._tag === "ModelError")
      assert.include(error.description, "before the deadline")
      assert.strictEqual(r.requests, 2)
      // It ended at once rather than waiting into DeadlineExceeded.
      assert.strictEqual(r.elapsedMs, 0)
    }))

  it.scoped("attempts are bounded: the last error ends the run", () =>
    Effect.gen(function*() {
      const openai = setups[0]!
      const down = json(openai.error("api_error"), 500)
      const r = yield* play(openai, [down, down, down], {
        retry: { maxAttempts: 3 }
      })
      assert(Exit.isFailure(r.exit) && r.exit.cause._tag === "Fail")
      const error = r.exit.cause.error
      assert(error._tag === "ModelError")
      assert.include(error.description, "gave up after 3 attempts")
      assert.strictEqual(r.requests, 4)
      assert.deepStrictEqual(r.ran, ["get_capital"])
    }))
})
