/**
 * The coding agent of `agent-harness demo coding` and `agent-harness run`: the workspace
 * file tools plus one command preset, `test`, confined to a workspace. The demo works in
 * a temporary copy of a small sample project whose tests fail until a bug is fixed; its
 * offline policy lists, reads, runs the tests, fixes what the failure points at, and
 * runs them again.
 */
import { Agent, type Budget } from "@agent-harness/core"
import { CommandTool, FileTools, Workspace } from "@agent-harness/tools"
import { Toolkit } from "@effect/ai"
import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Layer, type Scope } from "effect"
import { fileURLToPath } from "node:url"
import type * as OfflineModel from "./OfflineModel.js"
import type { Runner } from "./Render.js"

/** The demo's request. */
export const prompt = "The tests of this project fail. Find out why, fix the code (not the tests), and check that they pass."

/** The agent's system text (also used by `agent-harness run` for the coding agent). */
export const system =
  "You are a careful coding agent working in a project folder. Use list_dir and read_file to look around, " +
  "run_command with the 'test' preset to run the tests, and edit_file for small fixes. Never change tests to make them pass."

const tests = (argv: ReadonlyArray<string>) =>
  CommandTool.make({
    presets: {
      test: {
        description: `runs the project's tests (${argv.join(" ")})`,
        command: argv[0]!,
        args: argv.slice(1),
        envAllowlist: ["PATH", "HOME", "LANG"],
        timeout: "60 seconds",
        maxOutputBytes: 16 * 1024
      }
    }
  })

/** File tools and `run_command` (preset `test`); the preset's command only matters to the layer. */
const toolkit = Toolkit.merge(FileTools.toolkit, tests(["true"]).toolkit)

/** The sample's test command: this Node.js's own test runner. */
export const sampleTest: ReadonlyArray<string> = [process.execPath, "--test"]

/** What a coding run is given. */
export interface Options {
  /** The workspace folder. */
  readonly root: string
  /** The `test` preset's command, split into argv (default `npm test`). */
  readonly test?: ReadonlyArray<string> | undefined
  readonly prompt?: string | undefined
  readonly budget?: Budget.Input | undefined
  readonly provider: string
  readonly model?: string | undefined
}

/**
 * Opens the workspace and checks the preset, then returns the run, waiting for a model.
 * A missing workspace fails here, before anything runs.
 */
export const prepare = (
  options: Options
): Effect.Effect<Runner, Workspace.WorkspaceError | CommandTool.InvalidPresets, Scope.Scope> => {
  const layer = Layer.mergeAll(FileTools.layer, tests(options.test ?? ["npm", "test"]).layer).pipe(
    Layer.provide(Layer.merge(Workspace.Workspace.layer(options.root), CommandTool.executorLayer))
  )
  return Effect.map(Layer.build(layer), (context) => (onEvent) =>
    Agent.run({
      prompt: options.prompt ?? prompt,
      system,
      toolkit,
      budget: options.budget ?? { maxSteps: 12, maxToolCalls: 30, timeout: "120 seconds" },
      telemetry: { agentName: "coding-agent", provider: options.provider, ...(options.model === undefined ? {} : { model: options.model }) },
      onEvent
    }).pipe(Effect.provide(context)))
}

/** A temporary copy of the sample project, removed when the scope closes. */
export const copySample: Effect.Effect<string, PlatformError, FileSystem.FileSystem | Scope.Scope> = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const root = yield* fs.makeTempDirectoryScoped({ prefix: "agent-harness-coding-" })
  yield* fs.copy(fileURLToPath(new URL("../sample", import.meta.url)), root, { overwrite: true })
  return root
})

interface Listing {
  readonly path: string
  readonly entries: ReadonlyArray<{ readonly name: string; readonly type: string }>
}

interface Run {
  readonly exitCode: number | null
  readonly timedOut: boolean
  readonly stdout: { readonly text: string }
  readonly stderr: { readonly text: string }
}

/** `not ok 2 - total applies the discount` lines of a TAP report. */
const failingTests = (run: Run) => [...`${run.stdout.text}\n${run.stderr.text}`.matchAll(/^not ok \d+ - (.+)$/gm)].map((m) => m[1]!.trim())

/**
 * A fix the offline model knows: a discount multiplied in where what is left after it
 * was meant. A real model finds its own; this one only recognises this bug.
 */
const discountFix = (content: string) =>
  content.includes("* discount)") ? { oldString: "* discount)", newString: "* (1 - discount))" } : undefined

/**
 * Looks around (lists `src` and `test`, runs the tests), reads every file of both when
 * tests fail, edits the line the failures point at when it recognises the bug, runs the
 * tests again, and reports what the last run said.
 */
export const policy: OfflineModel.Policy = (view) => {
  const runs = view.results.filter((r) => r.name === "run_command")
  const lastRun = runs.at(-1)
  if (lastRun === undefined) {
    return {
      text: "Let me look at the project and run its tests.",
      calls: [
        { name: "list_dir", params: { path: "src" } },
        { name: "list_dir", params: { path: "test" } },
        { name: "run_command", params: { preset: "test" } }
      ]
    }
  }
  if (lastRun.status !== "success") {
    return { text: `I could not run the tests: ${lastRun.error?.message ?? lastRun.status}.` }
  }
  const run = lastRun.data as Run
  const failing = failingTests(run)
  const edits = view.results.filter((r) => r.name === "edit_file")
  if (run.exitCode === 0) {
    return {
      text: edits.some((e) => e.status === "success")
        ? `Fixed: ${edits.map((e) => (e.params as { path: string }).path).join(", ")} multiplied by the discount instead of by what is left after it ` +
          "(now `* (1 - discount)`). All tests pass now; the tests were not changed."
        : "All tests already pass; nothing to change."
    }
  }
  if (runs.length > 1) {
    return { text: `The tests still fail after my change: ${failing.join("; ") || `exit code ${run.exitCode}`}. I stop here.` }
  }
  const reads = view.results.filter((r) => r.name === "read_file")
  if (reads.length === 0) {
    const files = view.results
      .filter((r) => r.name === "list_dir" && r.status === "success")
      .flatMap((r) => {
        const listing = r.data as Listing
        return listing.entries.filter((e) => e.type === "file").map((e) => `${listing.path}/${e.name}`)
      })
    return {
      text: `${failing.length} test(s) fail: ${failing.join("; ")}. Reading the code and the tests.`,
      calls: files.map((path) => ({ name: "read_file", params: { path } }))
    }
  }
  const fixable = reads
    .filter((r) => r.status === "success" && !(r.params as { path: string }).path.startsWith("test/"))
    .flatMap((r) => {
      const fix = discountFix((r.data as { content: string }).content)
      return fix === undefined ? [] : [{ path: (r.params as { path: string }).path, ...fix }]
    })
  if (edits.length === 0 && fixable.length > 0) {
    const { path } = fixable[0]!
    return { text: `${path} multiplies by the discount; the tests expect the price after it. Fixing.`, calls: [{ name: "edit_file", params: fixable[0]! }] }
  }
  if (edits.length > 0 && edits.every((e) => e.status === "success")) {
    return { text: "Running the tests again.", calls: [{ name: "run_command", params: { preset: "test" } }] }
  }
  return {
    text: `${failing.length} test(s) fail (${failing.join("; ")}), and the offline model does not recognise the bug. ` +
      "Run `agent-harness run` with a real model to go further."
  }
}
