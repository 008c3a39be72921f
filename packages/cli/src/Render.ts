/**
 * What the command line prints while a run goes: one line per model call and per tool
 * call with its status and duration (with a spinner while the model thinks, on a
 * terminal), then a summary; or, with `--json`, one JSON document at the end.
 */
import { type Agent, AgentError, HarnessEvent } from "@agent-harness/core"
import type { LanguageModel } from "@effect/ai"
import { Cause, Context, Effect, Exit, Fiber, Layer, Option, Schedule, Schema } from "effect"

/** Where the command line writes. */
export class Output extends Context.Tag("@agent-harness/cli/Output")<Output, {
  /** Whether lines may be rewritten in place (a terminal, not a pipe). */
  readonly interactive: boolean
  readonly write: (text: string) => Effect.Effect<void>
  readonly error: (text: string) => Effect.Effect<void>
}>() {
  /** The process's stdout and stderr. */
  static readonly layerProcess = Layer.sync(Output, () => ({
    interactive: process.stdout.isTTY === true && process.env["TERM"] !== "dumb",
    write: (text) => Effect.sync(() => void process.stdout.write(text)),
    error: (text) => Effect.sync(() => void process.stderr.write(text))
  }))

  /** Keeps everything written, for tests. */
  static readonly memory = (interactive = false) =>
    Effect.sync(() => {
      const written: Array<string> = []
      const service = Output.of({
        interactive,
        write: (text) => Effect.sync(() => void written.push(text)),
        error: (text) => Effect.sync(() => void written.push(`[stderr] ${text}`))
      })
      return { service, text: () => written.join("") }
    })
}

const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
const clearLine = "\r\x1b[2K"

const ms = (durationMs: number) => `${Math.round(durationMs)} ms`

const pad = (text: string, width: number) => text.padEnd(width)

/** The live line of an event, or nothing for events that are not shown. */
export const line = (event: HarnessEvent.HarnessEvent): string | undefined => {
  switch (event._tag) {
    case "ModelCallEnded":
      return `step ${event.step}  ${pad("model", 16)} ${pad(event.finishReason, 16)} ${pad(ms(event.durationMs), 9)} ${
        event.toolCalls === 0 ? "answer" : `${event.toolCalls} tool call${event.toolCalls === 1 ? "" : "s"}`
      }`
    case "ModelCallFailed":
      return `step ${event.step}  ${pad("model", 16)} ${pad(`failed: ${event.reason}`, 16)} ${ms(event.durationMs)}`
    case "ModelCallRetrying":
      return `step ${event.step}  ${pad("model", 16)} ${pad(event.reason, 16)} retry ${event.attempt} in ${ms(event.delayMs)}`
    case "ToolCallEnded": {
      const mark = event.status === "success" ? "✓" : "✗"
      const code = event.result.error === undefined ? "" : `  ${event.result.error.code}`
      return `  ${mark} ${pad(event.tool, 18)} ${pad(event.status, 16)} ${ms(event.durationMs)}${code}`
    }
    default:
      return undefined
  }
}

/** How a run ended, for the summary and the JSON output. */
export interface Outcome {
  /** `success`, the error's tag, `interrupted` or `defect`. */
  readonly outcome: string
  readonly snapshot: AgentError.RunSnapshot | undefined
  readonly answer: string | undefined
  readonly error: string | undefined
}

/** The summary's figures, also the core of the JSON output. */
export const outcome = (exit: Exit.Exit<Agent.Result, AgentError.AgentError | AgentError.InvalidOptions>): Outcome => {
  if (Exit.isSuccess(exit)) return { outcome: "success", snapshot: exit.value, answer: exit.value.answer, error: undefined }
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) return { outcome: Exit.isInterrupted(exit) ? "interrupted" : "defect", snapshot: undefined, answer: undefined, error: Cause.pretty(exit.cause) }
  const error = failure.value
  return {
    outcome: error._tag,
    snapshot: error._tag === "InvalidOptions" ? undefined : error.snapshot,
    answer: undefined,
    error: error.message
  }
}

const tokens = (usage: AgentError.RunSnapshot["usage"]) =>
  usage.inputTokens === undefined && usage.outputTokens === undefined
    ? "not reported by the model"
    : `${usage.inputTokens ?? "?"} in, ${usage.outputTokens ?? "?"} out${usage.cachedInputTokens === undefined ? "" : `, ${usage.cachedInputTokens} cached`}`

