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

/**
 * The error a handler fails with to say a business rule refused the request: the model
 * reads `code` (stable, for example `UNSUPPORTED_JURISDICTION`) and `message`. Any other
 * typed failure is reported as a `fatal_error` without its message.
 *
 * @example
 * ```ts
 * import { ToolError } from "@agent-harness/core"
 *
 * const refuse = new ToolError.BusinessError({ code: "UNSUPPORTED_JURISDICTION", message: "no tax rules for DE" })
 * ```
 */
export class BusinessError extends Schema.TaggedError<BusinessError>("@agent-harness/core/BusinessError")(
  "BusinessError",
  {
    code: Schema.String.pipe(Schema.pattern(/^[A-Z][A-Z0-9_]{0,63}$/)),
    message: Schema.String,
    details: Schema.optional(Schema.Array(ToolResult.Detail))
  }
) {}

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

/** The principal may not run the tool (policy `feedback`). */
export class PermissionDenied extends Schema.TaggedError<PermissionDenied>("@agent-harness/core/ToolPermissionDenied")(
  "PermissionDenied",
  { callId: Schema.String, name: Schema.String, permission: Schema.String }
) {
  override get message() {
    return `not permitted: tool '${this.name}' requires '${this.permission}'`
  }
}

/** The call ran longer than its tool's timeout and was stopped. */
export class ToolTimeout extends Schema.TaggedError<ToolTimeout>("@agent-harness/core/ToolTimeout")("ToolTimeout", {
  callId: Schema.String,
  name: Schema.String,
  timeoutMillis: Schema.Number
}) {
  override get message() {
    return `the call did not finish within ${this.timeoutMillis} ms and was stopped`
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

/** The idempotency store could not give a result for a mutating call; it did not run. */
export class IdempotencyFailure extends Schema.TaggedError<IdempotencyFailure>("@agent-harness/core/IdempotencyFailure")(
  "IdempotencyFailure",
  {
    callId: Schema.String,
    name: Schema.String,
    code: Schema.Literal("STORE_UNAVAILABLE", "STORED_RESULT_CORRUPT", "OUTCOME_UNKNOWN"),
    description: Schema.String
  }
) {
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
export type ToolError =
  | UnknownTool
  | InvalidArguments
  | PermissionDenied
  | BusinessError
  | ToolFailure
  | ToolTimeout
  | IdempotencyFailure
  | ToolDefect
  | ToolCancelled

/** The envelope status each problem is reported with. */
export const status = (error: ToolError): Exclude<ToolResult.Status, "success"> => {
  switch (error._tag) {
    case "UnknownTool":
    case "InvalidArguments":
      return "validation_error"
    case "PermissionDenied":
      return "permission_denied"
    case "BusinessError":
      return "business_error"
    case "ToolTimeout":
      return "timeout"
    case "ToolFailure":
    case "IdempotencyFailure":
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
    case "PermissionDenied":
      return { code: "PERMISSION_DENIED", message: error.message }
    case "BusinessError":
      return error.details === undefined
        ? { code: error.code, message: error.message }
        : { code: error.code, message: error.message, details: error.details }
    case "ToolTimeout":
      return { code: "TIMEOUT", message: error.message }
    case "ToolFailure":
    case "IdempotencyFailure":
      return { code: error.code, message: error.message }
    case "ToolDefect":
      return { code: "INTERNAL_ERROR", message: error.message }
    case "ToolCancelled":
      return { code: "CANCELLED", message: error.message }
  }
}
