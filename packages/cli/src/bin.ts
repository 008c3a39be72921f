/**
 * The `agent-harness` executable. Errors a user can fix are one line on stderr and exit
 * code 2; a run that ends without an answer exits with 1 after its summary.
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { ValidationError } from "@effect/cli"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { cli } from "./Cli.js"
import { Output } from "./Render.js"

const exitWith = (code: number) => Effect.sync(() => void (process.exitCode = code))

cli(process.argv).pipe(
  Effect.catchAll((error) =>
    Effect.gen(function*() {
      // @effect/cli has printed the usage already.
      if (ValidationError.isValidationError(error)) return yield* exitWith(2)
      if (error._tag === "RunFailed") return yield* exitWith(1)
      const out = yield* Output
      yield* out.error(`agent-harness: ${error.message}\n`)
      return yield* exitWith(2)
    })
  ),
  Effect.provide(Layer.merge(NodeContext.layer, Output.layerProcess)),
  Logger.withMinimumLogLevel(LogLevel.Warning),
  NodeRuntime.runMain({ disableErrorReporting: false })
)