/** The closing summary: outcome, steps, tool calls, tokens, time, and the answer or error. */
export const summary = (exit: Exit.Exit<Agent.Result, AgentError.AgentError | AgentError.InvalidOptions>, durationMs: number): string => {
  const o = outcome(exit)
  const rows: Array<[string, string]> = [["outcome", o.outcome]]
  if (o.snapshot !== undefined) {
    rows.push(["steps", String(o.snapshot.steps)], ["tool calls", String(o.snapshot.toolCalls)], ["tokens", tokens(o.snapshot.usage)])
  }
  rows.push(["time", ms(durationMs)])
  if (o.answer !== undefined) rows.push(["answer", o.answer])
  if (o.error !== undefined) rows.push(["error", o.error])
  return rows.map(([k, v]) => `${pad(k, 11)}${v}`).join("\n") + "\n"
}

const encodeEvent = Schema.encodeSync(HarnessEvent.HarnessEvent)
const encodeSnapshot = Schema.encodeSync(AgentError.RunSnapshot)

/**
 * A run, ready to go once its environment is built: it only needs the events' observer
 * and a model.
 */
export type Runner = (
  onEvent: (event: HarnessEvent.HarnessEvent) => Effect.Effect<void>
) => Effect.Effect<Agent.Result, AgentError.AgentError | AgentError.InvalidOptions, LanguageModel.LanguageModel>

/** A renderer for one run: give its `onEvent` to the run, then call `finish` with the exit. */
export interface Renderer {
  readonly onEvent: (event: HarnessEvent.HarnessEvent) => Effect.Effect<void>
  readonly finish: (
    exit: Exit.Exit<Agent.Result, AgentError.AgentError | AgentError.InvalidOptions>,
    durationMs: number
  ) => Effect.Effect<void>
}

/** Live lines and a summary, or (`json`) a single JSON document with the outcome and every event. */
export const make = (options: { readonly json: boolean }): Effect.Effect<Renderer, never, Output> =>
  Effect.gen(function*() {
    const out = yield* Output
    const events: Array<HarnessEvent.HarnessEvent> = []
    let spinner: Fiber.RuntimeFiber<unknown> | undefined
    const stopSpinner = Effect.suspend(() => {
      const running = spinner
      spinner = undefined
      return running === undefined ? Effect.void : Effect.zipRight(Fiber.interrupt(running), out.write(clearLine))
    })
    const startSpinner = (label: string) =>
      Effect.flatMap(stopSpinner, () =>
        Effect.suspend(() => {
          let frame = 0
          return Effect.forkDaemon(
            Effect.repeat(
              Effect.suspend(() => out.write(`${clearLine}${frames[frame++ % frames.length]} ${label}`)),
              Schedule.spaced("80 millis")
            )
          )
        })).pipe(Effect.map((fiber) => void (spinner = fiber)))
    const onEvent = (event: HarnessEvent.HarnessEvent): Effect.Effect<void> => {
      if (options.json) return Effect.sync(() => void events.push(event))
      const text = line(event)
      return Effect.gen(function*() {
        if (event._tag === "ModelCallStarted" && out.interactive) {
          return yield* startSpinner(`step ${event.step}  waiting for the model`)
        }
        if (text === undefined) return
        if (out.interactive && event._tag !== "ToolCallEnded") yield* stopSpinner
        yield* out.write(`${text}\n`)
      })
    }
    const finish: Renderer["finish"] = (exit, durationMs) =>
      Effect.gen(function*() {
        yield* stopSpinner
        if (!options.json) return yield* out.write(`\n${summary(exit, durationMs)}`)
        const o = outcome(exit)
        const document = {
          outcome: o.outcome,
          ...(o.answer === undefined ? {} : { answer: o.answer }),
          ...(o.error === undefined ? {} : { error: o.error }),
          durationMs,
          ...(o.snapshot === undefined ? {} : {
            steps: o.snapshot.steps,
            toolCalls: o.snapshot.toolCalls,
            usage: o.snapshot.usage,
            transcript: encodeSnapshot(o.snapshot).transcript
          }),
          events: events.map((e) => encodeEvent(e))
        }
        yield* out.write(`${JSON.stringify(document, null, 2)}\n`)
      })
    return { onEvent, finish }
  })
