/**
 * What happens in a run, as a sequence of events: run started, model call started,
 * retrying, ended or failed, tool call started and ended, run ended.
 *
 * Every event has the run id, a sequence number that grows by one from 0, and a
 * timestamp (epoch ms); durations are measured on Effect's `Clock` (monotonic), so
 * `TestClock` drives them in tests. Events carry no prompt, arguments or results unless
 * the run opts in with `telemetry.recordPayloads`.
 *
 * @example
 * ```ts
 * import { Agent, HarnessEvent } from "@agent-harness/core"
 * import { Console, Effect } from "effect"
 *
 * Agent.run({ prompt, toolkit, onEvent: (event) => Console.log(HarnessEvent.summary(event)) })
 * ```
 */
import { Schema } from "effect"
import * as ToolResult from "./ToolResult.js"
import * as Usage from "./Usage.js"

const base = {
  runId: Schema.String,
  seq: Schema.Int,
  timestamp: Schema.Number
}

/** Token figures one model call reported (absent ones were not reported). */
export const CallUsage = Schema.Struct({
  inputTokens: Schema.optional(Schema.Number),
  outputTokens: Schema.optional(Schema.Number),
  totalTokens: Schema.optional(Schema.Number),
  reasoningTokens: Schema.optional(Schema.Number),
  cachedInputTokens: Schema.optional(Schema.Number)
})

export class RunStarted extends Schema.TaggedClass<RunStarted>()("RunStarted", {
  ...base,
  agentName: Schema.String,
  /** The prompt, only with `recordPayloads`. */
  prompt: Schema.optional(Schema.String)
}) {}

export class ModelCallStarted extends Schema.TaggedClass<ModelCallStarted>()("ModelCallStarted", {
  ...base,
  step: Schema.Int,
  /** Messages sent in this request. */
  messages: Schema.Int
}) {}

export class ModelCallEnded extends Schema.TaggedClass<ModelCallEnded>()("ModelCallEnded", {
  ...base,
  step: Schema.Int,
  finishReason: Schema.String,
  usage: CallUsage,
  toolCalls: Schema.Int,
  durationMs: Schema.Number
}) {}

export class ModelCallFailed extends Schema.TaggedClass<ModelCallFailed>()("ModelCallFailed", {
  ...base,
  step: Schema.Int,
  reason: Schema.String,
  durationMs: Schema.Number
}) {}

/** A model call failed for a reason that may pass; the harness waits `delayMs`, then tries again. */
export class ModelCallRetrying extends Schema.TaggedClass<ModelCallRetrying>()("ModelCallRetrying", {
  ...base,
  step: Schema.Int,
  /** The attempt that failed, from 1. */
  attempt: Schema.Int,
  reason: Schema.String,
  description: Schema.String,
  delayMs: Schema.Number,
  /** What the provider's `retry-after` asked for, when it sent one. */
  retryAfterMs: Schema.optional(Schema.Number)
}) {}

export class ToolCallStarted extends Schema.TaggedClass<ToolCallStarted>()("ToolCallStarted", {
  ...base,
  step: Schema.Int,
  callId: Schema.String,
  tool: Schema.String,
  /** The call's arguments, only with `recordPayloads`. */
  arguments: Schema.optional(Schema.Unknown)
}) {}

export class ToolCallEnded extends Schema.TaggedClass<ToolCallEnded>()("ToolCallEnded", {
  ...base,
  step: Schema.Int,
  callId: Schema.String,
  tool: Schema.String,
  status: ToolResult.Status,
  /** The result envelope; its `data` only with `recordPayloads`. */
  result: ToolResult.ToolResult,
  durationMs: Schema.Number
}) {}

export class RunEnded extends Schema.TaggedClass<RunEnded>()("RunEnded", {
  ...base,
  /** `success`, the tag of the `AgentError` that ended it, or `interrupted`. */
  outcome: Schema.String,
  steps: Schema.Int,
  toolCalls: Schema.Int,
  usage: Usage.Usage,
  durationMs: Schema.Number
}) {}

/** Every harness event. */
export const HarnessEvent = Schema.Union(
  RunStarted,
  ModelCallStarted,
  ModelCallEnded,
  ModelCallFailed,
  ModelCallRetrying,
  ToolCallStarted,
  ToolCallEnded,
  RunEnded
)

/** @see {@link HarnessEvent} */
export type HarnessEvent = typeof HarnessEvent.Type

/** One line describing an event, for logs and terminals. */
export const summary = (event: HarnessEvent): string => {
  switch (event._tag) {
    case "RunStarted":
      return `#${event.seq} run ${event.runId} started (${event.agentName})`
    case "ModelCallStarted":
      return `#${event.seq} step ${event.step}: model called with ${event.messages} messages`
    case "ModelCallEnded":
      return `#${event.seq} step ${event.step}: model answered (${event.finishReason}, ${event.toolCalls} tool calls) in ${event.durationMs} ms`
    case "ModelCallFailed":
      return `#${event.seq} step ${event.step}: model call failed (${event.reason}) after ${event.durationMs} ms`
    case "ModelCallRetrying":
      return `#${event.seq} step ${event.step}: attempt ${event.attempt} failed (${event.reason}), retrying in ${event.delayMs} ms`
    case "ToolCallStarted":
      return `#${event.seq} step ${event.step}: ${event.tool} [${event.callId}] started`
    case "ToolCallEnded":
      return `#${event.seq} step ${event.step}: ${event.tool} [${event.callId}] ${event.status} in ${event.durationMs} ms`
    case "RunEnded":
      return `#${event.seq} run ${event.runId} ended: ${event.outcome} after ${event.steps} steps, ${event.toolCalls} tool calls, ${event.durationMs} ms`
  }
}
