import { Agent, type AgentError, Transcript } from "@agent-harness/core"
import { ScriptedModel } from "@agent-harness/testing"
import { AiError, type LanguageModel, Prompt, type Tool, type Toolkit } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Exit, Fiber, Option, Ref, Schema, Supervisor, TestClock } from "effect"
import { Add, type Log, makeLog, toolResults, Tools, toolsLayer } from "./fixtures.js"

type Handlers = Tool.HandlersFor<Toolkit.Tools<typeof Tools>>

const scenario = <A, E>(
  script: ReadonlyArray<ScriptedModel.Turn>,
  body: (log: Log) => Effect.Effect<A, E, LanguageModel.LanguageModel | ScriptedModel.ScriptedModel | Handlers>
) =>
  Effect.gen(function*() {
    const log = yield* makeLog
    return yield* body(log).pipe(Effect.provide(toolsLayer(log)))
  }).pipe(Effect.provide(ScriptedModel.layer(script)))

const run = (options: Partial<Agent.Options<Toolkit.Tools<typeof Tools>>> = {}) =>
  Agent.run({ prompt: "go", toolkit: Tools, ...options })

const S = ScriptedModel

const assertValid = (transcript: Transcript.Transcript) => {
  const checked = Transcript.check(transcript)
  if (Either.isLeft(checked)) assert.fail(checked.left.message)
}

