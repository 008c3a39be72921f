import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Workspace } from "../src/index.js"
import { fixture, workspaceOf } from "./fixtures.js"

const code = <A>(effect: Effect.Effect<A, Workspace.WorkspaceError>) =>
  Effect.map(Effect.flip(effect), (error) => error.code)

describe("Workspace.make", () => {
  it.scoped("resolves the root with realpath, once", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      fs.symlinkSync(fx.root, path.join(fx.base, "alias"))
      const ws = yield* Workspace.Workspace.make(path.join(fx.base, "alias"))
      assert.strictEqual(ws.root, fx.root)
      assert.strictEqual((yield* ws.readFile("hello.txt")).content, "hello\n")
    }))

  it.scoped("fails with ROOT_INVALID for a missing root or a file", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      assert.strictEqual(yield* code(Workspace.Workspace.make(path.join(fx.base, "nope"))), "ROOT_INVALID")
      assert.strictEqual(yield* code(Workspace.Workspace.make(fx.secret)), "ROOT_INVALID")
    }))

  it.scoped("layer provides the service", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const listing = yield* Effect.flatMap(Workspace.Workspace, (ws) => ws.listDir(".")).pipe(
        Effect.provide(Workspace.Workspace.layer(fx.root))
      )
      assert.deepStrictEqual(listing.entries.map((e) => `${e.type}:${e.name}`), ["directory:empty", "file:hello.txt", "directory:src"])
    }))
})

describe("readFile", () => {
  it.scoped("reads a text file whole when it fits", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const ws = yield* workspaceOf(fx)
      assert.deepStrictEqual(yield* ws.readFile("./src//deep/file.txt"), {
        path: "src/deep/file.txt",
        content: "deep file\n",
        size: 10,
        bytesRead: 10,
        truncated: false
      })
    }))

  it.scoped("truncates past maxReadBytes and says so, without cutting a character in half", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      fs.writeFileSync(fx.at("big.txt"), "é".repeat(100))
      const ws = yield* workspaceOf(fx, { maxReadBytes: 11 })
      const read = yield* ws.readFile("big.txt")
      assert.strictEqual(read.truncated, true)
      assert.strictEqual(read.size, 200)
      assert.strictEqual(read.content, "é".repeat(5))
      assert.strictEqual(read.bytesRead, 10)
    }))

  it.scoped("reports binary files instead of dumping them", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      fs.writeFileSync(fx.at("image.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]))
      fs.writeFileSync(fx.at("latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9]))
      const ws = yield* workspaceOf(fx)
      const error = yield* Effect.flip(ws.readFile("image.png"))
      assert.strictEqual(error.code, "BINARY_FILE")
      assert.include(error.message, "6 bytes")
      assert.strictEqual(yield* code(ws.readFile("latin1.txt")), "BINARY_FILE")
    }))

  it.scoped("NOT_FOUND for a missing file or directory", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const ws = yield* workspaceOf(fx)
      assert.strictEqual(yield* code(ws.readFile("missing.txt")), "NOT_FOUND")
      assert.strictEqual(yield* code(ws.readFile("missing/file.txt")), "NOT_FOUND")
    }))

  it.scoped("messages name the path relative to the root, never the root itself", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const ws = yield* workspaceOf(fx)
      const error = yield* Effect.flip(ws.readFile("src/missing.txt"))
      assert.include(error.message, "'src/missing.txt'")
      assert.notInclude(error.message, fx.base)
    }))
})

describe("writeFile", () => {
  it.scoped("creates a file, then replaces it atomically, keeping its mode and leaving no temporary file", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const ws = yield* workspaceOf(fx)
      assert.deepStrictEqual(yield* ws.writeFile("src/new.ts", "one"), { path: "src/new.ts", bytesWritten: 3, created: true })
      fs.chmodSync(fx.at("src/new.ts"), 0o600)
      assert.deepStrictEqual(yield* ws.writeFile("src/new.ts", "two!"), { path: "src/new.ts", bytesWritten: 4, created: false })
      assert.strictEqual(fs.readFileSync(fx.at("src/new.ts"), "utf8"), "two!")
      assert.strictEqual(fs.statSync(fx.at("src/new.ts")).mode & 0o777, 0o600)
      assert.deepStrictEqual(fs.readdirSync(fx.at("src")).sort(), ["deep", "new.ts", "notes.txt"])
    }))

  it.scoped("PARENT_MISSING when the directory does not exist; nothing is created", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const ws = yield* workspaceOf(fx)
      assert.strictEqual(yield* code(ws.writeFile("made/up/file.txt", "x")), "PARENT_MISSING")
      assert.isFalse(fs.existsSync(fx.at("made")))
    }))

  it.scoped("FILE_TOO_LARGE past maxWriteBytes", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const ws = yield* workspaceOf(fx, { maxWriteBytes: 4 })
      assert.strictEqual(yield* code(ws.writeFile("a.txt", "12345")), "FILE_TOO_LARGE")
      assert.isFalse(fs.existsSync(fx.at("a.txt")))
    }))
})

