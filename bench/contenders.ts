/**
 * The same agent written five ways. Every contender plays the same script — `steps - 1`
 * steps of `calls` calls to `add({ a, b })`, then a text answer — against a model that
 * answers at once (or after `delayMs`), validates each call's arguments against the
 * same `{ a: number, b: number }` schema, appends to its transcript and serialises each
 * result. The model works out which step it is on from the request, the same way for all.
 */
import { Agent } from "@agent-harness/core"
import { LanguageModel, Prompt, type Response, Tool, Toolkit } from "@effect/ai"
import { Agent as OaAgent, type AgentInputItem, type Model as OaModel, type ModelRequest, type ModelResponse, run as oaRun, setTracingDisabled, tool as oaTool, Usage as OaUsage } from "@openai/agents"
import { generateText as aiGenerateText, stepCountIs, tool as aiTool } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import { Effect, Layer, ManagedRuntime, Schema, Stream } from "effect"
import { z } from "zod"

/** The shape of one run. */
export interface Script {
  readonly steps: number
  readonly calls: number
  /** Model latency in milliseconds (0: answers in the same tick). */
  readonly delayMs: number
  /** Tool latency in milliseconds. */
  readonly toolMs?: number
  /** Calls of one batch at once for the harness (default: all of them). */
  readonly concurrency?: number
  /** Earlier messages (user and assistant text, alternating) the run continues from. */
  readonly history?: number
}

/**
 * Which step a request is for: one more than the assistant turns since the last user
 * message (the prompt), counted from the end so that a long history costs nothing here.
 */
const stepOf = <M>(messages: ReadonlyArray<M>, role: (m: M) => string): number => {
  let step = 1
  for (let i = messages.length - 1; i >= 0; i--) {
    const r = role(messages[i]!)
    if (r === "user") break
    if (r === "assistant") step++
  }
  return step
}

/** A contender: one run of the script to its answer. */
export type RunOnce = () => Promise<string>

export const answer = "done"
const userPrompt = "Add the numbers."
const callId = (step: number, k: number) => `c${step}_${k}`
const argsOf = (step: number, k: number) => ({ a: step, b: k })
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------------------
// 1. Plain hand-written loop: the floor.
// ---------------------------------------------------------------------------

type PlainMessage =
  | { readonly role: "user"; readonly text: string }
  | { readonly role: "assistant"; readonly text: string; readonly calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: string }> }
  | { readonly role: "tool"; readonly id: string; readonly result: string }

const plainModel = async (script: Script, transcript: ReadonlyArray<PlainMessage>) => {
  const step = stepOf(transcript, (m) => m.role)
  if (script.delayMs > 0) await sleep(script.delayMs)
  if (step >= script.steps) return { text: answer, calls: [] }
  return {
    text: "",
    calls: Array.from({ length: script.calls }, (_, k) => ({ id: callId(step, k), name: "add", args: JSON.stringify(argsOf(step, k)) }))
  }
}

const plainHistory = (n: number): Array<PlainMessage> =>
  Array.from({ length: n }, (_, i) =>
    i % 2 === 0
      ? { role: "user", text: `question ${i}: ${"x".repeat(80)}` }
      : { role: "assistant", text: `answer ${i}: ${"y".repeat(80)}`, calls: [] })

/** The schema, written out by hand. */
const isAddArgs = (v: unknown): v is { a: number; b: number } =>
  typeof v === "object" && v !== null && typeof (v as { a?: unknown }).a === "number" && typeof (v as { b?: unknown }).b === "number"

export const plainLoop = (script: Script): RunOnce => async () => {
  const transcript: Array<PlainMessage> = [...plainHistory(script.history ?? 0), { role: "user", text: userPrompt }]
  const add = async (args: { a: number; b: number }) => {
    if (script.toolMs !== undefined) await sleep(script.toolMs)
    return args.a + args.b
  }
  for (let i = 0; i < script.steps; i++) {
    const turn = await plainModel(script, transcript)
    transcript.push({ role: "assistant", ...turn })
    if (turn.calls.length === 0) return turn.text
    const results = await Promise.all(turn.calls.map(async (call) => {
      const args: unknown = JSON.parse(call.args)
      const result = isAddArgs(args) ? { status: "success", data: await add(args) } : { status: "invalid_arguments" }
      return { role: "tool" as const, id: call.id, result: JSON.stringify(result) }
    }))
    transcript.push(...results)
  }
  throw new Error("plain loop: out of steps")
}

// ---------------------------------------------------------------------------
// Effect: one scripted LanguageModel for the @effect/ai loop and for Agent.run.
// ---------------------------------------------------------------------------

