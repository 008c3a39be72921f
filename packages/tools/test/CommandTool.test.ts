import { ToolError } from "@agent-harness/core"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer } from "effect"
import * as fs from "node:fs"
import { CommandTool, Workspace } from "../src/index.js"
import { type Fixture, fixture } from "./fixtures.js"
import { alive, groupAfter, liveInGroup, readPids } from "./processes.js"

const node = process.execPath

const presets = {
  argv: {
    description: "prints its arguments",
    command: node,
    args: [
      "-e",
      "process.stdout.write(JSON.stringify(process.argv.slice(1)))",
      ";",
      "$(touch pwned)",
      "`touch pwned2`",
      "'single'",
      "\"double\"",
      "a b",
      "| cat /etc/passwd",
      "&& touch pwned3",
      "*",
      "$HOME",
      "\\n"
    ],
    timeout: "10 seconds"
  },
  env: {
    description: "prints its environment",
    command: node,
    args: ["-e", "process.stdout.write(JSON.stringify(process.env))"],
    envAllowlist: ["AH_TOOLS_ALLOWED", "AH_TOOLS_UNSET"],
    env: { FIXED: "1" },
    timeout: "10 seconds"
  },
  cwd: { description: "prints its directory", command: node, args: ["-e", "process.stdout.write(process.cwd())"], cwd: "src", timeout: "10 seconds" },
  linkedCwd: { description: "runs in a linked directory", command: node, args: ["-e", "1"], cwd: "linked", timeout: "10 seconds" },
  fails: {
    description: "fails with output",
    command: node,
    args: ["-e", "process.stdout.write('1 test failed'); process.stderr.write('expected 2, got 3'); process.exit(3)"],
    timeout: "10 seconds"
  },
  killsItself: { description: "dies by a signal", command: "/bin/sh", args: ["-c", "kill -TERM $$"], timeout: "10 seconds" },
  chatty: {
    description: "writes 10 MB to each stream",
    command: node,
    args: [
      "-e",
      "const b = Buffer.alloc(1 << 20, 97); for (let i = 0; i < 10; i++) { process.stdout.write(b); process.stderr.write(b) }"
    ],
    timeout: "20 seconds",
    maxOutputBytes: 1000
  },
  stdin: { description: "reads stdin", command: "/bin/cat", timeout: "10 seconds" },
  missing: { description: "does not exist", command: "/nonexistent/tool", timeout: "10 seconds" },
  stubborn: {
    description: "ignores SIGTERM and leaves a sleeping grandchild",
    command: "/bin/sh",
    args: ["-c", "trap '' TERM; echo $$ > group.pid; sleep 30 & echo $! >> group.pid; while :; do sleep 1; done"],
    timeout: "1 second",
    killGrace: "300 millis"
  },
  sleeper: { description: "sleeps past its deadline", command: "/bin/sleep", args: ["30"], timeout: "500 millis" },
  longStubborn: {
    description: "ignores SIGTERM for a minute",
    command: "/bin/sh",
    args: ["-c", "trap '' TERM; sleep 60 & echo $$ > group.pid; while :; do sleep 1; done"],
    timeout: "60 seconds",
    killGrace: "300 millis"
  },
  leavesChild: {
    description: "exits at once, leaving a background child",
    command: "/bin/sh",
    args: ["-c", "sleep 30 & echo $! > child.pid; echo started"],
    timeout: "10 seconds"
  }
} satisfies Record<string, CommandTool.Preset>

const Commands = CommandTool.make({ presets })

const layerFor = (fx: Fixture) =>
  Commands.layer.pipe(Layer.provide(Workspace.Workspace.layer(fx.root)), Layer.provide(CommandTool.executorLayer))

const run = (fx: Fixture, preset: keyof typeof presets) =>
  Effect.gen(function*() {
    const toolkit = yield* Commands.toolkit
    const { result } = yield* toolkit.handle("run_command", { preset })
    // The handler's failures arrive on the error channel; this narrows the type.
    if (result instanceof ToolError.BusinessError) return yield* Effect.fail(result)
    return result
  }).pipe(Effect.provide(layerFor(fx)))

