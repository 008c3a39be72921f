/**
 * Recoverable tool problems. None of them ends a run: each becomes the result of the
 * call it belongs to (see {@link ToolResult}), and the model reacts on its next turn.
 *
 * @example
 * ```ts
 * import { ToolError } from "@agent-harness/core"
 *
 * const error = new ToolError.UnknownTool({ callId: "call_1", name: "delete_everything", available: ["add"] })
 * ToolError.toErrorInfo(error).code // "UNKNOWN_TOOL"
 * ```
 */
import { Schema } from "effect"
import * as ToolResult from "./ToolResult.js"

/** The model named a tool the run does not offer. */
export class UnknownTool extends Schema.TaggedError<UnknownTool>("@agent-harness/core/UnknownTool")("UnknownTool", {
  callId: Schema.String,
  name: Schema.String,
  available: Schema.Array(Schema.String)
}) {
  override get message() {
    return `unknown tool '${this.name}'; available tools: ${this.available.join(", ") || "(none)"}`
  }
}

/** The arguments are not JSON, or do not match the tool's parameter schema. */
export class InvalidArguments extends Schema.TaggedError<InvalidArguments>("@agent-harness/core/InvalidArguments")(
  "InvalidArguments",
  {
    callId: Schema.String,
    name: Schema.String,
    reason: Schema.Literal("not_json", "schema"),
    details: Schema.Array(ToolResult.Detail)
  }
) {
  override get message() {
    const head = this.reason === "not_json"
      ? "arguments are not valid JSON"
      : "arguments do not match the tool's parameters"
    return `${head}: ${this.details.map((d) => `${d.path}: ${d.message}`).join("; ")}`
  }
}

/** The handler failed with a typed error. */
export class ToolFailure extends Schema.TaggedError<ToolFailure>("@agent-harness/core/ToolFailure")("ToolFailure", {
  callId: Schema.String,
  name: Schema.String,
  code: Schema.String,
  description: Schema.String
}) {
  override get message() {
    return this.description
  }
}

/** The handler died (threw, rejected, or called `Effect.die`). The cause is logged, not shown. */
export class ToolDefect extends Schema.TaggedError<ToolDefect>("@agent-harness/core/ToolDefect")("ToolDefect", {
  callId: Schema.String,
  name: Schema.String
}) {
  override get message() {
    return `tool '${this.name}' failed unexpectedly`
  }
}

/** The call did not finish: the run was interrupted or hit its deadline while it ran. */
export class ToolCancelled extends Schema.TaggedError<ToolCancelled>("@agent-harness/core/ToolCancelled")(
  "ToolCancelled",
  { callId: Schema.String, name: Schema.String }
) {
  override get message() {
    return "the call was cancelled before it finished"
  }
}

/** Every recoverable tool problem. */
export type ToolError = UnknownTool | InvalidArguments | ToolFailure | ToolDefect | ToolCancelled

/** The envelope status each problem is reported with. */
export const status = (error: ToolError): Exclude<ToolResult.Status, "success"> => {
  switch (error._tag) {
    case "UnknownTool":
    case "InvalidArguments":
      return "validation_error"
    case "ToolFailure":
    case "ToolDefect":
      return "fatal_error"
    case "ToolCancelled":
      return "cancelled"
  }
}

/** The `error` part of the envelope: a stable code, a plain message, field details. */
export const toErrorInfo = (error: ToolError): ToolResult.ErrorInfo => {
  switch (error._tag) {
    case "UnknownTool":
      return { code: "UNKNOWN_TOOL", message: error.message }
    case "InvalidArguments":
      return {
        code: error.reason === "not_json" ? "INVALID_JSON" : "INVALID_ARGUMENTS",
        message: error.message,
        details: error.details
      }
    case "ToolFailure":
      return { code: error.code, message: error.message }
    case "ToolDefect":
      return { code: "INTERNAL_ERROR", message: error.message }
    case "ToolCancelled":
      return { code: "CANCELLED", message: error.message }
  }
}