const Add = Tool.make("add", {
  description: "Adds two numbers",
  parameters: { a: Schema.Number, b: Schema.Number },
  success: Schema.Number
})
const Tools = Toolkit.make(Add)

const effectParts = (script: Script): Array<Array<Response.PartEncoded>> => {
  const out: Array<Array<Response.PartEncoded>> = [[]]
  for (let step = 1; step <= script.steps; step++) {
    const finish: Response.FinishPartEncoded = {
      type: "finish",
      reason: step >= script.steps ? "stop" : "tool-calls",
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }
    }
    out.push(
      step >= script.steps
        ? [{ type: "text", text: answer }, finish]
        : [
          ...Array.from({ length: script.calls }, (_, k): Response.ToolCallPartEncoded => ({
            type: "tool-call",
            id: callId(step, k),
            name: "add",
            params: argsOf(step, k)
          })),
          finish
        ]
    )
  }
  return out
}

/** A provider as cheap as one can be: the script's parts, chosen by counting turns. */
const effectModel = (script: Script) => {
  const parts = effectParts(script)
  return Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) => {
        const step = stepOf(options.prompt.content, (m) => m.role)
        const response = parts[Math.min(step, script.steps)]!
        return script.delayMs > 0 ? Effect.as(Effect.sleep(script.delayMs), response) : Effect.succeed(response)
      },
      streamText: () => Stream.die("the bench model only answers generateText")
    })
  )
}

const effectHandlers = (script: Script) =>
  Tools.toLayer({
    add: ({ a, b }) => script.toolMs === undefined ? Effect.succeed(a + b) : Effect.as(Effect.sleep(script.toolMs), a + b)
  })

const effectRuntime = (script: Script) => ManagedRuntime.make(Layer.merge(effectModel(script), effectHandlers(script)))

/** What an Effect user writes without this library: generateText in a loop. */
export const effectAiLoop = (script: Script): RunOnce => {
  const runtime = effectRuntime(script)
  const program = Effect.gen(function*() {
    let prompt = Prompt.make(userPrompt)
    for (let i = 0; i < script.steps; i++) {
      // Tool-call resolution on: @effect/ai validates the arguments against the schema,
      // runs the handler and encodes the result.
      const response = yield* LanguageModel.generateText({ prompt, toolkit: Tools, concurrency: "unbounded" })
      prompt = Prompt.merge(prompt, Prompt.fromResponseParts(response.content))
      if (response.toolCalls.length === 0) return response.text
    }
    return yield* Effect.dieMessage("@effect/ai loop: out of steps")
  })
  return () => runtime.runPromise(program)
}

const effectHistory = (n: number): Array<Prompt.Message> =>
  Array.from({ length: n }, (_, i) =>
    i % 2 === 0
      ? Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: `question ${i}: ${"x".repeat(80)}` })] })
      : Prompt.makeMessage("assistant", { content: [Prompt.makePart("text", { text: `answer ${i}: ${"y".repeat(80)}` })] }))

/**
 * Not a contender: only the `generateText` calls a run makes (tool-call resolution off,
 * as the harness makes them), nothing else. Every `@effect/ai` provider is built with
 * `LanguageModel.make`, whose `generateText` rebuilds and compiles the response schema
 * from the toolkit on every call: this is the floor of any loop over a `LanguageModel`.
 */
export const generateTextOnly = (script: Script): RunOnce => {
  const runtime = effectRuntime(script)
  // The toolkit as the harness hands it over: the tools and a handler never called.
  const toolkit: Toolkit.WithHandler<{ readonly add: Tool.Any }> = {
    tools: { add: Add.setSuccess(Schema.Unknown) },
    handle: () => Effect.die("not called")
  }
  const program = Effect.gen(function*() {
    const model = yield* LanguageModel.LanguageModel
    let prompt = Prompt.make(userPrompt)
    for (let i = 0; i < script.steps; i++) {
      const response = yield* model.generateText({ prompt, toolkit, disableToolCallResolution: true })
      if (response.toolCalls.length === 0) return response.text
      // Keep the prompt the same length as the others' without building results.
      prompt = Prompt.fromMessages([...prompt.content, Prompt.makeMessage("assistant", { content: [] })])
    }
    return yield* Effect.dieMessage("generateText only: out of steps")
  })
  return () => runtime.runPromise(program)
}

/** `Agent.run` with the default options: no tracer, no observer. */
export const agentRun = (script: Script): RunOnce => {
  const runtime = effectRuntime(script)
  const transcript = script.history === undefined ? undefined : effectHistory(script.history)
  const program = Effect.map(
    Agent.run({
      prompt: userPrompt,
      transcript,
      toolkit: Tools,
      budget: { maxSteps: script.steps, maxToolCalls: script.steps * script.calls },
      concurrency: script.concurrency ?? Math.max(1, script.calls)
    }),
    (result) => result.answer
  )
  return () => runtime.runPromise(program)
}