describe("Agent.run", () => {
  it.effect("runs a tool and returns the answer that follows, with the exact transcript", () =>
    scenario(
      [
        S.callsWith({ usage: { inputTokens: 10, outputTokens: 4 } }, S.call("add", { a: 2, b: 3 })),
        S.text("2 + 3 = 5", { usage: { inputTokens: 20, outputTokens: 6 } })
      ],
      (log) =>
        Effect.gen(function*() {
          const result = yield* run({ system: "Be brief.", runId: "run_fixed" })
          assert.strictEqual(result.answer, "2 + 3 = 5")
          assert.strictEqual(result.runId, "run_fixed")
          assert.strictEqual(result.steps, 2)
          assert.strictEqual(result.toolCalls, 1)
          assert.strictEqual(result.finishReason, "stop")
          assert.deepStrictEqual(result.usage, {
            calls: 2,
            reportedCalls: 2,
            inputTokens: 30,
            outputTokens: 10,
            totalTokens: 40
          })
          assert.deepStrictEqual(yield* Ref.get(log.finished), ["add"])
          const json = yield* Schema.encode(Transcript.Json)(result.transcript)
          assert.deepStrictEqual(yield* Schema.decode(Transcript.Json)(json), result.transcript)
          const encoded = result.transcript
          assert.deepStrictEqual(
            encoded.map((m) => [m.role, typeof m.content === "string" ? m.content : m.content.map((p) => p.type)]),
            [["system", "Be brief."], ["user", ["text"]], ["assistant", ["tool-call"]], ["tool", ["tool-result"]], [
              "assistant",
              ["text"]
            ]]
          )
          const call = result.transcript[2]!
          assert(call.role === "assistant" && call.content[0]?.type === "tool-call")
          assert.strictEqual(call.content[0].id, "call_1_1")
          assert.deepStrictEqual(call.content[0].params, { a: 2, b: 3 })
          assert.deepStrictEqual(toolResults(result.transcript), [
            { status: "success", data: 5, metadata: { tool: "add", callId: "call_1_1", latencyMs: 0 } }
          ])
          const requests = yield* (yield* S.ScriptedModel).requests
          assert.strictEqual(requests.length, 2)
          assert.deepStrictEqual(requests[0]!.toolNames, ["add", "order", "boom", "slow"])
          // The provider is shown the real schema even though decoding is permissive.
          assert.deepStrictEqual(requests[0]!.tools[0]!.parameters, {
            type: "object",
            required: ["a", "b"],
            properties: { a: { type: "number" }, b: { type: "number" } },
            additionalProperties: false
          })
          assert.strictEqual(requests[1]!.messages.length, 4)
          yield* (yield* S.ScriptedModel).assertFinished
        })
    ))

  it.effect("an unknown tool becomes a validation_error tied to its call id; the others run", () =>
    scenario(
      [S.calls(S.call("delete_everything", {}), S.call("add", { a: 1, b: 1 })), S.text("sorry")],
      (log) =>
        Effect.gen(function*() {
          const result = yield* run()
          const [unknown, add] = toolResults(result.transcript)
          assert.deepStrictEqual(unknown, {
            status: "validation_error",
            error: {
              code: "UNKNOWN_TOOL",
              message: "unknown tool 'delete_everything'; available tools: add, order, boom, slow"
            },
            metadata: { tool: "delete_everything", callId: "call_1_1", latencyMs: 0 }
          })
          assert.strictEqual(add?.status, "success")
          assert.deepStrictEqual(yield* Ref.get(log.started), ["add"])
          assert.strictEqual(result.answer, "sorry")
        })
    ))

  it.effect("invalid arguments name the nested path, and the tool never runs", () =>
    scenario(
      [S.calls(S.call("order", { items: [{ sku: "a", qty: "two" }, { qty: 1 }] })), S.text("fixed")],
      (log) =>
        Effect.gen(function*() {
          const result = yield* run()
          const [envelope] = toolResults(result.transcript)
          assert.strictEqual(envelope?.status, "validation_error")
          const error = envelope?.error as { code: string; message: string; details: Array<{ path: string }> }
          assert.strictEqual(error.code, "INVALID_ARGUMENTS")
          assert.deepStrictEqual(error.details.map((d) => d.path), ["$.items[0].qty", "$.items[1].sku"])
          assert.include(error.message, "$.items[0].qty: Expected number")
          assert.deepStrictEqual(yield* Ref.get(log.started), [])
          // The model got the next turn and saw the error.
          const requests = yield* (yield* S.ScriptedModel).requests
          assert.strictEqual(requests[1]!.messages.at(-1)!.role, "tool")
        })
    ))

  it.effect("arguments that are not JSON are an INVALID_JSON validation_error", () =>
    scenario([S.calls(S.call("add", "{\"a\": 1,")), S.text("retrying")], (log) =>
      Effect.gen(function*() {
        const result = yield* run()
        const [envelope] = toolResults(result.transcript)
        assert.strictEqual(envelope?.status, "validation_error")
        assert.strictEqual((envelope?.error as { code: string }).code, "INVALID_JSON")
        assert.deepStrictEqual(yield* Ref.get(log.started), [])
      })))

  it.effect("arguments given as JSON text are decoded like any others", () =>
    scenario([S.calls(S.call("add", "{\"a\": 1, \"b\": 2}")), S.text("3")], () =>
      Effect.gen(function*() {
        const result = yield* run()
        assert.deepStrictEqual(toolResults(result.transcript)[0]?.data, 3)
      })))

  it.effect("a typed tool failure is a recoverable result the model reacts to", () =>
    scenario(
      [
        S.calls(S.call("order", { items: [{ sku: "none", qty: 1 }] })),
        S.calls(S.call("order", { items: [{ sku: "a", qty: 1 }] })),
        S.text("ordered a instead")
      ],
      (log) =>
        Effect.gen(function*() {
          const result = yield* run()
          const [failed, ok] = toolResults(result.transcript)
          // Only the error's tag reaches the model; its message may carry internal detail.
          assert.deepStrictEqual(failed?.error, { code: "TOOL_FAILED", message: "the tool failed (OutOfStock)" })
          assert.strictEqual(failed?.status, "fatal_error")
          assert.strictEqual(ok?.status, "success")
          assert.deepStrictEqual(yield* Ref.get(log.finished), ["order"])
          assert.strictEqual(result.answer, "ordered a instead")
        })
    ))

  it.effect("a handler defect is a fatal_error result with no stack or path in it", () =>
    scenario([S.calls(S.call("boom", {})), S.text("the tool is broken")], () =>
      Effect.gen(function*() {
        const result = yield* run()
        const [envelope] = toolResults(result.transcript)
        assert.deepStrictEqual(envelope?.error, { code: "INTERNAL_ERROR", message: "tool 'boom' failed unexpectedly" })
        assert.notInclude(JSON.stringify(result.transcript), "/srv/app")
        assert.strictEqual(result.answer, "the tool is broken")
      })))

  it.effect("the step limit ends the run with BudgetExceeded(steps) after exactly maxSteps calls", () =>
    scenario(
      [S.calls(S.call("add", { a: 1, b: 1 })), S.calls(S.call("add", { a: 1, b: 2 })), S.text("never asked")],
      (log) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(run({ budget: { maxSteps: 2 } }))
          assert.strictEqual(error._tag, "BudgetExceeded")
          assert(error._tag === "BudgetExceeded")
          assert.strictEqual(error.budget, "steps")
          assert.strictEqual(error.limit, 2)
          assert.strictEqual(error.snapshot.steps, 2)
          assert.strictEqual(error.snapshot.toolCalls, 2)
          assertValid(error.snapshot.transcript)
          assert.deepStrictEqual(yield* Ref.get(log.finished), ["add", "add"])
          assert.strictEqual(yield* (yield* S.ScriptedModel).remaining, 1)
        })
    ))

  it.effect("a batch larger than the tool budget is refused whole: nothing runs, nothing is recorded", () =>
    scenario(
      [
        S.calls(S.call("add", { a: 1, b: 1 })),
        S.calls(S.call("add", { a: 1, b: 2 }), S.call("nope", {}), S.call("add", { a: "x" }))
      ],
      (log) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(run({ budget: { maxToolCalls: 3 } }))
          assert(error._tag === "BudgetExceeded")
          assert.strictEqual(error.budget, "toolCalls")
          assert.strictEqual(error.limit, 3)
          assert.strictEqual(error.requested, 4)
          assert.strictEqual(error.snapshot.toolCalls, 1)
          assert.strictEqual(error.snapshot.steps, 2)
          assert.deepStrictEqual(yield* Ref.get(log.started), ["add"])
          // user, assistant (1 call), tool: the refused batch left no trace.
          assert.deepStrictEqual(error.snapshot.transcript.map((m) => m.role), ["user", "assistant", "tool"])
          assertValid(error.snapshot.transcript)
        })
    ))

  it.effect("calls that fit the tool budget exactly all run, unknown and invalid ones counted", () =>
    scenario(
      [S.calls(S.call("add", { a: 1, b: 1 }), S.call("nope", {}), S.call("add", { a: "x" })), S.text("done")],
      (log) =>
        Effect.gen(function*() {
          const result = yield* run({ budget: { maxToolCalls: 3 } })
          assert.strictEqual(result.toolCalls, 3)
          assert.deepStrictEqual(yield* Ref.get(log.started), ["add"])
          assert.deepStrictEqual(toolResults(result.transcript).map((r) => r.status), [
            "success",
            "validation_error",
            "validation_error"
          ])
        })
    ))

  for (
    const [budget, limitKey] of [["inputTokens", "maxInputTokens"], ["outputTokens", "maxOutputTokens"], [
      "totalTokens",
      "maxTotalTokens"
    ]] as const
  ) {
    it.effect(`the ${budget} budget ends the run once exceeded, before the turn's calls run`, () =>
      scenario(
        [
          S.callsWith({ usage: { inputTokens: 60, outputTokens: 30 } }, S.call("add", { a: 1, b: 1 })),
          S.callsWith({ usage: { inputTokens: 60, outputTokens: 30 } }, S.call("add", { a: 2, b: 2 })),
          S.text("never")
        ],
        (log) =>
          Effect.gen(function*() {
            const limits = { inputTokens: 100, outputTokens: 50, totalTokens: 150 } as const
            const error = yield* Effect.flip(run({ budget: { [limitKey]: limits[budget] } }))
            assert(error._tag === "BudgetExceeded")
            assert.strictEqual(error.budget, budget)
            assert.strictEqual(error.limit, limits[budget])
            assert.strictEqual(error.requested, { inputTokens: 120, outputTokens: 60, totalTokens: 180 }[budget])
            assert.strictEqual(error.snapshot.steps, 2)
            // The second batch was not run and not recorded.
            assert.deepStrictEqual(yield* Ref.get(log.started), ["add"])
            assert.strictEqual(error.snapshot.transcript.length, 3)
          })
      ))
  }

  it.effect("a token budget with a model that reports no usage is a ModelError, not a silent pass", () =>
    scenario([S.calls(S.call("add", { a: 1, b: 1 })), S.text("never")], () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(run({ budget: { maxTotalTokens: 1000 } }))
        assert(error._tag === "ModelError")
        assert.include(error.description, "did not report totalTokens")
      })))

  it.effect("the deadline interrupts a slow model call", () =>
    scenario([S.text("too late", { delay: "10 seconds" })], () =>
      Effect.gen(function*() {
        const fiber = yield* Effect.fork(run({ budget: { timeout: "5 seconds" } }))
        yield* TestClock.adjust("5 seconds")
        const exit = yield* Fiber.await(fiber)
        assert(Exit.isFailure(exit))
        const error = yield* Effect.flip(exit)
        assert(error._tag === "DeadlineExceeded")
        assert.strictEqual(error.timeoutMillis, 5000)
        assert.strictEqual(error.snapshot.steps, 0)
        assert.deepStrictEqual(error.snapshot.transcript.map((m) => m.role), ["user"])
      })))

  it.effect("the deadline interrupts a slow tool; its call is recorded as cancelled", () =>
    scenario(
      [S.calls(S.call("slow", { ms: 1000, label: "fast" }), S.call("slow", { ms: 60_000, label: "stuck" }))],
      (log) =>
        Effect.gen(function*() {
          const checkpoints = yield* Ref.make(0)
          const fiber = yield* Effect.fork(
            run({ budget: { timeout: "30 seconds" }, onCheckpoint: () => Ref.update(checkpoints, (n) => n + 1) })
          )
          yield* TestClock.adjust("30 seconds")
          const error = yield* Effect.flip(Fiber.join(fiber))
          assert(error._tag === "DeadlineExceeded")
          assertValid(error.snapshot.transcript)
          const results = toolResults(error.snapshot.transcript)
          assert.deepStrictEqual(results.map((r) => r.status), ["success", "cancelled"])
          assert.deepStrictEqual(results[1]?.error, {
            code: "CANCELLED",
            message: "the call was cancelled before it finished"
          })
          assert.deepStrictEqual(yield* Ref.get(log.interrupted), ["stuck"])
          // One when the turn was recorded, one when its results were.
          assert.strictEqual(yield* Ref.get(checkpoints), 2)
        })
    ))

  it.effect("interrupting the caller mid-batch leaves a valid transcript and no fiber running", () =>
    scenario(
      [S.calls(
        S.call("slow", { ms: 10, label: "a" }),
        S.call("slow", { ms: 60_000, label: "b" }),
        S.call("slow", { ms: 60_000, label: "c" })
      )],
      (log) =>
        Effect.gen(function*() {
          const supervisor = yield* Supervisor.track
          const last = yield* Ref.make<ReadonlyArray<unknown>>([])
          const fiber = yield* run({ onCheckpoint: (s) => Ref.set(last, s.transcript) }).pipe(
            Effect.supervised(supervisor),
            Effect.fork
          )
          yield* TestClock.adjust("1 second")
          assert.isTrue((yield* supervisor.value).length > 0, "the batch's fibers should be running")
          yield* Fiber.interrupt(fiber)
          const transcript = (yield* Ref.get(last)) as Transcript.Transcript
          assertValid(transcript)
          assert.deepStrictEqual(toolResults(transcript).map((r) => r.status), ["success", "cancelled", "cancelled"])
          assert.deepStrictEqual([...(yield* Ref.get(log.interrupted))].sort(), ["b", "c"])
          assert.deepStrictEqual(yield* supervisor.value, [], "a fiber of the run is still running")
        })
    ))

  it.effect("regression (found writing the fault suite): an interruption while the turn is being checkpointed still leaves every recorded call answered", () =>
    scenario([S.calls(S.call("slow", { ms: 10, label: "a" }), S.call("slow", { ms: 10, label: "b" }))], (log) =>
      Effect.gen(function*() {
        const last = yield* Ref.make<Transcript.Transcript>([])
        let first = true
        const fiber = yield* Effect.fork(run({
          // A slow store: the first checkpoint (the turn, before its calls) takes a second.
          onCheckpoint: (s) =>
            Effect.zipRight(first ? (first = false, Effect.sleep("1 second")) : Effect.void, Ref.set(last, s.transcript))
        }))
        yield* TestClock.adjust("500 millis")
        yield* Fiber.interrupt(fiber).pipe(Effect.fork)
        yield* TestClock.adjust("2 seconds")
        const transcript = yield* Ref.get(last)
        assertValid(transcript)
        assert.deepStrictEqual(toolResults(transcript).map((r) => r.status), ["cancelled", "cancelled"])
        assert.deepStrictEqual(yield* Ref.get(log.started), [])
      })))

  it.effect("a failing model call ends the run with ModelError and the reason", () =>
    scenario(
      [S.fail(
        new AiError.HttpResponseError({
          module: "Test",
          method: "generateText",
          reason: "StatusCode",
          request: { method: "POST", url: "http://127.0.0.1/v1", urlParams: [], hash: Option.none(), headers: {} },
          response: { status: 429, headers: {} }
        })
      )],
      () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(run({ retry: false }))
          assert(error._tag === "ModelError")
          assert.strictEqual(error.reason, "rate_limited")
          assert.strictEqual(error.snapshot.steps, 0)
        })
    ))

  it.effect("an extra model call beyond the script is a ModelError naming the step", () =>
    scenario([S.calls(S.call("add", { a: 1, b: 1 }))], () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(run())
        assert(error._tag === "ModelError")
        assert.include(error.description, "request 2 has no scripted turn")
      })))

  const malformed: ReadonlyArray<[string, ReadonlyArray<unknown>]> = [
    ["an empty call id", [{ type: "tool-call", id: "", name: "add", params: { a: 1, b: 1 } }]],
    ["a call id that is not a string", [{ type: "tool-call", id: 7, name: "add", params: { a: 1, b: 1 } }]],
    ["a negative usage count", [{ type: "tool-call", id: "x", name: "add", params: { a: 1, b: 1 } }, {
      type: "finish",
      reason: "tool-calls",
      usage: { inputTokens: -1, outputTokens: 1, totalTokens: 0 }
    }]],
    ["a fractional usage count", [{ type: "tool-call", id: "x", name: "add", params: { a: 1, b: 1 } }, {
      type: "finish",
      reason: "tool-calls",
      usage: { inputTokens: 1.5, outputTokens: 1, totalTokens: 2 }
    }]],
    ["an unsafe usage count", [{ type: "tool-call", id: "x", name: "add", params: { a: 1, b: 1 } }, {
      type: "finish",
      reason: "tool-calls",
      usage: { inputTokens: 2 ** 60, outputTokens: 1, totalTokens: 2 }
    }]],
    ["a duplicate call id within a turn", [
      { type: "tool-call", id: "dup", name: "add", params: { a: 1, b: 1 } },
      { type: "tool-call", id: "dup", name: "add", params: { a: 2, b: 2 } }
    ]]
  ]
  for (const [label, parts] of malformed) {
    it.effect(`a malformed envelope (${label}) ends the run with ModelError before any tool runs`, () =>
      scenario([S.parts(parts as never)], (log) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(run())
          assert(error._tag === "ModelError")
          assert.strictEqual(error.reason, "malformed_output", error.description)
          assert.deepStrictEqual(yield* Ref.get(log.started), [])
          assert.deepStrictEqual(error.snapshot.transcript.map((m) => m.role), ["user"])
        })))
  }

  it.effect("a call id reused from an earlier turn is a ModelError; the second batch never runs", () =>
    scenario(
      [S.calls(S.call("add", { a: 1, b: 1 }, { id: "same" })), S.calls(S.call("add", { a: 2, b: 2 }, { id: "same" }))],
      (log) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(run())
          assert(error._tag === "ModelError")
          assert.include(error.description, "'same' is not unique")
          assert.deepStrictEqual(yield* Ref.get(log.started), ["add"])
          assertValid(error.snapshot.transcript)
        })
    ))

  it.effect("results are recorded in call order whatever order the calls finish in", () =>
    scenario(
      [
        S.calls(
          S.call("slow", { ms: 300, label: "first" }),
          S.call("slow", { ms: 100, label: "second" }),
          S.call("slow", { ms: 200, label: "third" })
        ),
        S.text("done")
      ],
      (log) =>
        Effect.gen(function*() {
          const fiber = yield* Effect.fork(run({ concurrency: 3 }))
          yield* TestClock.adjust("300 millis")
          const result = yield* Fiber.join(fiber)
          assert.deepStrictEqual(yield* Ref.get(log.finished), ["second", "third", "first"])
          const results = toolResults(result.transcript)
          assert.deepStrictEqual(results.map((r) => (r.metadata as { callId: string }).callId), [
            "call_1_1",
            "call_1_2",
            "call_1_3"
          ])
          assert.deepStrictEqual(results.map((r) => (r.metadata as { latencyMs: number }).latencyMs), [300, 100, 200])
        })
    ))

  it.effect("continues an earlier transcript", () =>
    scenario(
      [S.calls(S.call("add", { a: 1, b: 1 })), S.text("first"), S.text("second")],
      () =>
        Effect.gen(function*() {
          const first = yield* run({ prompt: "one" })
          const second = yield* run({ prompt: "two", transcript: first.transcript })
          assert.strictEqual(second.answer, "second")
          assert.deepStrictEqual(second.transcript.map((m) => m.role), [
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
            "assistant"
          ])
        })
    ))
})

