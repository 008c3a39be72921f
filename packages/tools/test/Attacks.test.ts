/**
 * The attack corpus: distinct attempts to read, write or list something outside the
 * workspace, each run against a fresh workspace beside a secret. Every one must fail
 * with a typed `WorkspaceError` of the expected code, the secret must never appear in
 * what comes back, and nothing outside the root may change.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, type Scope } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import * as Files from "../src/internal/files.js"
import type { Service } from "../src/Workspace.js"
import type { ErrorCode, WorkspaceError } from "../src/WorkspaceError.js"
import { type Fixture, filesContext, fixture, mkfifo, mknodNull, outsideSnapshot, SECRET, workspaceOf } from "./fixtures.js"

interface Env {
  readonly fx: Fixture
  readonly ws: Service
  /** The internal operations with a hook that runs once, between the checks and the open of `target`. */
  readonly swapping: (when: (absolute: string) => boolean, swap: () => void) => Files.Context
}

interface Attack {
  readonly name: string
  readonly code: ErrorCode
  readonly setup?: (fx: Fixture) => Effect.Effect<void, never, Scope.Scope>
  readonly attempt: (env: Env) => Effect.Effect<unknown, WorkspaceError>
}

const sync = (f: (fx: Fixture) => void) => (fx: Fixture) => Effect.sync(() => f(fx))
const link = (target: (fx: Fixture) => string, at: string) => sync((fx) => fs.symlinkSync(target(fx), fx.at(at)))

const read = (p: string) => (env: Env) => env.ws.readFile(p)
const write = (p: string, content = "pwned") => (env: Env) => env.ws.writeFile(p, content)
const edit = (p: string) => (env: Env) => env.ws.editFile(p, SECRET, "pwned")
const list = (p: string) => (env: Env) => env.ws.listDir(p)

const traversal: ReadonlyArray<Attack> = [
  { name: "../secret.txt", code: "PATH_ESCAPES_ROOT", attempt: read("../secret.txt") },
  { name: "../../../../etc/passwd", code: "PATH_ESCAPES_ROOT", attempt: read("../../../../etc/passwd") },
  { name: "src/../../secret.txt", code: "PATH_ESCAPES_ROOT", attempt: read("src/../../secret.txt") },
  { name: "./../secret.txt", code: "PATH_ESCAPES_ROOT", attempt: read("./../secret.txt") },
  { name: "src/deep/../../../secret.txt", code: "PATH_ESCAPES_ROOT", attempt: read("src/deep/../../../secret.txt") },
  { name: "'..' alone (list)", code: "PATH_ESCAPES_ROOT", attempt: list("..") },
  { name: "src/.. (even when it stays inside)", code: "PATH_ESCAPES_ROOT", attempt: read("src/../hello.txt") },
  { name: "backslashes ..\\secret.txt", code: "PATH_ESCAPES_ROOT", attempt: read("..\\secret.txt") },
  { name: "percent-encoded %2e%2e/", code: "PATH_ESCAPES_ROOT", attempt: read("%2e%2e/secret.txt") },
  { name: "percent-encoded dots and slash %2E%2E%2F", code: "PATH_ESCAPES_ROOT", attempt: read("%2E%2E%2Fsecret.txt") },
  { name: "..%2f (encoded slash only)", code: "PATH_ESCAPES_ROOT", attempt: read("..%2fsecret.txt") },
  { name: "double-encoded %252e%252e", code: "PATH_ESCAPES_ROOT", attempt: read("%252e%252e/secret.txt") },
  { name: "overlong UTF-8 %c0%ae%c0%ae", code: "PATH_ESCAPES_ROOT", attempt: read("%c0%ae%c0%ae/secret.txt") },
  { name: "fullwidth full stops U+FF0E", code: "PATH_ESCAPES_ROOT", attempt: read("\uff0e\uff0e/secret.txt") },
  { name: "'.. ' with a trailing space", code: "PATH_ESCAPES_ROOT", attempt: read(".. /secret.txt") },
  { name: "write ../escape.txt", code: "PATH_ESCAPES_ROOT", attempt: write("../escape.txt") },
  { name: "'....//' filter-bypass spelling is just a missing name", code: "NOT_FOUND", attempt: read("....//secret.txt") }
]

