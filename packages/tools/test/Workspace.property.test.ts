/**
 * Random path strings against a workspace full of traps (links to the secret, to the
 * outside, to the root's parent, a hard link, a FIFO): whatever the path, the workspace
 * either acts inside the root or refuses with a WorkspaceError.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Cause, Effect, Either, Exit, FastCheck as fc } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Workspace } from "../src/index.js"
import { createFixture, type Fixture, mkfifo, outsideSnapshot, removeFixture, SECRET, workspaceOf } from "./fixtures.js"

// Mostly names that exist, so that many operations act; then the traps; then noise.
const component = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("src", "deep", "hello.txt", "notes.txt", "file.txt", "new.txt", ".", "") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "..", "out", "parent", "self", "s", "h", "fifo", "%2e%2e", "%2f", "..\\..", "\uff0e\uff0e", "~", "\u0000",
      "secret.txt", "outside"
    )
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }
)

const composed = fc.tuple(
  fc.constantFrom("", "", "", "", "./", "/", "\\"),
  fc.array(component, { minLength: 1, maxLength: 4 })
).map(([prefix, parts]) => prefix + parts.join("/"))

// Paths that exist, in different spellings, so that every operation also acts.
const existing = fc.tuple(
  fc.constantFrom("", "./", ".//"),
  fc.constantFrom("hello.txt", "src/notes.txt", "src/deep/file.txt", "src", "src/deep", "empty", "new.txt", "src/new.txt"),
  fc.constantFrom("", "", "/")
).map(([prefix, p, suffix]) => prefix + p + suffix)

const pathString = fc.oneof(composed, existing)

const operations = ["read", "write", "list", "edit"] as const
const operation = fc.constantFrom(...operations)

const inside = (root: string, target: string) => {
  const real = fs.realpathSync(target)
  return real === root || real.startsWith(root + path.sep)
}

describe("Workspace property", () => {
  // One workspace for every run, so the files earlier runs wrote are part of later ones.
  let fx: Fixture
  let before: string
  const acted = { read: 0, write: 0, list: 0, edit: 0, refused: 0 }
  beforeAll(() => {
    fx = createFixture()
    fs.symlinkSync("../secret.txt", fx.at("s"))
    fs.symlinkSync(fx.outside, fx.at("out"))
    fs.symlinkSync("..", fx.at("parent"))
    fs.symlinkSync(".", fx.at("self"))
    fs.linkSync(fx.secret, fx.at("h"))
    mkfifo(fx.at("fifo"))
    before = outsideSnapshot(fx)
  })
  afterAll(() => removeFixture(fx))

  it.effect.prop(
    "any path: the operation acts inside the root or fails with a WorkspaceError; outside never changes",
    { p: pathString, op: operation },
    ({ op, p }) =>
      Effect.gen(function*() {
        const ws = yield* workspaceOf(fx)
        const attempt: Effect.Effect<unknown, Workspace.WorkspaceError> = op === "read"
            ? ws.readFile(p)
            : op === "write"
            ? ws.writeFile(p, "written\n")
            : op === "list"
            ? ws.listDir(p)
            : ws.editFile(p, "\n", "\n")
        const exit = yield* Effect.exit(attempt)
        assert.strictEqual(outsideSnapshot(fx), before)
        if (Exit.isFailure(exit)) {
          const error = Cause.failureOption(exit.cause)
          assert(error._tag === "Some" && error.value._tag === "WorkspaceError", Cause.pretty(exit.cause))
          assert.notInclude(error.value.message, SECRET)
          acted.refused++
          return
        }
        const components = Workspace.parsePath(p)
        assert(Either.isRight(components), "a path that was acted on parses")
        const target = path.join(fx.root, ...components.right)
        assert(inside(fx.root, target), `${op} '${p}' acted outside the root`)
        assert.isFalse(fs.lstatSync(target).isSymbolicLink())
        if (op === "read") assert.notInclude(JSON.stringify(exit.value), SECRET)
        if (op === "write") assert.strictEqual(fs.readFileSync(target, "utf8"), "written\n")
        acted[op]++
      }),
    { timeout: 60_000, fastCheck: { numRuns: 300 } }
  )

  it("is not vacuous: every operation both acted and was refused", () => {
    assert.isAbove(acted.refused, 0)
    for (const op of operations) assert.isAbove(acted[op], 0, `${op} never acted: ${JSON.stringify(acted)}`)
  })
})
