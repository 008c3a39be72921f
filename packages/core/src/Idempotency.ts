/**
 * At-most-once execution of tools with side effects. A tool annotated {@link Mutating}
 * gets the key `${runId}:${callId}`; the {@link IdempotencyStore} records its result
 * under that key, and a second call with the key (a retry, a concurrent duplicate, a run
 * resumed after a crash) gets the recorded result without the handler running again.
 *
 * @example
 * ```ts
 * import { Idempotency } from "@agent-harness/core"
 * import { Tool } from "@effect/ai"
 * import { Effect, Schema } from "effect"
 *
 * const Pay = Tool.make("pay", { parameters: { cents: Schema.Int }, dependencies: [Idempotency.Key] })
 *   .annotate(Idempotency.Mutating, true)
 *
 * // in the handler: const key = yield* Idempotency.Key  (pass it on to the payment API)
 * ```
 */
import type { Tool } from "@effect/ai"
import { Context, Deferred, Effect, Exit, Layer, Option, Schema } from "effect"
import * as ToolResult from "./ToolResult.js"

/** Tool annotation: the tool changes the world, so it must run at most once per key. */
export class Mutating extends Context.Tag("@agent-harness/core/Mutating")<Mutating, boolean>() {}

/** The idempotency key of the call being handled, provided to mutating tools' handlers. */
export class Key extends Context.Tag("@agent-harness/core/IdempotencyKey")<Key, string>() {}

/** Whether a tool is annotated as mutating. */
export const isMutating = (tool: Tool.Any): boolean =>
  Option.getOrElse(Context.getOption(tool.annotations, Mutating), () => false) === true

/** What is stored: the envelope without its per-call metadata. */
export const Stored = ToolResult.ToolResult.pipe(Schema.omit("metadata"))

/** @see {@link Stored} */
export type Stored = typeof Stored.Type

/** The stored result as JSON text. */
export const StoredJson = Schema.parseJson(Stored)

/** The store could not be read or written; the handler does not run. */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>("@agent-harness/core/StoreUnavailable")(
  "StoreUnavailable",
  { key: Schema.String, reason: Schema.String, cause: Schema.optional(Schema.Defect) }
) {
  override get message() {
    return `idempotency store unavailable for '${this.key}': ${this.reason}`
  }
}

/** A stored result could not be decoded. It is reported, never silently run again. */
export class StoredResultCorrupt extends Schema.TaggedError<StoredResultCorrupt>(
  "@agent-harness/core/StoredResultCorrupt"
)("StoredResultCorrupt", { key: Schema.String, reason: Schema.String }) {
  override get message() {
    return `stored result for '${this.key}' is corrupt: ${this.reason}`
  }
}

/**
 * An earlier attempt with this key started and never finished (interrupted, or its
 * process died): whether its side effect happened is unknown, so it is not run again.
 */
export class OutcomeUnknown extends Schema.TaggedError<OutcomeUnknown>("@agent-harness/core/OutcomeUnknown")(
  "OutcomeUnknown",
  { key: Schema.String }
) {
  override get message() {
    return `an earlier attempt with key '${this.key}' did not finish; its outcome is unknown`
  }
}

/** Why a mutating call got no fresh or stored result. */
export type IdempotencyError = StoreUnavailable | StoredResultCorrupt | OutcomeUnknown

/** The outcome of {@link Service.once}: the result, and whether it was replayed. */
export interface Outcome {
  readonly result: Stored
  readonly replayed: boolean
}

/** An idempotency store. */
export interface Service {
  /**
   * Runs `execute` for `key` at most once: the first caller runs it and records the
   * result; later and concurrent callers get that result. An interrupted first attempt
   * leaves the key with an unknown outcome.
   */
  readonly once: (key: string, execute: Effect.Effect<Stored>) => Effect.Effect<Outcome, IdempotencyError>
}

/** The store used by a run's mutating tools. */
export class IdempotencyStore extends Context.Tag("@agent-harness/core/IdempotencyStore")<IdempotencyStore, Service>() {}

type Entry =
  | { readonly _tag: "Running"; readonly done: Deferred.Deferred<Outcome, IdempotencyError> }
  | { readonly _tag: "Done"; readonly result: Stored }
  | { readonly _tag: "Unknown" }

/**
 * The in-process part every store shares: concurrent callers of one key wait for the
 * first. `persist` reads and writes the durable record (nothing, for the memory store).
 */
export const makeWith = (persist: {
  /** The recorded state of a key, or `undefined` if none. */
  readonly read: (key: string) => Effect.Effect<"unknown" | Stored | undefined, IdempotencyError>
  /** Claims the key; `false` when another process holds it. */
  readonly claim: (key: string) => Effect.Effect<boolean, IdempotencyError>
  readonly complete: (key: string, result: Stored) => Effect.Effect<void, IdempotencyError>
  /** Records that an attempt started and was cut short: its outcome is unknown. */
  readonly markUnknown: (key: string) => Effect.Effect<void, IdempotencyError>
}): Effect.Effect<Service> =>
  Effect.sync(() => {
    const entries = new Map<string, Entry>()
    const once = (key: string, execute: Effect.Effect<Stored>): Effect.Effect<Outcome, IdempotencyError> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const entry = entries.get(key)
          if (entry?._tag === "Running") return yield* restore(Deferred.await(entry.done))
          if (entry?._tag === "Done") return { result: entry.result, replayed: true }
          if (entry?._tag === "Unknown") return yield* new OutcomeUnknown({ key })
          const done = yield* Deferred.make<Outcome, IdempotencyError>()
          entries.set(key, { _tag: "Running", done })
          const exit = yield* Effect.exit(
            Effect.gen(function*() {
              const recorded = yield* persist.read(key)
              if (recorded === "unknown") return yield* new OutcomeUnknown({ key })
              if (recorded !== undefined) return { result: recorded, replayed: true }
              if (!(yield* persist.claim(key))) return yield* new OutcomeUnknown({ key })
              const result = yield* restore(execute).pipe(
                Effect.onInterrupt(() => Effect.ignore(persist.markUnknown(key)))
              )
              yield* persist.complete(key, result)
              return { result, replayed: false }
            })
          )
          if (Exit.isSuccess(exit)) {
            entries.set(key, { _tag: "Done", result: exit.value.result })
            yield* Deferred.succeed(done, { result: exit.value.result, replayed: true })
          } else if (Exit.isInterrupted(exit)) {
            entries.set(key, { _tag: "Unknown" })
            yield* Deferred.fail(done, new OutcomeUnknown({ key }))
          } else {
            // A store error: nothing ran or nothing was recorded; a later call may try again.
            entries.delete(key)
            yield* Deferred.done(done, exit)
          }
          return yield* exit
        })
      )
    return { once }
  })

/** A store in memory: at most once within one process, for tests and single-process use. */
export const layerMemory: Layer.Layer<IdempotencyStore> = Layer.effect(
  IdempotencyStore,
  makeWith({
    read: () => Effect.succeed(undefined),
    claim: () => Effect.succeed(true),
    complete: () => Effect.void,
    markUnknown: () => Effect.void
  })
)