/** Agent.run as an effect with its runtime, for benchmarks that drive many runs at once. */
export const agentProgram = (script: Script): {
  readonly runtime: ManagedRuntime.ManagedRuntime<LanguageModel.LanguageModel | Tool.Handler<"add">, never>
  readonly program: Effect.Effect<string, unknown, LanguageModel.LanguageModel | Tool.Handler<"add">>
} => {
  const runtime = effectRuntime(script)
  const program = Agent.run({
    prompt: userPrompt,
    toolkit: Tools,
    budget: { maxSteps: script.steps, maxToolCalls: script.steps * script.calls },
    concurrency: script.concurrency ?? Math.max(1, script.calls)
  })
  return { runtime, program: Effect.map(program, (r) => r.answer) }
}

// ---------------------------------------------------------------------------
// Vercel AI SDK: generateText with a mock model and a step stop condition.
// ---------------------------------------------------------------------------

const aiUsage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined }
}

export const vercelAi = (script: Script): RunOnce => {
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      const step = stepOf(options.prompt, (m) => m.role)
      if (script.delayMs > 0) await sleep(script.delayMs)
      if (step >= script.steps) {
        return { content: [{ type: "text", text: answer }], finishReason: { unified: "stop", raw: "stop" }, usage: aiUsage, warnings: [] }
      }
      return {
        content: Array.from({ length: script.calls }, (_, k) => ({
          type: "tool-call" as const,
          toolCallId: callId(step, k),
          toolName: "add",
          input: JSON.stringify(argsOf(step, k))
        })),
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage: aiUsage,
        warnings: []
      }
    }
  })
  // The mock keeps every call for inspection; a real provider does not, so forget them.
  const calls = model.doGenerateCalls
  const tools = {
    add: aiTool({
      description: "Adds two numbers",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }) => {
        if (script.toolMs !== undefined) await sleep(script.toolMs)
        return a + b
      }
    })
  }
  return async () => {
    try {
      const result = await aiGenerateText({ model, tools, prompt: userPrompt, stopWhen: stepCountIs(script.steps) })
      return result.text
    } finally {
      calls.length = 0
    }
  }
}

// ---------------------------------------------------------------------------
// OpenAI Agents SDK: run() with a fake Model.
// ---------------------------------------------------------------------------

class FakeModel implements OaModel {
  constructor(readonly script: Script) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const input: ReadonlyArray<AgentInputItem> = typeof request.input === "string" ? [] : request.input
    let made = 0
    for (let i = input.length - 1; i >= 0; i--) {
      const item = input[i]!
      if (item.type === "function_call") made++
      else if ("role" in item && item.role === "user") break
    }
    const step = Math.floor(made / Math.max(1, this.script.calls)) + 1
    if (this.script.delayMs > 0) await sleep(this.script.delayMs)
    const usage = new OaUsage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 })
    if (step >= this.script.steps) {
      return {
        usage,
        output: [{
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: answer }]
        }]
      }
    }
    return {
      usage,
      output: Array.from({ length: this.script.calls }, (_, k) => ({
        type: "function_call" as const,
        callId: callId(step, k),
        name: "add",
        arguments: JSON.stringify(argsOf(step, k)),
        status: "completed" as const
      }))
    }
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the bench model does not stream")
  }
}

export const openAiAgents = (script: Script): RunOnce => {
  setTracingDisabled(true)
  const add = oaTool({
    name: "add",
    description: "Adds two numbers",
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }) => {
      if (script.toolMs !== undefined) await sleep(script.toolMs)
      return a + b
    }
  })
  const agent = new OaAgent({ name: "bench", instructions: "Add.", model: new FakeModel(script), tools: [add] })
  return async () => {
    const result = await oaRun(agent, userPrompt, { maxTurns: script.steps + 1 })
    return String(result.finalOutput)
  }
}

/** Every contender of the per-step comparison, the baseline first. */
export const contenders: ReadonlyArray<{ readonly name: string; readonly make: (script: Script) => RunOnce }> = [
  { name: "plain loop", make: plainLoop },
  { name: "@effect/ai loop", make: effectAiLoop },
  { name: "Agent.run", make: agentRun },
  { name: "Vercel AI SDK", make: vercelAi },
  { name: "OpenAI Agents SDK", make: openAiAgents },
  { name: "(floor) generateText only", make: generateTextOnly }
]