const absolute: ReadonlyArray<Attack> = [
  { name: "/etc/passwd", code: "ABSOLUTE_PATH", attempt: read("/etc/passwd") },
  { name: "absolute path of the secret", code: "ABSOLUTE_PATH", attempt: (env) => env.ws.readFile(env.fx.secret) },
  { name: "absolute path inside the root", code: "ABSOLUTE_PATH", attempt: (env) => env.ws.readFile(env.fx.at("hello.txt")) },
  { name: "//etc/passwd", code: "ABSOLUTE_PATH", attempt: read("//etc/passwd") },
  { name: "\\etc\\passwd", code: "ABSOLUTE_PATH", attempt: read("\\etc\\passwd") },
  { name: "C:\\Windows\\win.ini", code: "ABSOLUTE_PATH", attempt: read("C:\\Windows\\win.ini") },
  { name: "~/.ssh/id_rsa", code: "ABSOLUTE_PATH", attempt: read("~/.ssh/id_rsa") },
  { name: "/proc/self/root/etc/passwd", code: "ABSOLUTE_PATH", attempt: read("/proc/self/root/etc/passwd") },
  { name: "write /tmp/escape.txt", code: "ABSOLUTE_PATH", attempt: (env) => env.ws.writeFile(path.join(env.fx.base, "escape.txt"), "x") }
]

const syntax: ReadonlyArray<Attack> = [
  { name: "empty path", code: "EMPTY_PATH", attempt: read("") },
  { name: "the root as a file (read '.')", code: "IS_WORKSPACE_ROOT", attempt: read(".") },
  { name: "the root as a file (write './')", code: "IS_WORKSPACE_ROOT", attempt: write("./") },
  { name: "NUL byte truncation hello.txt\\0../../secret.txt", code: "NUL_BYTE", attempt: read("hello.txt\u0000../../secret.txt") },
  { name: "NUL byte alone (write)", code: "NUL_BYTE", attempt: write("\u0000") },
  { name: "300-byte component", code: "PATH_TOO_LONG", attempt: write("a".repeat(300)) },
  { name: "2000-byte path", code: "PATH_TOO_LONG", attempt: read("a/".repeat(1000)) },
  { name: "component of 128 two-byte characters (256 bytes)", code: "PATH_TOO_LONG", attempt: read("é".repeat(128)) }
]

