/**
 * Reading, writing and listing on top of the checked walk (see `walk.ts`). Reads stop at
 * the byte cap; writes go to a new file in the target's directory and are renamed over it.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import { Effect } from "effect"
import type { WorkspaceError } from "../WorkspaceError.js"
import { display } from "./paths.js"
import {
  attempt,
  changed,
  checkRegular,
  type Context,
  entry,
  fail,
  lstat,
  open,
  openDirectory,
  type Stats,
  verifyOpened
} from "./walk.js"

export type { Context } from "./walk.js"

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = fs.constants

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

