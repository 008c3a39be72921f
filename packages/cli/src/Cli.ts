/**
 * The `agent-harness` command line: `demo [invoice|coding]` runs the demos (offline
 * unless `--provider` is given), `run "<prompt>"` runs a coding agent on a workspace with
 * a real model.
 */
import type { Agent } from "@agent-harness/core"
import type { LanguageModel } from "@effect/ai"
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Clock, Effect, Exit, Layer, Option, Schema } from "effect"
import * as CodingDemo from "./CodingDemo.js"
import * as InvoiceDemo from "./InvoiceDemo.js"
import * as OfflineModel from "./OfflineModel.js"
import * as Provider from "./Provider.js"
import * as Render from "./Render.js"

/** A run ended without an answer; its summary is already printed. */
export class RunFailed extends Schema.TaggedError<RunFailed>("@agent-harness/cli/RunFailed")("RunFailed", {
  outcome: Schema.String
}) {}

/** Bad input on the command line (a missing workspace, a bad number). */
export class UsageError extends Schema.TaggedError<UsageError>("@agent-harness/cli/UsageError")("UsageError", {
  message: Schema.String
}) {}

/** The workspace or the presets could not be set up: one line for the user. */
const setupError = (error: { readonly message: string }) => new UsageError({ message: error.message })

/** How a run is shown and exported. */
interface Display {
  readonly json: boolean
  readonly otlp: Option.Option<string>
  /** Printed before the run (not with `--json`). */
  readonly title: string
}

/**
 * Runs a prepared agent on `model` with the renderer: live lines, then the summary (or
 * JSON). Fails with {@link RunFailed} when the run ends without an answer.
 */
export const execute = (
  runner: Render.Runner,
  model: Layer.Layer<LanguageModel.LanguageModel, Provider.ProviderError>,
  display: Display
): Effect.Effect<Agent.Result, Provider.ProviderError | UsageError | RunFailed, Render.Output> =>
  Effect.scoped(Effect.gen(function*() {
    const out = yield* Render.Output
    // A provider that cannot be set up fails here, before anything is printed.
    const context = yield* Layer.build(model)
    // The exporter is loaded only when asked for: OpenTelemetry's SDK is slow to import.
    // Its settings are checked first, so that a bad URL is one line, not a failed run.
    const otel = yield* Option.match(display.otlp, {
      onNone: () => Effect.succeed(Layer.empty),
      onSome: (endpoint) =>
        Effect.promise(() => import("@agent-harness/otel")).pipe(
          Effect.tap(({ HarnessOtel }) => HarnessOtel.resolve({ endpoint })),
          Effect.map(({ HarnessOtel }) => HarnessOtel.layer({ endpoint, serviceName: "agent-harness-cli" }).pipe(Layer.orDie)),
          Effect.mapError(setupError)
        )
    })
    if (!display.json) yield* out.write(`${display.title}\n\n`)
    const renderer = yield* Render.make({ json: display.json })
    const start = yield* Clock.currentTimeMillis
    const exit = yield* runner(renderer.onEvent).pipe(
      Effect.provide(context),
      Effect.provide(otel),
      Effect.exit
    )
    yield* renderer.finish(exit, (yield* Clock.currentTimeMillis) - start)
    if (Exit.isSuccess(exit)) return exit.value
    return yield* new RunFailed({ outcome: Render.outcome(exit).outcome })
  }))

const json = Options.boolean("json").pipe(Options.withDescription("print the outcome and every event as one JSON document"))
const otlp = Options.text("otlp").pipe(
  Options.withDescription("export the trace over OTLP/HTTP to this base URL, e.g. http://localhost:4318"),
  Options.optional
)
const provider = Options.text("provider").pipe(
  Options.withDescription(`the model's provider: ${Provider.names.join(" or ")}`),
  Options.optional
)
const model = Options.text("model").pipe(Options.withDescription("the provider's model name"), Options.optional)

/** The offline model for a demo, or a real one when `--provider` is given. */
const modelLayer = (
  name: string,
  policy: OfflineModel.Policy,
  chosen: Option.Option<string>,
  modelName: Option.Option<string>
): { readonly layer: Layer.Layer<LanguageModel.LanguageModel, Provider.ProviderError>; readonly label: string } =>
  Option.match(chosen, {
    onNone: () => ({ layer: OfflineModel.layer(name, policy), label: "offline model (deterministic, not an LLM)" }),
    onSome: (p) => ({
      layer: Provider.layer({ provider: p, model: Option.getOrUndefined(modelName) }),
      label: `${p} ${Option.getOrElse(modelName, () => Provider.defaultModels[p as Provider.Name] ?? "")}`
    })
  })

const demos = ["invoice", "coding"] as const

interface DemoFlags {
  readonly json: boolean
  readonly otlp: Option.Option<string>
  readonly provider: Option.Option<string>
  readonly model: Option.Option<string>
}

const demoInvoice = (flags: DemoFlags) =>
  Effect.scoped(Effect.gen(function*() {
    const chosen = modelLayer("invoice", InvoiceDemo.policy, flags.provider, flags.model)
    const runner = yield* InvoiceDemo.prepare({ provider: Option.getOrElse(flags.provider, () => "offline") })
    return yield* execute(runner, chosen.layer, {
      json: flags.json,
      otlp: flags.otlp,
      title: `== demo invoice, on the ${chosen.label}\nprompt: ${InvoiceDemo.prompt}`
    })
  }))

