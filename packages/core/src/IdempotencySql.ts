/**
 * Durable idempotency stores: on any `@effect/sql` client ({@link layerSql}), and on a
 * SQLite file ({@link layerSqlite}). Imported from `@agent-harness/core/sqlite`, so that
 * only users of it load the SQL packages.
 *
 * One row per key: `running` while the first attempt runs, `done` with the result as
 * JSON, or `unknown` when an attempt was cut short. A key claimed by a process that died
 * stays `running`; after `staleAfter` it is reported as an unknown outcome, never re-run.
 *
 * @example
 * ```ts
 * import { IdempotencySql } from "@agent-harness/core/sqlite"
 *
 * const Store = IdempotencySql.layerSqlite({ filename: "/var/lib/agent/idempotency.db" })
 * ```
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Cause, Clock, Duration, Effect, Either, Layer, Schema } from "effect"
import {
  IdempotencyStore,
  makeWith,
  type Service,
  type Stored,
  StoredJson,
  StoredResultCorrupt,
  StoreUnavailable
} from "./Idempotency.js"

/** Options of the SQL stores. */
export interface Options {
  /** Table name (default `agent_harness_idempotency`); letters, digits and `_`. */
  readonly table?: string | undefined
  /** How long a `running` row of another process is waited for (default 30 seconds). */
  readonly staleAfter?: Duration.DurationInput | undefined
}

interface Row {
  readonly state: string
  readonly result: string | null
  readonly updated_at: number
}

const tableName = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

/** A store on the `SqlClient` in the environment; creates its table if needed. */
export const make = (options: Options = {}): Effect.Effect<Service, StoreUnavailable, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const table = options.table ?? "agent_harness_idempotency"
    if (!tableName.test(table)) {
      return yield* new StoreUnavailable({ key: "", reason: `invalid table name '${table}'` })
    }
    const staleAfter = Duration.toMillis(options.staleAfter ?? "30 seconds")
    const unavailable = (key: string) => (cause: SqlError.SqlError) =>
      new StoreUnavailable({ key, reason: cause.message, cause })
    yield* sql.unsafe(
      `CREATE TABLE IF NOT EXISTS ${table} (key TEXT PRIMARY KEY, state TEXT NOT NULL, result TEXT, updated_at INTEGER NOT NULL)`
    ).pipe(Effect.mapError(unavailable("")))
    const decode = Schema.decodeUnknownEither(StoredJson)

    const select = (key: string) =>
      Effect.mapError(
        sql.unsafe<Row>(`SELECT state, result, updated_at FROM ${table} WHERE key = ?`, [key]),
        unavailable(key)
      )
    const toStored = (key: string, row: Row): Effect.Effect<Stored, StoredResultCorrupt> => {
      const decoded = decode(row.result)
      return Either.isRight(decoded)
        ? Effect.succeed(decoded.right)
        : Effect.fail(new StoredResultCorrupt({ key, reason: "the stored JSON is not a tool result" }))
    }

    return yield* makeWith({
      read: (key) =>
        Effect.gen(function*() {
          const [row] = yield* select(key)
          if (row === undefined) return undefined
          if (row.state === "done") return yield* toStored(key, row)
          if (row.state === "unknown") return "unknown"
          // Claimed by another process: wait for it, but not for ever.
          const now = yield* Clock.currentTimeMillis
          if (now - row.updated_at > staleAfter) return "unknown"
          yield* Effect.sleep(Duration.millis(Math.min(100, staleAfter)))
          const [again] = yield* select(key)
          if (again?.state === "done") return yield* toStored(key, again)
          return "unknown"
        }),
      claim: (key) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          sql.unsafe(`INSERT OR IGNORE INTO ${table} (key, state, updated_at) VALUES (?, 'running', ?)`, [key, now]).raw.pipe(
            Effect.map((result) => (result as { readonly changes?: number }).changes !== 0),
            Effect.mapError(unavailable(key))
          )),
      complete: (key, result) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.mapError(
            sql.unsafe(`UPDATE ${table} SET state = 'done', result = ?, updated_at = ? WHERE key = ?`, [
              Schema.encodeSync(StoredJson)(result),
              now,
              key
            ]),
            unavailable(key)
          )),
      markUnknown: (key) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.mapError(
            sql.unsafe(`UPDATE ${table} SET state = 'unknown', updated_at = ? WHERE key = ?`, [now, key]),
            unavailable(key)
          ))
    })
  })

/** {@link make} as a layer. */
export const layerSql = (options: Options = {}): Layer.Layer<IdempotencyStore, StoreUnavailable, SqlClient.SqlClient> =>
  Layer.effect(IdempotencyStore, make(options))

/**
 * A store on a SQLite file, created and migrated when the layer is built. A file that
 * cannot be opened fails the layer with `StoreUnavailable`, before any run starts.
 */
export const layerSqlite = (
  options: Options & { readonly filename: string }
): Layer.Layer<IdempotencyStore, StoreUnavailable> =>
  layerSql(options).pipe(
    Layer.provide(SqliteClient.layer({ filename: options.filename })),
    Layer.catchAllCause((cause) =>
      Layer.fail(
        Cause.failureOption(cause).pipe((failure) =>
          failure._tag === "Some" && failure.value instanceof StoreUnavailable
            ? failure.value
            : new StoreUnavailable({
              key: "",
              reason: `cannot open SQLite database '${options.filename}': ${Cause.squash(cause) instanceof Error ? (Cause.squash(cause) as Error).message : Cause.pretty(cause)}`
            })
        )
      )
    )
  )
