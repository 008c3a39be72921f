/**
 * A directory the agent may work in, and nothing outside it. Every path is relative to
 * the root (resolved once with `realpath` when the workspace opens) and is checked
 * before and after it is opened; see the package README for what this does and does
 * not protect against. It is not an OS sandbox.
 *
 * @example
 * ```ts
 * import { Workspace } from "@agent-harness/tools"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const workspace = yield* Workspace.Workspace
 *   const file = yield* workspace.readFile("src/index.ts")
 *   return file.content
 * }).pipe(Effect.provide(Workspace.Workspace.layer("/srv/checkout")))
 * ```
 */
import { Context, Effect, Either, Layer, Schema } from "effect"
import * as Files from "./internal/files.js"
import * as Paths from "./internal/paths.js"
import * as Walk from "./internal/walk.js"
import { WorkspaceError } from "./WorkspaceError.js"

/** The error every workspace operation fails with; also exported as the `WorkspaceError` module. */
export { WorkspaceError } from "./WorkspaceError.js"

/** Limits of a workspace; every field has a default. */
export interface Options {
  /** Bytes a read returns before it truncates (default 256 KiB); also the largest file `editFile` takes. */
  readonly maxReadBytes?: number | undefined
  /** Largest content `writeFile` and `editFile` write (default 4 MiB). */
  readonly maxWriteBytes?: number | undefined
  /** Longest path accepted, in UTF-8 bytes (default 1024). */
  readonly maxPathBytes?: number | undefined
  /** Longest path component accepted, in UTF-8 bytes (default 255, the Linux limit). */
  readonly maxComponentBytes?: number | undefined
  /** Entries `listDir` returns before it truncates (default 1000). */
  readonly maxListEntries?: number | undefined
  /**
   * Accept regular files with more than one hard link (default false). A hard link is a
   * regular file inside the root that may share its content with a file outside, and no
   * path check can tell, so by default such files are refused (`HARD_LINKED_FILE`). Set
   * this for trees that use hard links legitimately (pnpm stores, `cp -al` copies) when no
   * one who could plant a link to a secret has write access to the root.
   */
  readonly allowHardLinks?: boolean | undefined
}

/** The defaults of {@link Options}. */
export const defaults = {
  maxReadBytes: 256 * 1024,
  maxWriteBytes: 4 * 1024 * 1024,
  maxPathBytes: 1024,
  maxComponentBytes: 255,
  maxListEntries: 1000
} as const

/** A read: the text, and whether it is all of the file. */
export const ReadResult = Schema.Struct({
  path: Schema.String,
  content: Schema.String,
  /** The file's size in bytes when it was opened. */
  size: Schema.Number,
  /** Bytes of the file that `content` holds. */
  bytesRead: Schema.Number,
  /** True when the file is larger than the read limit and `content` is its beginning only. */
  truncated: Schema.Boolean
})

/** @see {@link ReadResult} */
export type ReadResult = typeof ReadResult.Type

/** A write: how much, and whether the file is new. */
export const WriteResult = Schema.Struct({ path: Schema.String, bytesWritten: Schema.Number, created: Schema.Boolean })

/** @see {@link WriteResult} */
export type WriteResult = typeof WriteResult.Type

/** One entry of a listing. Links are listed as `symlink` and never followed. */
export const DirEntry = Schema.Struct({
  name: Schema.String,
  type: Schema.Literal("file", "directory", "symlink", "fifo", "socket", "device", "other")
})

/** @see {@link DirEntry} */
export type DirEntry = typeof DirEntry.Type

/** A listing, sorted by name; `truncated` when the directory has more entries than the limit. */
export const ListResult = Schema.Struct({ path: Schema.String, entries: Schema.Array(DirEntry), truncated: Schema.Boolean })

/** @see {@link ListResult} */
export type ListResult = typeof ListResult.Type

/** An edit: the single replacement made and the size written. */
export const EditResult = Schema.Struct({ path: Schema.String, bytesWritten: Schema.Number })

/** @see {@link EditResult} */
export type EditResult = typeof EditResult.Type

/** What a workspace offers. Every path is relative to `root`; `"."` names the root for `listDir`. */
export interface Service {
  /** The root's real path. */
  readonly root: string
  /** Reads a UTF-8 text file, truncated past `maxReadBytes` (the result says so). */
  readonly readFile: (path: string) => Effect.Effect<ReadResult, WorkspaceError>
  /** Creates or replaces a file atomically; its directory must exist already. */
  readonly writeFile: (path: string, content: string) => Effect.Effect<WriteResult, WorkspaceError>
  /** Lists a directory without following links. */
  readonly listDir: (path: string) => Effect.Effect<ListResult, WorkspaceError>
  /**
   * Replaces `oldString`, which must occur exactly once, with `newString`. Fails with
   * `FILE_CHANGED_DURING_OPEN` if the file changes between the read and the write.
   */
  readonly editFile: (path: string, oldString: string, newString: string) => Effect.Effect<EditResult, WorkspaceError>
  /**
   * The absolute path of a directory inside the workspace, checked like any other path
   * (no links, every component a directory). For running commands in it.
   */
  readonly resolveDirectory: (path: string) => Effect.Effect<string, WorkspaceError>
}

