/**
 * The checked filesystem operations behind `Workspace`. Each walks the path from the
 * root one component at a time: `lstat` (no links, directories where directories
 * belong), then an `O_NOFOLLOW` open through the parent's descriptor, then a check that
 * what it opened is what it checked: the same device and inode, and (where
 * `/proc/self/fd` exists) a descriptor that resolves to the expected path inside the
 * root. A swap between the check and the open fails the operation.
 */
import { randomBytes } from "node:crypto"
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

type Stats = fs.BigIntStats

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY, O_DIRECTORY } = fs.constants

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

const attempt = <A>(shown: string, f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: fromErrno(shown) })

/** `lstat`, with a missing entry as `undefined` rather than a failure. */
const lstat = (absolute: string, shown: string): Effect.Effect<Stats | undefined, WorkspaceError> =>
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
const checkRegular = (ctx: Context, stats: Stats, shown: string): Effect.Effect<void, WorkspaceError> =>
  stats.isSymbolicLink()
    ? fail("SYMLINK_IN_PATH", `'${shown}' is a symbolic link; links are not followed`)
    : !stats.isFile()
    ? fail("NOT_A_REGULAR_FILE", `'${shown}' is ${kind(stats)}, not a regular file`)
    : stats.nlink > 1n && !ctx.allowHardLinks
    ? fail("HARD_LINKED_FILE", `'${shown}' has ${stats.nlink} hard links; files with more than one are refused`)
    : Effect.void

const changed = (shown: string) =>
  fail("FILE_CHANGED_DURING_OPEN", `'${shown}' changed while it was being opened; nothing was done`)

/** Where a descriptor points, read back from `/proc/self/fd`. */
const descriptorPath = (ctx: Context, fd: number, shown: string): Effect.Effect<string | undefined, WorkspaceError> =>
  ctx.procFd ? attempt(shown, () => fs.promises.readlink(`/proc/self/fd/${fd}`)) : Effect.succeed(undefined)

/** Opens `actual` (the path used for the system call); `absolute` is the path it should be. */
const open = (ctx: Context, actual: string, absolute: string, flags: number, shown: string, mode?: number) =>
  Effect.acquireRelease(
    Effect.zipRight(
      ctx.beforeOpen === undefined ? Effect.void : ctx.beforeOpen(absolute),
      attempt(shown, () => fs.promises.open(actual, flags, mode))
    ),
    (handle) => Effect.ignore(Effect.tryPromise(() => handle.close()))
  )

