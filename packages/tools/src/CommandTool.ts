/**
 * A command tool where the model picks a preset by name and nothing else. Each preset
 * fixes the executable, its arguments (passed to `argv` verbatim, no shell), the working
 * directory inside the workspace, the environment (nothing is inherited unless named in
 * `envAllowlist`), a timeout and a cap on each output stream.
 *
 * A non-zero exit is a successful call: the model must read the failing test's output.
 * Only a preset that cannot start (missing executable, bad working directory) is a
 * `business_error`.
 *
 * @example
 * ```ts
 * import { CommandTool } from "@agent-harness/tools"
 *
 * const Commands = CommandTool.make({
 *   presets: {
 *     test: { description: "Runs the unit tests", command: "npx", args: ["vitest", "run"], envAllowlist: ["PATH", "HOME"], timeout: "2 minutes" },
 *     typecheck: { description: "Type-checks the project", command: "npx", args: ["tsc", "-b"], envAllowlist: ["PATH"], timeout: "1 minute" }
 *   }
 * })
 * // Commands.toolkit: one tool, run_command({ preset: "test" | "typecheck" })
 * // Commands.layer: needs Workspace and CommandExecutor (CommandTool.executorLayer on Node)
 * ```
 */
import { Budget, ToolError } from "@agent-harness/core"
import { Tool, Toolkit } from "@effect/ai"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Duration, Effect, Either, Layer, Schema } from "effect"
import * as Process from "./internal/process.js"
import * as Workspace from "./Workspace.js"

/** One command the model may run. */
export interface Preset {
  /** What the command does, shown to the model. */
  readonly description: string
  /** The executable: an absolute path, or a name looked up in the preset's own `PATH`. */
  readonly command: string
  /** Arguments, passed verbatim: `;`, `$(...)` and quotes mean nothing here. */
  readonly args?: ReadonlyArray<string> | undefined
  /** Working directory relative to the workspace root (default `"."`), checked on every run. */
  readonly cwd?: string | undefined
  /** Names of variables copied from the harness's environment when set there (default none). */
  readonly envAllowlist?: ReadonlyArray<string> | undefined
  /** Fixed variables; they win over allowed ones of the same name. */
  readonly env?: Readonly<Record<string, string>> | undefined
  /** Deadline from the start; then the process group is terminated. */
  readonly timeout: Duration.DurationInput
  /** Bytes kept of each of stdout and stderr (default {@link defaults}.maxOutputBytes). */
  readonly maxOutputBytes?: number | undefined
  /** Time between SIGTERM and SIGKILL (default {@link defaults}.killGrace). */
  readonly killGrace?: Duration.DurationInput | undefined
}

/** Defaults of {@link Preset}. */
export const defaults = { maxOutputBytes: 64 * 1024, killGrace: Duration.millis(500) } as const

/** One output stream: the text kept, and how much the process wrote in all. */
export const Output = Schema.Struct({
  text: Schema.String,
  bytesSeen: Schema.Number,
  bytesKept: Schema.Number,
  truncated: Schema.Boolean
})

/** What `run_command` returns, whatever the exit code. */
export const Result = Schema.Struct({
  preset: Schema.String,
  /** `null` when the process was ended by a signal. */
  exitCode: Schema.NullOr(Schema.Number),
  /** The signal that ended the process, such as `SIGTERM` after a timeout. */
  signal: Schema.NullOr(Schema.String),
  timedOut: Schema.Boolean,
  durationMs: Schema.Number,
  stdout: Output,
  stderr: Output
})

/** @see {@link Result} */
export type Result = typeof Result.Type

/** The presets given to {@link make} are not usable; every problem is listed. */
export class InvalidPresets extends Schema.TaggedError<InvalidPresets>("@agent-harness/tools/InvalidPresets")(
  "InvalidPresets",
  { issues: Schema.Array(Schema.String) }
) {
  override get message() {
    return `invalid command presets: ${this.issues.join("; ")}`
  }
}

/** `CommandExecutor` on Node, for {@link make}'s layer. */
export const executorLayer: Layer.Layer<CommandExecutor.CommandExecutor> = NodeCommandExecutor.layer.pipe(
  Layer.provide(NodeFileSystem.layer)
)

interface Checked {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly envAllowlist: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly timeout: Duration.Duration
  readonly maxOutputBytes: number
  readonly grace: Duration.Duration
}

const envName = /^[A-Za-z_][A-Za-z0-9_]*$/