const symlinks: ReadonlyArray<Attack> = [
  { name: "final component links to the secret", code: "SYMLINK_IN_PATH", setup: link(() => "../secret.txt", "s"), attempt: read("s") },
  { name: "final component is an absolute link to the secret", code: "SYMLINK_IN_PATH", setup: link((fx) => fx.secret, "s"), attempt: read("s") },
  { name: "final component links inside the root", code: "SYMLINK_IN_PATH", setup: link(() => "hello.txt", "s"), attempt: read("s") },
  { name: "first component links outside", code: "SYMLINK_IN_PATH", setup: link((fx) => fx.outside, "out"), attempt: read("out/notes.txt") },
  { name: "middle component links outside", code: "SYMLINK_IN_PATH", setup: link(() => "../../outside", "src/out"), attempt: read("src/out/notes.txt") },
  { name: "third of four components links to /", code: "SYMLINK_IN_PATH", setup: link(() => "/", "src/deep/up"), attempt: read("src/deep/up/etc/passwd") },
  { name: "link to the root's parent", code: "SYMLINK_IN_PATH", setup: link(() => "..", "parent"), attempt: read("parent/secret.txt") },
  { name: "link to the root itself", code: "SYMLINK_IN_PATH", setup: link(() => ".", "self"), attempt: read("self/hello.txt") },
  { name: "chain of links to the secret", code: "SYMLINK_IN_PATH", setup: sync((fx) => {
    fs.symlinkSync("../secret.txt", fx.at("c2"))
    fs.symlinkSync("c2", fx.at("c1"))
  }), attempt: read("c1") },
  { name: "self-referencing link loop", code: "SYMLINK_IN_PATH", setup: link(() => "loop", "loop"), attempt: read("loop/x") },
  { name: "write through a dangling link to outside", code: "SYMLINK_IN_PATH", setup: link(() => "../created.txt", "dangling"), attempt: write("dangling") },
  { name: "write through a link to the secret", code: "SYMLINK_IN_PATH", setup: link(() => "../secret.txt", "s"), attempt: write("s") },
  { name: "write into a linked directory", code: "SYMLINK_IN_PATH", setup: link((fx) => fx.outside, "out"), attempt: write("out/new.txt") },
  { name: "edit through a link to the secret", code: "SYMLINK_IN_PATH", setup: link(() => "../secret.txt", "s"), attempt: edit("s") },
  { name: "list a linked directory", code: "SYMLINK_IN_PATH", setup: link((fx) => fx.outside, "out"), attempt: list("out") },
  { name: "list the root's parent through a link", code: "SYMLINK_IN_PATH", setup: link(() => "..", "parent"), attempt: list("parent/") }
]

const specialFiles: ReadonlyArray<Attack> = [
  { name: "hard link to the secret (read)", code: "HARD_LINKED_FILE", setup: sync((fx) => fs.linkSync(fx.secret, fx.at("h"))), attempt: read("h") },
  { name: "hard link to the secret (write)", code: "HARD_LINKED_FILE", setup: sync((fx) => fs.linkSync(fx.secret, fx.at("h"))), attempt: write("h") },
  { name: "hard link to the secret (edit)", code: "HARD_LINKED_FILE", setup: sync((fx) => fs.linkSync(fx.secret, fx.at("h"))), attempt: edit("h") },
  { name: "FIFO (read does not hang)", code: "NOT_A_REGULAR_FILE", setup: sync((fx) => mkfifo(fx.at("fifo"))), attempt: read("fifo") },
  { name: "FIFO (write)", code: "NOT_A_REGULAR_FILE", setup: sync((fx) => mkfifo(fx.at("fifo"))), attempt: write("fifo") },
  { name: "unix socket", code: "NOT_A_REGULAR_FILE", setup: (fx) => listen(fx.at("sock")), attempt: read("sock") },
  { name: "character device", code: "NOT_A_REGULAR_FILE", setup: sync((fx) => mknodNull(fx.at("null"))), attempt: read("null") },
  { name: "directory read as a file", code: "NOT_A_REGULAR_FILE", attempt: read("src") },
  { name: "directory written as a file", code: "NOT_A_REGULAR_FILE", attempt: write("src") },
  { name: "file listed as a directory", code: "NOT_A_DIRECTORY", attempt: list("hello.txt") },
  { name: "file used as a directory", code: "NOT_A_DIRECTORY", attempt: read("hello.txt/x") },
  { name: "write under a missing directory", code: "PARENT_MISSING", attempt: write("nope/new.txt") }
]

const is = (target: string) => (absolute: string) => absolute === target
const temporaryOf = (target: string) => (absolute: string) =>
  path.dirname(absolute) === path.dirname(target) && path.basename(absolute).startsWith(`.${path.basename(target)}.`)

