/**
 * Why the workspace refused or failed an operation. The `code` is stable and meant for
 * the model: the file tools pass it on unchanged as a `BusinessError` code.
 *
 * @example
 * ```ts
 * import { WorkspaceError } from "@agent-harness/tools"
 *
 * const error = new WorkspaceError.WorkspaceError({ code: "PATH_ESCAPES_ROOT", message: "'..' is refused" })
 * ```
 */
import { Schema } from "effect"

/** Every code a {@link WorkspaceError} may carry. */
export const ErrorCode = Schema.Literal(
  // The path string itself
  "EMPTY_PATH",
  "NUL_BYTE",
  "PATH_TOO_LONG",
  "ABSOLUTE_PATH",
  "PATH_ESCAPES_ROOT",
  "IS_WORKSPACE_ROOT",
  // What the path leads to
  "SYMLINK_IN_PATH",
  "NOT_A_DIRECTORY",
  "NOT_A_REGULAR_FILE",
  "HARD_LINKED_FILE",
  "NOT_FOUND",
  "PARENT_MISSING",
  "FILE_CHANGED_DURING_OPEN",
  // The content
  "FILE_TOO_LARGE",
  "BINARY_FILE",
  "NO_MATCH",
  "AMBIGUOUS_MATCH",
  "INVALID_EDIT",
  // The machine
  "PERMISSION_DENIED",
  "ROOT_INVALID",
  "IO_ERROR"
)

/** @see {@link ErrorCode} */
export type ErrorCode = typeof ErrorCode.Type

/**
 * A refused or failed workspace operation. `message` names paths relative to the root
 * only, so it can be shown to the model without revealing where the workspace lives.
 */
export class WorkspaceError extends Schema.TaggedError<WorkspaceError>("@agent-harness/tools/WorkspaceError")(
  "WorkspaceError",
  { code: ErrorCode, message: Schema.String }
) {}
