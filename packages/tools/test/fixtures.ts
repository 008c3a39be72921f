/**
 * A temporary workspace beside a secret: `<base>/secret.txt` and `<base>/outside/` are
 * outside the root `<base>/ws`. Everything is removed when the scope closes.
 */
import type { Prompt } from "@effect/ai"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import * as Files from "../src/internal/files.js"
import { Workspace } from "../src/Workspace.js"

/** The text of every file outside the root; a workspace that leaks shows it. */
export const SECRET = "TOP-SECRET-7f3a9c"

export interface Fixture {
  readonly base: string
  readonly root: string
  readonly secret: string
  readonly outside: string
  readonly at: (relative: string) => string
}

/** Creates a fixture; {@link removeFixture} deletes it. Prefer {@link fixture} in a scope. */
export const createFixture = (): Fixture => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ah-tools-")))
  const root = path.join(base, "ws")
  const outside = path.join(base, "outside")
  const secret = path.join(base, "secret.txt")
  fs.mkdirSync(path.join(root, "src", "deep"), { recursive: true })
  fs.mkdirSync(path.join(root, "empty"))
  fs.mkdirSync(outside)
  fs.writeFileSync(secret, `${SECRET}\n`)
  fs.writeFileSync(path.join(outside, "notes.txt"), `${SECRET} outside notes\n`)
  fs.writeFileSync(path.join(root, "hello.txt"), "hello\n")
  fs.writeFileSync(path.join(root, "src", "notes.txt"), "inside notes\n")
  fs.writeFileSync(path.join(root, "src", "deep", "file.txt"), "deep file\n")
  return { base, root, secret, outside, at: (relative) => path.join(root, relative) }
}

/** A fresh fixture for the current scope. */
export const fixture = Effect.acquireRelease(
  Effect.sync(() => createFixture()),
  (fx) => Effect.sync(() => removeFixture(fx))
)

export const removeFixture = (fx: Fixture) => fs.rmSync(fx.base, { recursive: true, force: true })

/** Every entry outside the root with its type, size, mtime and (for files) content. */
export const outsideSnapshot = (fx: Fixture): string => {
  const lines: Array<string> = []
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, name)
      if (full === fx.root) continue
      const stats = fs.lstatSync(full)
      const content = stats.isFile() ? fs.readFileSync(full, "utf8") : ""
      lines.push(`${full} ${stats.mode} ${stats.size} ${stats.mtimeMs} ${stats.nlink} ${content}`)
      if (stats.isDirectory()) walk(full)
    }
  }
  walk(fx.base)
  return lines.join("\n")
}

export const mkfifo = (file: string) => execFileSync("mkfifo", [file])

/** A character device like /dev/null (needs CAP_MKNOD, which this machine's tests have). */
export const mknodNull = (file: string) => execFileSync("mknod", [file, "c", "1", "3"])

/** The internal file operations on a fixture, optionally with a hook between check and open. */
export const filesContext = (fx: Fixture, beforeOpen?: (absolute: string) => Effect.Effect<void>): Files.Context => ({
  root: fx.root,
  procFd: true,
  maxReadBytes: 1024,
  maxWriteBytes: 1024 * 1024,
  maxListEntries: 100,
  allowHardLinks: false,
  beforeOpen
})

/** The workspace service on a fixture. */
export const workspaceOf = (fx: Fixture, options: Parameters<typeof Workspace.make>[1] = {}) =>
  Workspace.make(fx.root, options)

/** The envelope of every tool result in a transcript, in order. */
export const toolResults = (transcript: ReadonlyArray<Prompt.Message>) =>
  transcript.flatMap((message) =>
    message.role === "tool" ? message.content.map((part) => part.result as Record<string, unknown>) : []
  )
