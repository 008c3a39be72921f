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

const component = fc.oneof(
  fc.constantFrom(
    "..", ".", "", "src", "deep", "hello.txt", "notes.txt", "new.txt", "out", "parent", "self", "s", "h", "fifo",
    "%2e%2e", "%2f", "..\\..", "\uff0e\uff0e", "~", "\u0000", "secret.txt", "outside"
  ),
  fc.string({ maxLength: 8 })
)

const pathString = fc.tuple(fc.constantFrom("", "", "/", "./", "\\"), fc.array(component, { maxLength: 6 })).map(
  ([prefix, parts]) => prefix + parts.join("/")
)

const operation = fc.constantFrom("read", "write", "list", "edit")

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
        const exit = yield* Effect.exit(
          op === "read"
            ? ws.readFile(p)
            : op === "write"
            ? ws.writeFile(p, "written")
            : op === "list"
            ? ws.listDir(p)
            : ws.editFile(p, "hello", "bye")
        )
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
        if (op === "write") assert.strictEqual(fs.readFileSync(target, "utf8"), "written")
        acted[op]++
      }),
    { timeout: 60_000, fastCheck: { numRuns: 400 } }
  )

  it("is not vacuous: every operation both acted and was refused", () => {
    assert.isAbove(acted.refused, 0)
    for (const op of ["read", "write", "list", "edit"] as const) assert.isAbove(acted[op], 0, `${op} never acted: ${JSON.stringify(acted)}`)
  })
})
