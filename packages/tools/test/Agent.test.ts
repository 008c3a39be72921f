/** The tools inside `Agent.run`: what the model reads, and what a run's deadline does to a command. */
import { Agent } from "@agent-harness/core"
import { ScriptedModel as S } from "@agent-harness/testing"
import { Toolkit } from "@effect/ai"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import { CommandTool, FileTools, Workspace } from "../src/index.js"
import { fixture, SECRET, toolResults } from "./fixtures.js"
import { groupAfter, readPids } from "./processes.js"

const Commands = CommandTool.make({
  presets: {
    hang: {
      description: "runs for a long time and ignores SIGTERM",
      command: "/bin/sh",
      args: ["-c", "trap '' TERM; echo $$ > group.pid; sleep 60 & while :; do sleep 1; done"],
      timeout: "60 seconds",
      killGrace: "300 millis"
    }
  }
})

const CodingTools = Toolkit.merge(FileTools.toolkit, Commands.toolkit)

const codingLayer = (root: string) =>
  Layer.mergeAll(FileTools.layer, Commands.layer).pipe(
    Layer.provide(Workspace.Workspace.layer(root)),
    Layer.provide(CommandTool.executorLayer)
  )

describe("file tools in a run", () => {
  it.live("the model reads results, and refusals as business errors carrying the workspace code", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const result = yield* Agent.run({ prompt: "fix it", toolkit: CodingTools }).pipe(
        Effect.provide(codingLayer(fx.root)),
        Effect.provide(S.layer([
          S.calls(
            S.call("read_file", { path: "hello.txt" }),
            S.call("read_file", { path: "../secret.txt" }),
            S.call("list_dir", { path: "." })
          ),
          S.calls(
            S.call("write_file", { path: "src/new.txt", content: "new\n" }),
            S.call("edit_file", { path: "hello.txt", oldString: "hello", newString: "goodbye" })
          ),
          S.calls(S.call("run_command", { preset: "rm -rf /" })),
          S.text("done")
        ]))
      )
      const [read, escape, listing, written, edited, unknown] = toolResults(result.transcript)
      assert.strictEqual(read?.status, "success")
      assert.deepInclude(read?.data as object, { content: "hello\n", truncated: false })
      assert.strictEqual(escape?.status, "business_error")
      assert.deepInclude(escape?.error as object, { code: "PATH_ESCAPES_ROOT" })
      assert.strictEqual(listing?.status, "success")
      assert.deepStrictEqual(written?.data, { path: "src/new.txt", bytesWritten: 4, created: true })
      assert.deepStrictEqual(edited?.data, { path: "hello.txt", bytesWritten: 8 })
      // Only preset names are accepted: anything else never reaches the handler.
      assert.strictEqual(unknown?.status, "validation_error")
      assert.strictEqual(fs.readFileSync(fx.at("hello.txt"), "utf8"), "goodbye\n")
      assert.notInclude(JSON.stringify(result.transcript), SECRET)
    }).pipe(Effect.scoped))
})

describe("a run's deadline", () => {
  it.live("interrupts run_command and kills its whole process group", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const started = Date.now()
      const error = yield* Effect.flip(
        Agent.run({ prompt: "test", toolkit: CodingTools, budget: { timeout: "1500 millis" } }).pipe(
          Effect.provide(codingLayer(fx.root)),
          Effect.provide(S.layer([S.calls(S.call("run_command", { preset: "hang" })), S.text("never")]))
        )
      )
      assert.strictEqual(error._tag, "DeadlineExceeded")
      const [leader] = readPids(fx.at("group.pid"))
      assert(leader !== undefined)
      // Gone within a second of the run's deadline.
      assert.deepStrictEqual(yield* groupAfter(leader, 1500 + 1000 - (Date.now() - started)), [])
      assert(error._tag === "DeadlineExceeded")
      assert.deepInclude(toolResults(error.snapshot.transcript)[0] as object, { status: "cancelled" })
    }).pipe(Effect.scoped))
})