const positive = (value: number | undefined, fallback: number) =>
  value !== undefined && Number.isSafeInteger(value) && value > 0 ? value : fallback

const occurrences = (content: string, needle: string): number => {
  let count = 0
  // Overlapping matches count: "aa" occurs twice in "aaa", so that edit is ambiguous.
  for (let at = content.indexOf(needle); at !== -1 && count < 2; at = content.indexOf(needle, at + 1)) count++
  return count
}

const makeService = (ctx: Files.Context, limits: Paths.Limits): Service => {
  const parse = (path: string) =>
    Either.mapLeft(Paths.parse(path, limits), (refusal) => new WorkspaceError(refusal))
  const editFile: Service["editFile"] = (path, oldString, newString) =>
    Effect.gen(function*() {
      const components = yield* parse(path)
      const shown = Paths.display(components)
      if (oldString.length === 0) return yield* Walk.fail("INVALID_EDIT", "oldString must not be empty")
      const before = yield* Files.read(ctx, components, true)
      const count = occurrences(before.content, oldString)
      if (count === 0) return yield* Walk.fail("NO_MATCH", `oldString does not occur in '${shown}'`)
      if (count > 1) {
        return yield* Walk.fail("AMBIGUOUS_MATCH", `oldString occurs more than once in '${shown}'; include more context`)
      }
      const at = before.content.indexOf(oldString)
      const after = before.content.slice(0, at) + newString + before.content.slice(at + oldString.length)
      const written = yield* Files.write(ctx, components, after, before.stats)
      return { path: shown, bytesWritten: written.bytesWritten }
    })
  return {
    root: ctx.root,
    readFile: (path) =>
      Effect.flatMap(parse(path), (components) =>
        Effect.map(Files.read(ctx, components, false), (read) => ({
          path: Paths.display(components),
          content: read.content,
          size: read.size,
          bytesRead: read.bytesRead,
          truncated: read.truncated
        }))),
    writeFile: (path, content) =>
      Effect.flatMap(parse(path), (components) =>
        Effect.map(Files.write(ctx, components, content), (written) => ({ path: Paths.display(components), ...written }))),
    listDir: (path) =>
      Effect.flatMap(parse(path), (components) =>
        Effect.map(Files.list(ctx, components), (listing) => ({ path: Paths.display(components), ...listing }))),
    editFile,
    resolveDirectory: (path) => Effect.flatMap(parse(path), (components) => Walk.directory(ctx, components))
  }
}

/**
 * The workspace service.
 *
 * @example
 * ```ts
 * const WorkspaceLive = Workspace.layer(process.cwd(), { maxReadBytes: 64 * 1024 })
 * ```
 */
export class Workspace extends Context.Tag("@agent-harness/tools/Workspace")<Workspace, Service>() {
  /** Opens a workspace on `root`; fails with `ROOT_INVALID` if it is not an existing directory. */
  static readonly make = (root: string, options: Options = {}): Effect.Effect<Service, WorkspaceError> =>
    Effect.gen(function*() {
      const real = yield* Walk.resolveRoot(root)
      const procFd = yield* Walk.hasProcFd
      return makeService(
        {
          root: real,
          procFd,
          maxReadBytes: positive(options.maxReadBytes, defaults.maxReadBytes),
          maxWriteBytes: positive(options.maxWriteBytes, defaults.maxWriteBytes),
          maxListEntries: positive(options.maxListEntries, defaults.maxListEntries),
          allowHardLinks: options.allowHardLinks ?? false
        },
        {
          maxPathBytes: positive(options.maxPathBytes, defaults.maxPathBytes),
          maxComponentBytes: positive(options.maxComponentBytes, defaults.maxComponentBytes)
        }
      )
    })

  /** {@link Workspace.make} as a layer. */
  static readonly layer = (root: string, options: Options = {}): Layer.Layer<Workspace, WorkspaceError> =>
    Layer.effect(Workspace, Workspace.make(root, options))
}

/** Checks a relative path's syntax without touching the disk: its components, or the refusal. */
export const parsePath = (path: string, options: Pick<Options, "maxPathBytes" | "maxComponentBytes"> = {}): Either.Either<ReadonlyArray<string>, WorkspaceError> =>
  Either.mapLeft(
    Paths.parse(path, {
      maxPathBytes: positive(options.maxPathBytes, defaults.maxPathBytes),
      maxComponentBytes: positive(options.maxComponentBytes, defaults.maxComponentBytes)
    }),
    (refusal) => new WorkspaceError(refusal)
  )