describe("Agent.run option checks", () => {
  const refused = (options: Partial<Agent.Options<Toolkit.Tools<typeof Tools>>>, expected: string) =>
    scenario([], () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(run(options))
        assert(error._tag === "InvalidOptions")
        assert.include(error.message, expected)
        // Nothing reached the model.
        assert.strictEqual((yield* (yield* S.ScriptedModel).requests).length, 0)
      }))

  it.effect("a step limit of 0", () => refused({ budget: { maxSteps: 0 } }, "budget.maxSteps must be an integer >= 1"))
  it.effect("a negative timeout", () => refused({ budget: { timeout: -5 } }, "budget.timeout must be a finite positive"))
  it.effect("a fractional tool budget", () => refused({ budget: { maxToolCalls: 1.5 } }, "budget.maxToolCalls"))
  it.effect("a concurrency of 0", () => refused({ concurrency: 0 }, "concurrency must be an integer >= 1"))
  it.effect("an empty prompt", () => refused({ prompt: "  " }, "prompt must not be empty"))
  it.effect("a transcript that breaks the invariant names the call", () =>
    scenario([], () =>
      Effect.gen(function*() {
        const withOrphan: Transcript.Transcript = [
          Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: "hi" })] }),
          Prompt.makeMessage("assistant", {
            content: [Prompt.makePart("tool-call", { id: "orphan_1", name: "add", params: {}, providerExecuted: false })]
          }),
          Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: "and?" })] })
        ]
        const error = yield* Effect.flip(run({ transcript: withOrphan }))
        assert(error._tag === "InvalidOptions")
        assert.include(error.message, "tool call 'orphan_1' (add) has no result before the next user message")
        assert.strictEqual((yield* (yield* S.ScriptedModel).requests).length, 0)
      })))

  it.effect("badly named and duplicate tools", () =>
    Effect.gen(function*() {
      const bad = { ...Tools, tools: { ...Tools.tools, "has space": { ...Add, name: "has space" }, alias: Add } }
      const error = yield* Effect.flip(
        Agent.run({ prompt: "go", toolkit: bad as unknown as typeof Tools })
      )
      assert(error._tag === "InvalidOptions")
      assert.include(error.message, "tool name 'has space' must be 1-64 letters")
      assert.include(error.message, "tool name 'add' is used by more than one tool")
    }).pipe(
      Effect.provide(ScriptedModel.layer([])),
      Effect.provide(toolsLayer({} as Log))
    ))

  it.effect("a tool without a handler", () =>
    Effect.gen(function*() {
      // Deliberately run without the handlers layer: the type says they are needed.
      const missing = Agent.run({ prompt: "go", toolkit: Tools }) as Effect.Effect<
        Agent.Result,
        AgentError.AgentError | AgentError.InvalidOptions,
        LanguageModel.LanguageModel
      >
      const error = yield* Effect.flip(missing)
      assert(error._tag === "InvalidOptions")
      assert.include(error.message, "tool 'add' has no handler")
    }).pipe(Effect.provide(ScriptedModel.layer([]))))
})
