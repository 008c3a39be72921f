/**
 * The file tools a coding agent calls: `read_file`, `write_file`, `list_dir` and
 * `edit_file`, on the {@link Workspace.Workspace} in the environment. Every refusal
 * reaches the model as a `business_error` whose code is the `WorkspaceError` code
 * (`SYMLINK_IN_PATH`, `PATH_ESCAPES_ROOT`, ...), so it can correct the path.
 *
 * `write_file` and `edit_file` change the workspace but are deliberately not annotated
 * `Idempotency.Mutating`: writing the same content twice leaves the same file, and a
 * replayed edit fails with `NO_MATCH` instead of editing twice, so a retry is harmless
 * and no idempotency store is needed.
 *
 * @example
 * ```ts
 * import { Agent } from "@agent-harness/core"
 * import { FileTools, Workspace } from "@agent-harness/tools"
 * import { Effect, Layer } from "effect"
 *
 * const program = Agent.run({ prompt: "Fix the typo in README.md", toolkit: FileTools.toolkit }).pipe(
 *   Effect.provide(FileTools.layer.pipe(Layer.provide(Workspace.Workspace.layer("/srv/checkout"))))
 * )
 * ```
 */
import { ToolError } from "@agent-harness/core"
import { Tool, Toolkit } from "@effect/ai"
import { Effect, Schema } from "effect"
import * as Workspace from "./Workspace.js"
import type { WorkspaceError } from "./WorkspaceError.js"

const Path = Schema.String.annotations({ description: "path relative to the workspace root, using '/'" })

/** `read_file`: a text file's content, truncated past the workspace's read limit. */
export const ReadFile = Tool.make("read_file", {
  description: "Reads a UTF-8 text file in the workspace. Large files are truncated (the result says so); binary files are refused.",
  parameters: { path: Path },
  success: Workspace.ReadResult,
  failure: ToolError.BusinessError
})

/** `write_file`: creates or replaces a whole file; its directory must exist. */
export const WriteFile = Tool.make("write_file", {
  description: "Creates or replaces a text file in the workspace with the given content. The directory must already exist.",
  parameters: { path: Path, content: Schema.String },
  success: Workspace.WriteResult,
  failure: ToolError.BusinessError
})

/** `list_dir`: a directory's entries; `"."` is the workspace root. */
export const ListDir = Tool.make("list_dir", {
  description: "Lists a directory of the workspace ('.' is the root). Symbolic links are shown but never followed.",
  parameters: { path: Path },
  success: Workspace.ListResult,
  failure: ToolError.BusinessError
})

/** `edit_file`: replaces one exact, unique occurrence of a string. */
export const EditFile = Tool.make("edit_file", {
  description:
    "Replaces oldString with newString in a text file. oldString must occur exactly once; include surrounding lines to make it unique.",
  parameters: { path: Path, oldString: Schema.String, newString: Schema.String },
  success: Workspace.EditResult,
  failure: ToolError.BusinessError
})

/** The four file tools. */
export const toolkit = Toolkit.make(ReadFile, WriteFile, ListDir, EditFile)

/** The model reads the workspace's own code and message. */
const toBusiness = (error: WorkspaceError) => new ToolError.BusinessError({ code: error.code, message: error.message })

/** The handlers of {@link toolkit}, on the `Workspace` in the environment. */
export const layer = toolkit.toLayer(
  Effect.gen(function*() {
    const workspace = yield* Workspace.Workspace
    return {
      read_file: ({ path }) => Effect.mapError(workspace.readFile(path), toBusiness),
      write_file: ({ content, path }) => Effect.mapError(workspace.writeFile(path, content), toBusiness),
      list_dir: ({ path }) => Effect.mapError(workspace.listDir(path), toBusiness),
      edit_file: ({ newString, oldString, path }) => Effect.mapError(workspace.editFile(path, oldString, newString), toBusiness)
    }
  })
)
