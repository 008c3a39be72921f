/**
 * The walk every workspace operation starts with. A path is followed from the root one
 * component at a time: `lstat` (no links, directories where directories belong), then an
 * `O_NOFOLLOW` open through the parent's descriptor, then a check that what was opened is
 * what was checked: the same device and inode, and (where `/proc/self/fd` exists) a
 * descriptor that resolves to the expected path inside the root. A swap between the
 * check and the open fails the operation.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect, type Scope } from "effect"
import { type ErrorCode, WorkspaceError } from "../WorkspaceError.js"
import { display } from "./paths.js"

/** What every operation needs to know about its workspace. */
export interface Context {
  readonly root: string
  /** Whether `/proc/self/fd/N` can be read back to check where a descriptor points. */
  readonly procFd: boolean
  readonly maxReadBytes: number
  readonly maxWriteBytes: number
  readonly maxListEntries: number
  /** Accept regular files with more than one link (see `Workspace.Options.allowHardLinks`). */
  readonly allowHardLinks: boolean
  /**
   * Runs between the checks and the open. Only tests set it: it lets them swap a file
   * in that window deterministically instead of racing for it.
   */
  readonly beforeOpen?: ((absolute: string) => Effect.Effect<void>) | undefined
}

export type Stats = fs.BigIntStats

const { O_DIRECTORY, O_NOFOLLOW, O_RDONLY } = fs.constants

export const fail = (code: ErrorCode, message: string) => Effect.fail(new WorkspaceError({ code, message }))

const errnoCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

const fromErrno = (shown: string) => (error: unknown): WorkspaceError => {
  const errno = errnoCode(error)
  const [code, what]: readonly [ErrorCode, string] = errno === "ENOENT"
    ? ["NOT_FOUND", "does not exist"]
    : errno === "ELOOP"
    ? ["SYMLINK_IN_PATH", "is a symbolic link; links are not followed"]
    : errno === "ENOTDIR"
    ? ["NOT_A_DIRECTORY", "has a component that is not a directory"]
    : errno === "EISDIR"
    ? ["NOT_A_REGULAR_FILE", "is a directory"]
    : errno === "EACCES" || errno === "EPERM"
    ? ["PERMISSION_DENIED", "is not accessible"]
    : errno === "ENAMETOOLONG"
    ? ["PATH_TOO_LONG", "is too long for the filesystem"]
    : ["IO_ERROR", `could not be accessed (${errno ?? "unknown error"})`]
  return new WorkspaceError({ code, message: `'${shown}' ${what}` })
}

export const attempt = <A>(shown: string, f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: fromErrno(shown) })

/** `lstat`, with a missing entry as `undefined` rather than a failure. */
export const lstat = (absolute: string, shown: string): Effect.Effect<Stats | undefined, WorkspaceError> =>
  attempt(shown, () => fs.promises.lstat(absolute, { bigint: true })).pipe(
    Effect.catchIf((e) => e.code === "NOT_FOUND", () => Effect.succeed(undefined))
  )

const kind = (stats: Stats): string =>
  stats.isDirectory()
    ? "a directory"
    : stats.isFIFO()
    ? "a FIFO"
    : stats.isSocket()
    ? "a socket"
    : stats.isCharacterDevice() || stats.isBlockDevice()
    ? "a device"
    : stats.isSymbolicLink()
    ? "a symbolic link"
    : "a regular file"

/** Refuses anything but a regular file with a single link (unless hard links are allowed). */
export const checkRegular = (ctx: Context, stats: Stats, shown: string): Effect.Effect<void, WorkspaceError> =>
  stats.isSymbolicLink()
    ? fail("SYMLINK_IN_PATH", `'${shown}' is a symbolic link; links are not followed`)
    : !stats.isFile()
    ? fail("NOT_A_REGULAR_FILE", `'${shown}' is ${kind(stats)}, not a regular file`)
    : stats.nlink > 1n && !ctx.allowHardLinks
    ? fail("HARD_LINKED_FILE", `'${shown}' has ${stats.nlink} hard links; files with more than one are refused`)
    : Effect.void

export const changed = (shown: string) =>
  fail("FILE_CHANGED_DURING_OPEN", `'${shown}' changed while it was being opened; nothing was done`)

/** Where a descriptor points, read back from `/proc/self/fd`. */
const descriptorPath = (ctx: Context, fd: number, shown: string): Effect.Effect<string | undefined, WorkspaceError> =>
  ctx.procFd ? attempt(shown, () => fs.promises.readlink(`/proc/self/fd/${fd}`)) : Effect.succeed(undefined)

/** Opens `actual` (the path used for the system call); `absolute` is the path it should be. */
export const open = (ctx: Context, actual: string, absolute: string, flags: number, shown: string, mode?: number) =>
  Effect.acquireRelease(
    Effect.zipRight(
      ctx.beforeOpen === undefined ? Effect.void : ctx.beforeOpen(absolute),
      attempt(shown, () => fs.promises.open(actual, flags, mode))
    ),
    (handle) => Effect.ignore(Effect.tryPromise(() => handle.close()))
  )