const demoCoding = (flags: DemoFlags) =>
  Effect.scoped(Effect.gen(function*() {
    const root = yield* CodingDemo.copySample
    const chosen = modelLayer("coding", CodingDemo.policy, flags.provider, flags.model)
    const runner = yield* CodingDemo.prepare({
      root,
      test: CodingDemo.sampleTest,
      provider: Option.getOrElse(flags.provider, () => "offline"),
      model: Option.getOrUndefined(flags.model)
    }).pipe(Effect.mapError(setupError))
    return yield* execute(runner, chosen.layer, {
      json: flags.json,
      otlp: flags.otlp,
      title: `== demo coding, on the ${chosen.label}\nworkspace: ${root} (a temporary copy of the sample project)\nprompt: ${CodingDemo.prompt}`
    })
  }))

/** `agent-harness demo [invoice|coding]`: both when no name is given. */
export const demo = Command.make(
  "demo",
  {
    name: Args.choice(demos.map((d) => [d, d] as const)).pipe(Args.withDescription("which demo; both when left out"), Args.optional),
    json,
    otlp,
    provider,
    model
  },
  (flags) =>
    Effect.gen(function*() {
      const which = Option.match(flags.name, { onNone: () => demos, onSome: (d) => [d] as const })
      const out = yield* Render.Output
      for (const [index, name] of which.entries()) {
        if (index > 0 && !flags.json) yield* out.write("\n")
        if (name === "invoice") yield* demoInvoice(flags)
        else yield* demoCoding(flags)
      }
    })
).pipe(Command.withDescription("Run the demos: an invoice agent and a coding agent (offline unless --provider is given)"))

const positive = (name: string) => (value: number) =>
  Number.isSafeInteger(value) && value > 0 ? Effect.succeed(value) : Effect.fail(new UsageError({ message: `--${name} must be a positive integer, got ${value}` }))

/** `agent-harness run "<prompt>" --workspace DIR`: a coding agent with a real model. */
export const run = Command.make(
  "run",
  {
    prompt: Args.text({ name: "prompt" }).pipe(Args.withDescription("what the agent should do")),
    workspace: Options.text("workspace").pipe(Options.withDescription("the folder the agent may read and write (default: .)"), Options.withDefault(".")),
    provider: Options.text("provider").pipe(Options.withDescription(`${Provider.names.join(" or ")}`), Options.withDefault("openai")),
    model,
    test: Options.text("test").pipe(
      Options.withDescription("the command of the agent's `test` preset, split on spaces, no shell (e.g. \"npm test\")"),
      Options.optional
    ),
    maxSteps: Options.integer("max-steps").pipe(Options.withDefault(20), Options.withDescription("model calls at most")),
    maxToolCalls: Options.integer("max-tool-calls").pipe(Options.withDefault(100), Options.withDescription("tool calls at most")),
    timeout: Options.integer("timeout").pipe(Options.withDefault(600), Options.withDescription("seconds for the whole run")),
    toolTimeout: Options.integer("tool-timeout").pipe(Options.withDefault(120), Options.withDescription("seconds for each tool call")),
    json,
    otlp
  },
  (flags) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const info = yield* Effect.option(fs.stat(flags.workspace))
      if (Option.isNone(info) || info.value.type !== "Directory") {
        return yield* new UsageError({ message: `workspace '${flags.workspace}' does not exist or is not a directory` })
      }
      const maxSteps = yield* positive("max-steps")(flags.maxSteps)
      const maxToolCalls = yield* positive("max-tool-calls")(flags.maxToolCalls)
      const timeout = yield* positive("timeout")(flags.timeout)
      const toolTimeout = yield* positive("tool-timeout")(flags.toolTimeout)
      const test = Option.map(flags.test, (command) => command.trim().split(/\s+/))
      if (Option.isSome(test) && test.value[0] === "") return yield* new UsageError({ message: "--test must name a command" })
      const runner = yield* CodingDemo.prepare({
        root: flags.workspace,
        test: Option.getOrUndefined(test),
        prompt: flags.prompt,
        budget: { maxSteps, maxToolCalls, timeout: `${timeout} seconds`, toolTimeout: `${toolTimeout} seconds` },
        provider: flags.provider,
        model: Option.getOrUndefined(flags.model)
      }).pipe(Effect.mapError(setupError))
      yield* execute(runner, Provider.layer({ provider: flags.provider, model: Option.getOrUndefined(flags.model) }), {
        json: flags.json,
        otlp: flags.otlp,
        title: `== run on ${flags.provider}, workspace ${flags.workspace}`
      })
    }).pipe(Effect.scoped)
).pipe(Command.withDescription("Run a coding agent on a workspace with a real model (OPENAI_API_KEY or ANTHROPIC_API_KEY)"))

/** The whole command line. */
export const command = Command.make("agent-harness").pipe(
  Command.withDescription("An agent harness on Effect: demos and real runs"),
  Command.withSubcommands([demo, run])
)

/** Parses `argv` (without node and the script) and runs the command. */
export const cli = Command.run(command, { name: "agent-harness", version: "0.1.0" })