/** Swaps between check and open, made deterministic by the internal hook. */
const swaps: ReadonlyArray<Attack> = [
  {
    name: "swap: final component replaced by a link to the secret (read)",
    code: "SYMLINK_IN_PATH",
    attempt: ({ fx, swapping }) =>
      Files.read(swapping(is(fx.at("hello.txt")), () => {
        fs.renameSync(fx.at("hello.txt"), fx.at("old"))
        fs.symlinkSync(fx.secret, fx.at("hello.txt"))
      }), ["hello.txt"], false)
  },
  {
    name: "swap: final component replaced by a hard link to the secret",
    code: "FILE_CHANGED_DURING_OPEN",
    attempt: ({ fx, swapping }) =>
      Files.read(swapping(is(fx.at("hello.txt")), () => {
        fs.linkSync(fx.secret, fx.at("tmp-link"))
        fs.renameSync(fx.at("tmp-link"), fx.at("hello.txt"))
      }), ["hello.txt"], false)
  },
  {
    name: "swap: final component replaced by a FIFO (no hang)",
    code: "FILE_CHANGED_DURING_OPEN",
    attempt: ({ fx, swapping }) =>
      Files.read(swapping(is(fx.at("hello.txt")), () => {
        fs.renameSync(fx.at("hello.txt"), fx.at("old"))
        mkfifo(fx.at("hello.txt"))
      }), ["hello.txt"], false)
  },
  {
    name: "swap: parent directory replaced by a link to outside just before it is opened",
    code: "FILE_CHANGED_DURING_OPEN",
    attempt: ({ fx, swapping }) =>
      Files.read(swapping(is(fx.at("src")), () => {
        fs.renameSync(fx.at("src"), fx.at("src-moved"))
        fs.symlinkSync(fx.outside, fx.at("src"))
      }), ["src", "notes.txt"], false)
  },
  {
    name: "swap: parent directory replaced by a link to outside after it is opened",
    code: "FILE_CHANGED_DURING_OPEN",
    attempt: ({ fx, swapping }) =>
      Files.read(swapping(is(fx.at("src/notes.txt")), () => {
        fs.renameSync(fx.at("src"), fx.at("src-moved"))
        fs.symlinkSync(fx.outside, fx.at("src"))
      }), ["src", "notes.txt"], false)
  },
  {
    name: "swap: parent directory moved outside, same inode (only the /proc/self/fd check sees it)",
    code: "FILE_CHANGED_DURING_OPEN",
    attempt: ({ fx, swapping }) =>
      Files.read(swapping(is(fx.at("src/notes.txt")), () => {
        fs.renameSync(fx.at("src"), path.join(fx.base, "moved-src"))
        fs.symlinkSync(path.join(fx.base, "moved-src"), fx.at("src"))
      }), ["src", "notes.txt"], false)
  },
  {
    name: "swap: write's parent replaced by a link to outside just before it is opened",
    code: "FILE_CHANGED_DURING_OPEN",
    attempt: ({ fx, swapping }) =>
      Files.write(swapping(is(fx.at("src")), () => {
        fs.renameSync(fx.at("src"), fx.at("src-moved"))
        fs.symlinkSync(fx.outside, fx.at("src"))
      }), ["src", "notes.txt"], "pwned")
  },
  {
    name: "swap: write's parent replaced by a link to outside before the temporary file is created",
    code: "FILE_CHANGED_DURING_OPEN",
    attempt: ({ fx, swapping }) =>
      Files.write(swapping(temporaryOf(fx.at("src/notes.txt")), () => {
        fs.renameSync(fx.at("src"), fx.at("src-moved"))
        fs.symlinkSync(fx.outside, fx.at("src"))
      }), ["src", "notes.txt"], "pwned")
  },
  {
    name: "swap: write target replaced by a link to the secret before the rename",
    code: "SYMLINK_IN_PATH",
    attempt: ({ fx, swapping }) =>
      Files.write(swapping(temporaryOf(fx.at("hello.txt")), () => {
        fs.renameSync(fx.at("hello.txt"), fx.at("old"))
        fs.symlinkSync(fx.secret, fx.at("hello.txt"))
      }), ["hello.txt"], "pwned")
  },
  {
    name: "swap: write target replaced by a hard link to the secret before the rename",
    code: "HARD_LINKED_FILE",
    attempt: ({ fx, swapping }) =>
      Files.write(swapping(temporaryOf(fx.at("hello.txt")), () => {
        fs.linkSync(fx.secret, fx.at("tmp-link"))
        fs.renameSync(fx.at("tmp-link"), fx.at("hello.txt"))
      }), ["hello.txt"], "pwned")
  },
  {
    name: "swap: listed directory replaced by a link to outside",
    code: "FILE_CHANGED_DURING_OPEN",
    attempt: ({ fx, swapping }) =>
      Files.list(swapping(is(fx.at("src")), () => {
        fs.renameSync(fx.at("src"), fx.at("src-moved"))
        fs.symlinkSync(fx.outside, fx.at("src"))
      }), ["src"])
  },
  {
    name: "swap: parent of the listed directory replaced by a link to the root's parent",
    code: "FILE_CHANGED_DURING_OPEN",
    attempt: ({ fx, swapping }) =>
      Files.list(swapping(is(fx.at("src/deep")), () => {
        fs.renameSync(fx.at("src"), fx.at("src-moved"))
        fs.mkdirSync(path.join(fx.base, "deep"))
        fs.symlinkSync(fx.base, fx.at("src"))
      }), ["src", "deep"])
  }
]