describe("run_command", () => {
  it.live("passes arguments to argv verbatim: no shell", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const result = yield* run(fx, "argv")
      assert.strictEqual(result.exitCode, 0)
      assert.deepStrictEqual(JSON.parse(result.stdout.text), presets.argv.args.slice(2))
      assert.deepStrictEqual(fs.readdirSync(fx.root).filter((name) => name.startsWith("pwned")), [])
    }).pipe(Effect.scoped))

  it.live("does not inherit the environment: only allowed names that are set, plus fixed values", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      process.env.AH_TOOLS_ALLOWED = "yes"
      process.env.AH_TOOLS_NOT_ALLOWED = "leak"
      const result = yield* run(fx, "env").pipe(
        Effect.ensuring(Effect.sync(() => {
          delete process.env.AH_TOOLS_ALLOWED
          delete process.env.AH_TOOLS_NOT_ALLOWED
        }))
      )
      assert.deepStrictEqual(JSON.parse(result.stdout.text), { AH_TOOLS_ALLOWED: "yes", FIXED: "1" })
    }).pipe(Effect.scoped))

  it.live("runs in the preset's directory inside the workspace; a linked directory is refused", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      assert.strictEqual((yield* run(fx, "cwd")).stdout.text, fx.at("src"))
      fs.symlinkSync(fx.outside, fx.at("linked"))
      const error = yield* Effect.flip(run(fx, "linkedCwd"))
      assert(error._tag === "BusinessError")
      assert.strictEqual(error.code, "INVALID_WORKING_DIRECTORY")
      assert.include(error.message, "SYMLINK_IN_PATH")
    }).pipe(Effect.scoped))

  it.live("a non-zero exit is a result with both streams, not an error", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const result = yield* run(fx, "fails")
      assert.strictEqual(result.exitCode, 3)
      assert.strictEqual(result.signal, null)
      assert.strictEqual(result.timedOut, false)
      assert.deepStrictEqual(result.stdout, { text: "1 test failed", bytesSeen: 13, bytesKept: 13, truncated: false })
      assert.strictEqual(result.stderr.text, "expected 2, got 3")
    }).pipe(Effect.scoped))

  it.live("reports the signal that ended the process", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const result = yield* run(fx, "killsItself")
      assert.strictEqual(result.exitCode, null)
      assert.strictEqual(result.signal, "SIGTERM")
      assert.strictEqual(result.timedOut, false)
    }).pipe(Effect.scoped))

  it.live("drains 10 MB on each stream while keeping only the cap", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const result = yield* run(fx, "chatty")
      assert.strictEqual(result.exitCode, 0)
      assert.strictEqual(result.timedOut, false)
      for (const output of [result.stdout, result.stderr]) {
        assert.deepStrictEqual(output, { text: "a".repeat(1000), bytesSeen: 10 * 1024 * 1024, bytesKept: 1000, truncated: true })
      }
    }).pipe(Effect.scoped))

  it.live("stdin is closed, so a process waiting for input ends", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const result = yield* run(fx, "stdin")
      assert.strictEqual(result.exitCode, 0)
      assert.strictEqual(result.timedOut, false)
    }).pipe(Effect.scoped))

  it.live("a preset that cannot start is a COMMAND_FAILED_TO_START business error", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const error = yield* Effect.flip(run(fx, "missing"))
      assert(error._tag === "BusinessError")
      assert.strictEqual(error.code, "COMMAND_FAILED_TO_START")
      assert.include(error.message, "NotFound")
    }).pipe(Effect.scoped))

  it.live("at the deadline, a process that honours SIGTERM ends by it, within the grace period", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const result = yield* run(fx, "sleeper")
      assert.strictEqual(result.timedOut, true)
      assert.strictEqual(result.exitCode, null)
      assert.strictEqual(result.signal, "SIGTERM")
      assert.isBelow(result.durationMs, 500 + 500)
    }).pipe(Effect.scoped))

  it.live("at the deadline, a TERM-ignoring parent and its sleeping grandchild are killed within a second", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const result = yield* run(fx, "stubborn")
      assert.strictEqual(result.timedOut, true)
      assert.strictEqual(result.exitCode, null)
      assert.strictEqual(result.signal, "SIGKILL")
      assert.isBelow(result.durationMs, 1000 + 700)
      const [leader, grandchild] = readPids(fx.at("group.pid"))
      assert(leader !== undefined && grandchild !== undefined)
      // Within a second of the deadline, the SIGTERM grace included.
      assert.deepStrictEqual(yield* groupAfter(leader, 1000 - (result.durationMs - 1000)), [])
      assert.isFalse(alive(grandchild))
    }).pipe(Effect.scoped))

  it.live("interrupting the call kills the whole group, TERM-ignoring or not", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const fiber = yield* Effect.fork(run(fx, "longStubborn"))
      // Wait until the script has written its pid: the group is running.
      yield* Effect.sleep(Duration.millis(50)).pipe(
        Effect.repeat({ until: () => fs.existsSync(fx.at("group.pid")) && fs.readFileSync(fx.at("group.pid"), "utf8").includes("\n") }),
        Effect.timeout("10 seconds")
      )
      const [leader] = readPids(fx.at("group.pid"))
      assert(leader !== undefined)
      assert.isAbove(liveInGroup(leader).length, 1)
      const started = Date.now()
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(yield* groupAfter(leader, 1000 - (Date.now() - started)), [])
    }).pipe(Effect.scoped))

  it.live("what the leader leaves running in its group is killed when it exits", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const result = yield* run(fx, "leavesChild")
      assert.strictEqual(result.exitCode, 0)
      assert.strictEqual(result.stdout.text, "started\n")
      assert.isBelow(result.durationMs, 5000)
      const [child] = readPids(fx.at("child.pid"))
      assert(child !== undefined)
      assert.isFalse(alive(child))
    }).pipe(Effect.scoped))
})

describe("CommandTool.make", () => {
  it.live("the layer refuses unusable presets, listing every problem", () =>
    Effect.gen(function*() {
      const fx = yield* fixture
      const bad = CommandTool.make({
        presets: {
          a: { description: "", command: "", timeout: "0 seconds" },
          b: { description: "", command: "x", cwd: "../up", envAllowlist: ["A=B"], maxOutputBytes: 0, timeout: "1 second" }
        }
      })
      const error = yield* Effect.flip(
        Layer.build(bad.layer.pipe(Layer.provide(Workspace.Workspace.layer(fx.root)), Layer.provide(CommandTool.executorLayer)))
      )
      assert(error._tag === "InvalidPresets")
      assert.strictEqual(error.issues.length, 5, error.message)
      assert.include(error.message, "PATH_ESCAPES_ROOT")
    }).pipe(Effect.scoped))

  it("offers the preset names as the only parameter", () => {
    const tool = Commands.toolkit.tools.run_command
    assert.strictEqual(tool.name, "run_command")
    assert.include(tool.description ?? "", "- stubborn: ignores SIGTERM")
  })
})