describe("editFile", () => {
  it.scoped("replaces the one occurrence", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const ws = yield* workspaceOf(fx)
      assert.deepStrictEqual(yield* ws.editFile("src/notes.txt", "inside", "outside?"), { path: "src/notes.txt", bytesWritten: 15 })
      assert.strictEqual(fs.readFileSync(fx.at("src/notes.txt"), "utf8"), "outside? notes\n")
    }))

  it.scoped("NO_MATCH, AMBIGUOUS_MATCH (overlapping too), INVALID_EDIT; the file is unchanged", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      fs.writeFileSync(fx.at("a.txt"), "aaa b b")
      const ws = yield* workspaceOf(fx)
      assert.strictEqual(yield* code(ws.editFile("a.txt", "zzz", "y")), "NO_MATCH")
      assert.strictEqual(yield* code(ws.editFile("a.txt", " b", "y")), "AMBIGUOUS_MATCH")
      assert.strictEqual(yield* code(ws.editFile("a.txt", "aa", "y")), "AMBIGUOUS_MATCH")
      assert.strictEqual(yield* code(ws.editFile("a.txt", "", "y")), "INVALID_EDIT")
      assert.strictEqual(fs.readFileSync(fx.at("a.txt"), "utf8"), "aaa b b")
    }))

  it.scoped("FILE_TOO_LARGE instead of editing a truncated read", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      fs.writeFileSync(fx.at("big.txt"), "x".repeat(100) + "needle")
      const ws = yield* workspaceOf(fx, { maxReadBytes: 50 })
      assert.strictEqual(yield* code(ws.editFile("big.txt", "x", "y")), "FILE_TOO_LARGE")
    }))
})

describe("listDir", () => {
  it.scoped("lists every kind of entry without following links, and truncates past the limit", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      fs.symlinkSync(fx.outside, fx.at("empty/out"))
      fs.writeFileSync(fx.at("empty/b.txt"), "")
      fs.mkdirSync(fx.at("empty/a"))
      const ws = yield* workspaceOf(fx, { maxListEntries: 2 })
      assert.deepStrictEqual(yield* ws.listDir("empty"), {
        path: "empty",
        entries: [{ name: "a", type: "directory" }, { name: "b.txt", type: "file" }],
        truncated: true
      })
      const all = yield* (yield* workspaceOf(fx)).listDir("empty/")
      assert.deepStrictEqual(all.entries.map((e) => e.type), ["directory", "file", "symlink"])
    }))
})

describe("allowHardLinks", () => {
  it.scoped("reads hard-linked files only when allowed; a write replaces the link, never the other file", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      fs.writeFileSync(fx.at("original.txt"), "shared\n")
      fs.linkSync(fx.at("original.txt"), fx.at("linked.txt"))
      assert.strictEqual(yield* code((yield* workspaceOf(fx)).readFile("linked.txt")), "HARD_LINKED_FILE")
      const ws = yield* workspaceOf(fx, { allowHardLinks: true })
      assert.strictEqual((yield* ws.readFile("linked.txt")).content, "shared\n")
      yield* ws.writeFile("linked.txt", "replaced\n")
      assert.strictEqual(fs.readFileSync(fx.at("original.txt"), "utf8"), "shared\n")
      assert.strictEqual(fs.readFileSync(fx.at("linked.txt"), "utf8"), "replaced\n")
    }))
})

describe("parsePath", () => {
  it("normalises '.' and empty components and refuses the rest by code", () => {
    assert.deepStrictEqual(Workspace.parsePath("./a//b/./c/"), Either.right(["a", "b", "c"]))
    assert.deepStrictEqual(Workspace.parsePath("."), Either.right([]))
    const codeOf = (p: string) => Either.match(Workspace.parsePath(p), { onLeft: (e) => e.code, onRight: () => "OK" })
    assert.strictEqual(codeOf(""), "EMPTY_PATH")
    assert.strictEqual(codeOf("a\u0000b"), "NUL_BYTE")
    assert.strictEqual(codeOf("/a"), "ABSOLUTE_PATH")
    assert.strictEqual(codeOf("a/../b"), "PATH_ESCAPES_ROOT")
    assert.strictEqual(codeOf("x".repeat(256)), "PATH_TOO_LONG")
    assert.strictEqual(codeOf("...."), "OK")
    assert.strictEqual(codeOf("100%.txt"), "OK")
  })
})