const listen = (file: string) =>
  Effect.acquireRelease(
    Effect.async<net.Server>((resume) => {
      const server = net.createServer()
      server.listen(file, () => {
        resume(Effect.succeed(server))
      })
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.asVoid)

/** Every attempt in the corpus. */
export const corpus: ReadonlyArray<Attack> = [...traversal, ...absolute, ...syntax, ...symlinks, ...specialFiles, ...swaps]

const temporaryFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? temporaryFiles(path.join(dir, entry.name))
      : entry.name.endsWith(".tmp")
      ? [path.join(dir, entry.name)]
      : []
  )

const runAttack = (attack: Attack) =>
  Effect.gen(function*() {
    const fx = yield* fixture
    if (attack.setup !== undefined) yield* attack.setup(fx)
    // What the attacker changes outside the root in a swap is not the workspace's doing:
    // the baseline becomes the state right after the swap.
    let baseline = outsideSnapshot(fx)
    let swapped = false
    const ws = yield* workspaceOf(fx)
    const swapping = (when: (absolute: string) => boolean, swap: () => void) =>
      filesContext(fx, (absolute) =>
        Effect.sync(() => {
          if (!swapped && when(absolute)) {
            swapped = true
            swap()
            baseline = outsideSnapshot(fx)
          }
        }))
    const exit = yield* Effect.exit(attack.attempt({ fx, ws, swapping }).pipe(Effect.timeout("5 seconds")))
    assert(Exit.isFailure(exit), `attack succeeded: ${JSON.stringify(Exit.isSuccess(exit) ? exit.value : null)}`)
    const error = Cause.failureOption(exit.cause)
    assert(error._tag === "Some", `not a typed failure: ${Cause.pretty(exit.cause)}`)
    assert(error.value._tag === "WorkspaceError", `expected a WorkspaceError, got ${error.value._tag}`)
    assert.strictEqual(error.value.code, attack.code, error.value.message)
    assert.notInclude(error.value.message, SECRET)
    assert.notInclude(error.value.message, fx.base)
    if (attack.name.startsWith("swap:")) assert(swapped, "the swap never happened")
    assert.strictEqual(outsideSnapshot(fx), baseline, "something outside the root changed")
    assert.strictEqual(fs.readFileSync(fx.secret, "utf8"), `${SECRET}\n`)
    // No temporary file of a refused write is left anywhere.
    assert.deepStrictEqual(temporaryFiles(fx.base), [])
  })

describe("attack corpus", () => {
  it("has at least 50 distinct attempts", () => {
    assert.isAtLeast(corpus.length, 50)
    assert.strictEqual(new Set(corpus.map((attack) => attack.name)).size, corpus.length)
  })

  for (const attack of corpus) {
    it.scoped(`refuses: ${attack.name}`, () => runAttack(attack))
  }
})