const check = (name: string, preset: Preset, issues: Array<string>): Checked | undefined => {
  const at = `preset '${name}'`
  const before = issues.length
  if (preset.command.length === 0 || preset.command.includes("\u0000")) issues.push(`${at}: command must be a non-empty string without NUL`)
  if ((preset.args ?? []).some((arg) => arg.includes("\u0000"))) issues.push(`${at}: arguments must not contain NUL`)
  const cwd = preset.cwd ?? "."
  const parsed = Workspace.parsePath(cwd)
  if (Either.isLeft(parsed)) issues.push(`${at}: cwd ${parsed.left.code}: ${parsed.left.message}`)
  for (const key of [...(preset.envAllowlist ?? []), ...Object.keys(preset.env ?? {})]) {
    if (!envName.test(key)) issues.push(`${at}: '${key}' is not a valid environment variable name`)
  }
  if (Object.values(preset.env ?? {}).some((value) => value.includes("\u0000"))) issues.push(`${at}: env values must not contain NUL`)
  const timeout = Budget.duration(`${at}: timeout`, preset.timeout, issues)
  const grace = Budget.duration(`${at}: killGrace`, preset.killGrace ?? defaults.killGrace, issues)
  const maxOutputBytes = preset.maxOutputBytes ?? defaults.maxOutputBytes
  if (!Number.isSafeInteger(maxOutputBytes) || maxOutputBytes < 1) issues.push(`${at}: maxOutputBytes must be an integer >= 1`)
  if (issues.length > before || timeout === undefined || grace === undefined) return undefined
  return {
    command: preset.command,
    args: preset.args ?? [],
    cwd,
    envAllowlist: preset.envAllowlist ?? [],
    env: preset.env ?? {},
    timeout,
    maxOutputBytes,
    grace
  }
}

const environment = (preset: Checked): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const name of preset.envAllowlist) {
    const value = process.env[name]
    if (value !== undefined) env[name] = value
  }
  return { ...env, ...preset.env }
}

// The harness's own per-call timeout must not stop a preset before its own deadline
// and the SIGTERM-to-SIGKILL grace have run out.
const callTimeout = (presets: ReadonlyArray<Preset>): Duration.Duration =>
  presets.reduce((longest, preset) => {
    const timeout = Duration.decodeUnknown(preset.timeout)
    const grace = Duration.decodeUnknown(preset.killGrace ?? defaults.killGrace)
    if (timeout._tag === "None" || grace._tag === "None") return longest
    return Duration.max(longest, Duration.sum(Duration.sum(timeout.value, grace.value), Duration.seconds(5)))
  }, Duration.seconds(5))

const makeTool = <const Names extends string>(presets: { readonly [K in Names]: Preset }) => {
  const names = Object.keys(presets) as Array<Names>
  const listing = names.map((name) => `- ${name}: ${presets[name].description}`).join("\n")
  return Tool.make("run_command", {
    description: `Runs one of the preset commands in the workspace and returns its exit code and output (bounded). Presets:\n${listing}`,
    parameters: { preset: Schema.Literal(...(names as unknown as [Names, ...Array<Names>])) },
    success: Result,
    failure: ToolError.BusinessError
  }).annotate(Budget.CallTimeout, callTimeout(Object.values<Preset>(presets)))
}

/**
 * The `run_command` toolkit for `presets`, and its handler layer. The layer checks the
 * presets when it is built (failing with {@link InvalidPresets}) and needs the
 * `Workspace` the commands run in and a `CommandExecutor` ({@link executorLayer}).
 */
export const make = <const Names extends string>(options: { readonly presets: { readonly [K in Names]: Preset } }) => {
  const tool = makeTool(options.presets)
  const toolkit = Toolkit.make(tool)
  const layer = toolkit.toLayer(
    Effect.gen(function*() {
      const issues: Array<string> = []
      const checked = new Map<string, Checked>()
      const entries = Object.entries<Preset>(options.presets)
      if (entries.length === 0) issues.push("at least one preset is needed")
      for (const [name, preset] of entries) {
        const ok = check(name, preset, issues)
        if (ok !== undefined) checked.set(name, ok)
      }
      if (issues.length > 0) return yield* new InvalidPresets({ issues })
      const workspace = yield* Workspace.Workspace
      const executor = yield* CommandExecutor.CommandExecutor
      return {
        run_command: ({ preset }) =>
          Effect.gen(function*() {
            const spec = checked.get(preset)
            if (spec === undefined) {
              return yield* new ToolError.BusinessError({ code: "UNKNOWN_PRESET", message: `no preset '${preset}'` })
            }
            const cwd = yield* Effect.mapError(workspace.resolveDirectory(spec.cwd), (error) =>
              new ToolError.BusinessError({
                code: "INVALID_WORKING_DIRECTORY",
                message: `preset '${preset}': working directory ${error.message} (${error.code})`
              }))
            const outcome = yield* Process.run({ ...spec, cwd, env: environment(spec) }).pipe(
              Effect.provideService(CommandExecutor.CommandExecutor, executor),
              Effect.mapError((error) =>
                new ToolError.BusinessError({
                  code: "COMMAND_FAILED_TO_START",
                  message: `preset '${preset}' could not start '${spec.command}' (${error._tag === "SystemError" ? error.reason : error._tag})`
                })
              )
            )
            return { preset, ...outcome }
          })
      }
    })
  )
  return { toolkit, layer } as const
}
