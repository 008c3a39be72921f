/**
 * The errors that end a run. Each carries a {@link RunSnapshot} of what happened up to
 * that point, so a caller that catches one still has the transcript and the counts.
 *
 * @example
 * ```ts
 * import { Agent } from "@agent-harness/core"
 * import { Effect } from "effect"
 *
 * const program = Agent.run({ prompt: "Book it", toolkit }).pipe(
 *   Effect.catchTag("BudgetExceeded", (e) => Effect.succeed(`stopped: ${e.budget} after ${e.snapshot.steps} steps`))
 * )
 * ```
 */
import { Schema } from "effect"
import * as Budget from "./Budget.js"
import * as Transcript from "./Transcript.js"
import * as Usage from "./Usage.js"

/** What a run has done so far. */
export const RunSnapshot = Schema.Struct({
  runId: Schema.String,
  /** The whole conversation, always satisfying the transcript invariant. */
  transcript: Transcript.Transcript,
  /** Model calls made. */
  steps: Schema.Number,
  /** Tool calls admitted for execution (refused batches are not counted). */
  toolCalls: Schema.Number,
  usage: Usage.Usage
}).annotations({ identifier: "RunSnapshot" })

/** @see {@link RunSnapshot} */
export type RunSnapshot = typeof RunSnapshot.Type

/** Why the model call failed, for callers that branch on it. */
export const ModelErrorReason = Schema.Literal(
  "rate_limited",
  "unavailable",
  "bad_request",
  "authentication",
  "malformed_output",
  "transport",
  "unknown"
)

/** @see {@link ModelErrorReason} */
export type ModelErrorReason = typeof ModelErrorReason.Type

/** The model call failed, or its response was malformed (checked before any tool ran). */
export class ModelError extends Schema.TaggedError<ModelError>("@agent-harness/core/ModelError")("ModelError", {
  reason: ModelErrorReason,
  description: Schema.String,
  snapshot: RunSnapshot,
  cause: Schema.optional(Schema.Defect)
}) {
  override get message() {
    return `model call failed (${this.reason}): ${this.description}`
  }
}

/** A budget ran out; `budget` names which, `limit` and `requested` say by how much. */
export class BudgetExceeded extends Schema.TaggedError<BudgetExceeded>("@agent-harness/core/BudgetExceeded")(
  "BudgetExceeded",
  {
    budget: Budget.Kind,
    limit: Schema.Number,
    requested: Schema.Number,
    snapshot: RunSnapshot
  }
) {
  override get message() {
    return `budget '${this.budget}' exceeded: ${this.requested} requested, limit ${this.limit}`
  }
}

/** The run's deadline expired; whatever was running was interrupted. */
export class DeadlineExceeded extends Schema.TaggedError<DeadlineExceeded>("@agent-harness/core/DeadlineExceeded")(
  "DeadlineExceeded",
  { timeoutMillis: Schema.Number, snapshot: RunSnapshot }
) {
  override get message() {
    return `run deadline of ${this.timeoutMillis} ms exceeded`
  }
}

/**
 * The pinned part of the view (system text and first request) and the newest group do
 * not fit the context limit together, so no valid request can be made.
 */
export class ContextLimit extends Schema.TaggedError<ContextLimit>("@agent-harness/core/ContextLimit")(
  "ContextLimit",
  {
    unit: Schema.Literal("chars", "tokens"),
    limit: Schema.Number,
    required: Schema.Number,
    snapshot: RunSnapshot
  }
) {
  override get message() {
    return `context limit: the smallest valid view needs ${this.required} ${this.unit}, the limit is ${this.limit}`
  }
}

/**
 * A call of the batch needs a permission the principal lacks (policy `stop`): no call of
 * the batch ran and the batch is not in the transcript.
 */
export class PermissionDenied extends Schema.TaggedError<PermissionDenied>("@agent-harness/core/PermissionDenied")(
  "PermissionDenied",
  {
    callId: Schema.String,
    tool: Schema.String,
    permission: Schema.String,
    /** The principal's user id, absent when the run had no principal. */
    userId: Schema.optional(Schema.String),
    snapshot: RunSnapshot
  }
) {
  override get message() {
    return `permission denied: tool '${this.tool}' (call ${this.callId}) requires '${this.permission}'` +
      (this.userId === undefined ? " and the run has no principal" : `, which ${this.userId} lacks`)
  }
}

/** Every error that ends a run. */
export type AgentError = ModelError | ContextLimit | BudgetExceeded | DeadlineExceeded | PermissionDenied

/** Options were refused before the model was called; `issues` lists every problem. */
export class InvalidOptions extends Schema.TaggedError<InvalidOptions>("@agent-harness/core/InvalidOptions")(
  "InvalidOptions",
  { issues: Schema.Array(Schema.String) }
) {
  override get message() {
    return `invalid agent options: ${this.issues.join("; ")}`
  }
}