/** Checks after opening that the descriptor is the file or directory that was checked. */
export const verifyOpened = (
  ctx: Context,
  handle: fs.promises.FileHandle,
  absolute: string,
  shown: string,
  checked: Stats | undefined
): Effect.Effect<Stats, WorkspaceError> =>
  Effect.gen(function*() {
    const stats = yield* attempt(shown, () => handle.stat({ bigint: true }))
    if (checked !== undefined && (stats.dev !== checked.dev || stats.ino !== checked.ino)) return yield* changed(shown)
    const resolved = yield* descriptorPath(ctx, handle.fd, shown)
    if (resolved !== undefined && resolved !== absolute) return yield* changed(shown)
    return stats
  })

/**
 * A directory held open. Its entries are reached through the descriptor
 * (`/proc/self/fd/N/name`, in effect `openat`), so renaming or replacing any directory
 * on the way after it was opened cannot redirect what happens inside it.
 */
export interface Dir {
  /** The directory's path as checked, under the root. */
  readonly absolute: string
  /** The prefix for its entries: the descriptor's `/proc` path, or `absolute` without `/proc`. */
  readonly via: string
}

export const entry = (dir: Dir, name: string) => ({ actual: `${dir.via}/${name}`, absolute: path.join(dir.absolute, name) })

const openDirectoryAt = (ctx: Context, actual: string, absolute: string, shown: string, checked: Stats | undefined) =>
  Effect.gen(function*() {
    // O_DIRECTORY fails with ENOTDIR before O_NOFOLLOW can say ELOOP; either way the
    // entry was a directory when it was checked, so it was swapped.
    const handle = yield* open(ctx, actual, absolute, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, shown).pipe(
      Effect.catchIf((e) => e.code === "NOT_A_DIRECTORY" || e.code === "SYMLINK_IN_PATH", () => changed(shown))
    )
    const stats = yield* verifyOpened(ctx, handle, absolute, shown, checked)
    if (!stats.isDirectory()) return yield* changed(shown)
    const dir: Dir = { absolute, via: ctx.procFd ? `/proc/self/fd/${handle.fd}` : absolute }
    return dir
  })

/**
 * Opens the directory `components` name, one component at a time from the root: each
 * must exist, be a directory and not a link, and each is opened through its parent's
 * descriptor. The descriptors close with the scope.
 */
export const openDirectory = (
  ctx: Context,
  components: ReadonlyArray<string>,
  missing: "NOT_FOUND" | "PARENT_MISSING"
): Effect.Effect<Dir, WorkspaceError, Scope.Scope> =>
  Effect.gen(function*() {
    let dir = yield* openDirectoryAt(ctx, ctx.root, ctx.root, ".", undefined)
    for (let i = 0; i < components.length; i++) {
      const shown = display(components.slice(0, i + 1))
      const { absolute, actual } = entry(dir, components[i]!)
      const stats = yield* lstat(actual, shown)
      if (stats === undefined) return yield* fail(missing, `'${shown}' does not exist`)
      if (stats.isSymbolicLink()) {
        return yield* fail("SYMLINK_IN_PATH", `'${shown}' is a symbolic link; links are not followed`)
      }
      if (!stats.isDirectory()) return yield* fail("NOT_A_DIRECTORY", `'${shown}' is ${kind(stats)}, not a directory`)
      dir = yield* openDirectoryAt(ctx, actual, absolute, shown, stats)
    }
    return dir
  })

/** The absolute path of a checked directory under the root (for a command's working directory). */
export const directory = (ctx: Context, components: ReadonlyArray<string>): Effect.Effect<string, WorkspaceError> =>
  Effect.scoped(Effect.map(openDirectory(ctx, components, "NOT_FOUND"), (dir) => dir.absolute))

/** Whether descriptors can be resolved through `/proc/self/fd` on this machine. */
export const hasProcFd: Effect.Effect<boolean> = Effect.promise(() =>
  fs.promises.access("/proc/self/fd").then(() => true, () => false)
)

/** The real path of a root directory, or `ROOT_INVALID`. */
export const resolveRoot = (root: string): Effect.Effect<string, WorkspaceError> =>
  Effect.gen(function*() {
    const real = yield* Effect.tryPromise({
      try: () => fs.promises.realpath(root),
      catch: () => new WorkspaceError({ code: "ROOT_INVALID", message: `the workspace root '${root}' does not exist` })
    })
    const stats = yield* Effect.tryPromise({
      try: () => fs.promises.stat(real),
      catch: () => new WorkspaceError({ code: "ROOT_INVALID", message: `the workspace root '${root}' cannot be read` })
    })
    if (!stats.isDirectory()) return yield* fail("ROOT_INVALID", `the workspace root '${root}' is not a directory`)
    return real
  })
