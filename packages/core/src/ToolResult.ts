/**
 * The one shape of every tool result the model reads.
 *
 * `status` says what happened; `data` carries a success's value; `error` carries a
 * stable `code`, a plain `message` and, for validation problems, field-level
 * `details`; `metadata` names the tool and call and how long the call took. The same
 * envelope (without `data`) is what events and traces report.
 *
 * @example
 * ```json
 * { "status": "validation_error",
 *   "error": { "code": "INVALID_ARGUMENTS", "message": "arguments do not match the tool's parameters",
 *              "details": [{ "path": "$.items[0].qty", "message": "Expected number, actual \"two\"" }] },
 *   "metadata": { "tool": "order", "callId": "call_1", "latencyMs": 0 } }
 * ```
 */
import { Schema } from "effect"

/** What happened to a call. */
export const Status = Schema.Literal(
  "success",
  "validation_error",
  "permission_denied",
  "business_error",
  "fatal_error",
  "timeout",
  "cancelled"
)

/** @see {@link Status} */
export type Status = typeof Status.Type

/** A problem with one field of the arguments. */
export const Detail = Schema.Struct({ path: Schema.String, message: Schema.String })

/** @see {@link Detail} */
export type Detail = typeof Detail.Type

/** Why a call did not succeed. */
export const ErrorInfo = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  details: Schema.optional(Schema.Array(Detail))
})

/** @see {@link ErrorInfo} */
export type ErrorInfo = typeof ErrorInfo.Type

/** Which call this is the result of. */
export const Metadata = Schema.Struct({
  tool: Schema.String,
  callId: Schema.String,
  latencyMs: Schema.NonNegative,
  idempotencyKey: Schema.optional(Schema.String),
  /** True when the result was recorded by an earlier attempt with the same key. */
  replayed: Schema.optional(Schema.Boolean)
})

/** @see {@link Metadata} */
export type Metadata = typeof Metadata.Type

/** The envelope. */
export const ToolResult = Schema.Struct({
  status: Status,
  data: Schema.optional(Schema.Unknown),
  error: Schema.optional(ErrorInfo),
  /** Present when the payload (data, or the error message) was cut to the run's limit. */
  truncated: Schema.optional(Schema.Struct({ originalChars: Schema.Number })),
  metadata: Metadata
}).annotations({ identifier: "ToolResult" })

/** @see {@link ToolResult} */
export type ToolResult = typeof ToolResult.Type

/** A successful result. */
export const success = (data: unknown, metadata: Metadata): ToolResult => ({ status: "success", data, metadata })

/** A result that is not a success. */
export const failure = (status: Exclude<Status, "success">, error: ErrorInfo, metadata: Metadata): ToolResult => ({
  status,
  error,
  metadata
})