/** Checks after opening that the descriptor is the file or directory that was checked. */
const verifyOpened = (
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
interface Dir {
  /** The directory's path as checked, under the root. */
  readonly absolute: string
  /** The prefix for its entries: the descriptor's `/proc` path, or `absolute` without `/proc`. */
  readonly via: string
}

const entry = (dir: Dir, name: string) => ({ actual: `${dir.via}/${name}`, absolute: path.join(dir.absolute, name) })

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
const openDirectory = (
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

/** Opens a file for reading and returns its descriptor's stats; the handle closes with the scope. */
const openForRead = (ctx: Context, components: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const shown = display(components)
    if (components.length === 0) return yield* fail("IS_WORKSPACE_ROOT", "the workspace root is a directory, not a file")
    const dir = yield* openDirectory(ctx, components.slice(0, -1), "NOT_FOUND")
    const { absolute, actual } = entry(dir, components[components.length - 1]!)
    const checked = yield* lstat(actual, shown)
    if (checked === undefined) return yield* fail("NOT_FOUND", `'${shown}' does not exist`)
    yield* checkRegular(ctx, checked, shown)
    // O_NONBLOCK: a FIFO swapped in after the check must not block the open.
    const handle = yield* open(ctx, actual, absolute, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, shown)
    const stats = yield* verifyOpened(ctx, handle, absolute, shown, checked)
    yield* checkRegular(ctx, stats, shown)
    return { handle, stats, shown }
  })

const readUpTo = (handle: fs.promises.FileHandle, limit: number, shown: string) =>
  Effect.gen(function*() {
    const chunks: Array<Buffer> = []
    let total = 0
    while (total < limit) {
      const buffer = Buffer.alloc(Math.min(64 * 1024, limit - total))
      const { bytesRead } = yield* attempt(shown, () => handle.read(buffer, 0, buffer.length, null))
      if (bytesRead === 0) break
      chunks.push(buffer.subarray(0, bytesRead))
      total += bytesRead
    }
    return Buffer.concat(chunks, total)
  })

const decoder = new TextDecoder("utf-8", { fatal: true })

/** UTF-8 text, or `undefined` for content that is not text. A cut multi-byte character at the end is dropped. */
const decodeText = (bytes: Buffer, cut: boolean): string | undefined => {
  if (bytes.includes(0)) return undefined
  for (let drop = 0; drop <= (cut ? 3 : 0) && drop <= bytes.length; drop++) {
    try {
      return decoder.decode(bytes.subarray(0, bytes.length - drop))
    } catch {
      continue
    }
  }
  return undefined
}

/** What {@link read} returns. */
export interface Read {
  readonly content: string
  readonly size: number
  readonly bytesRead: number
  readonly truncated: boolean
  readonly stats: Stats
}

/**
 * Reads a text file. Past `maxReadBytes` it truncates, or fails with `FILE_TOO_LARGE`
 * when `whole` is set (an edit must see all of the file).
 */
export const read = (ctx: Context, components: ReadonlyArray<string>, whole: boolean): Effect.Effect<Read, WorkspaceError> =>
  Effect.scoped(Effect.gen(function*() {
    const { handle, shown, stats } = yield* openForRead(ctx, components)
    const size = Number(stats.size)
    if (whole && size > ctx.maxReadBytes) {
      return yield* fail("FILE_TOO_LARGE", `'${shown}' is ${size} bytes, over the limit of ${ctx.maxReadBytes}`)
    }
    // One byte past the cap tells a file that grew since fstat from one that fits.
    const bytes = yield* readUpTo(handle, ctx.maxReadBytes + 1, shown)
    const truncated = bytes.length > ctx.maxReadBytes
    if (truncated && whole) {
      return yield* fail("FILE_TOO_LARGE", `'${shown}' is over the limit of ${ctx.maxReadBytes} bytes`)
    }
    const kept = truncated ? bytes.subarray(0, ctx.maxReadBytes) : bytes
    const content = decodeText(kept, truncated)
    if (content === undefined) {
      return yield* fail("BINARY_FILE", `'${shown}' is a binary file (${size} bytes); its content is not shown`)
    }
    return { content, size, bytesRead: Buffer.byteLength(content, "utf8"), truncated, stats }
  }))

/** The identity a file must still have for a write to replace it (an edit's read). */
export interface Expected {
  readonly ino: bigint
  readonly dev: bigint
  readonly mtimeNs: bigint
  readonly size: bigint
}

/** What {@link write} returns. */
export interface Written {
  readonly bytesWritten: number
  readonly created: boolean
}

const sameFile = (a: Stats, b: Expected) =>
  a.dev === b.dev && a.ino === b.ino && a.mtimeNs === b.mtimeNs && a.size === b.size

/**
 * Writes a whole file atomically: a new file created with `O_EXCL | O_NOFOLLOW` in the
 * target's directory (reached through its descriptor), then renamed over the target in
 * that same directory. `rename` replaces a link planted at the target rather than
 * following it.
 */
export const write = (
  ctx: Context,
  components: ReadonlyArray<string>,
  content: string,
  expected?: Expected
): Effect.Effect<Written, WorkspaceError> =>
  Effect.scoped(Effect.gen(function*() {
    const shown = display(components)
    if (components.length === 0) return yield* fail("IS_WORKSPACE_ROOT", "the workspace root is a directory, not a file")
    const bytes = Buffer.from(content, "utf8")
    if (bytes.length > ctx.maxWriteBytes) {
      return yield* fail("FILE_TOO_LARGE", `the content is ${bytes.length} bytes, over the limit of ${ctx.maxWriteBytes}`)
    }
    const name = components[components.length - 1]!
    const dir = yield* openDirectory(ctx, components.slice(0, -1), "PARENT_MISSING")
    const target = entry(dir, name)
    const existing = yield* lstat(target.actual, shown)
    if (existing !== undefined) yield* checkRegular(ctx, existing, shown)
    if (expected !== undefined && (existing === undefined || !sameFile(existing, expected))) {
      return yield* fail("FILE_CHANGED_DURING_OPEN", `'${shown}' changed after it was read; read it again`)
    }
    const mode = existing === undefined ? 0o644 : Number(existing.mode & 0o777n)
    const temporary = entry(dir, `.${name.slice(0, 40)}.${randomBytes(6).toString("hex")}.tmp`)
    const removeTemporary = Effect.ignore(Effect.tryPromise(() => fs.promises.unlink(temporary.actual)))
    yield* Effect.gen(function*() {
      yield* Effect.scoped(Effect.gen(function*() {
        const handle = yield* open(ctx, temporary.actual, temporary.absolute, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, shown, mode)
        yield* verifyOpened(ctx, handle, temporary.absolute, shown, undefined)
        yield* attempt(shown, () => handle.writeFile(bytes))
        // The mode given to open is reduced by the umask; keep the target's own.
        yield* attempt(shown, () => handle.chmod(mode))
        yield* attempt(shown, () => handle.datasync())
      }))
      const now = yield* lstat(target.actual, shown)
      if (now !== undefined) yield* checkRegular(ctx, now, shown)
      if ((now === undefined) !== (existing === undefined) || (now !== undefined && existing !== undefined && now.ino !== existing.ino)) {
        return yield* changed(shown)
      }
      yield* attempt(shown, () => fs.promises.rename(temporary.actual, target.actual))
    }).pipe(Effect.onError(() => removeTemporary))
    return { bytesWritten: bytes.length, created: existing === undefined }
  }))

/** One entry of a directory listing. */
export interface Entry {
  readonly name: string
  readonly type: "file" | "directory" | "symlink" | "fifo" | "socket" | "device" | "other"
}

const entryType = (entry: fs.Dirent): Entry["type"] =>
  entry.isFile()
    ? "file"
    : entry.isDirectory()
    ? "directory"
    : entry.isSymbolicLink()
    ? "symlink"
    : entry.isFIFO()
    ? "fifo"
    : entry.isSocket()
    ? "socket"
    : entry.isCharacterDevice() || entry.isBlockDevice()
    ? "device"
    : "other"

/** Lists a directory through its descriptor, so a directory swapped after the check is never listed. */
export const list = (
  ctx: Context,
  components: ReadonlyArray<string>
): Effect.Effect<{ readonly entries: ReadonlyArray<Entry>; readonly truncated: boolean }, WorkspaceError> =>
  Effect.scoped(Effect.gen(function*() {
    const dir = yield* openDirectory(ctx, components, "NOT_FOUND")
    const dirents = yield* attempt(display(components), () => fs.promises.readdir(dir.via, { withFileTypes: true }))
    const entries = dirents
      .map((entry) => ({ name: entry.name, type: entryType(entry) }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    return { entries: entries.slice(0, ctx.maxListEntries), truncated: entries.length > ctx.maxListEntries }
  }))

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
