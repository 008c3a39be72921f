/**
 * The SQLite idempotency store. On Node 24 these tests run as a script instead
 * (scripts/sqlite-smoke.ts, from .ci/run): better-sqlite3 12 aborts a vitest worker there
 * when it tears down (a prepared statement's destructor runs after Node's environment is
 * gone), which a plain process does not do.
 */
import { Agent, Authorization, Transcript } from "@agent-harness/core"
import { IdempotencySql } from "@agent-harness/core/sqlite"
import { SqlClient } from "@effect/sql"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Ref, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { billing, bookTwice, handlers, Kit, makeWorld, run, S } from "./dispatchFixtures.js"
import { toolResults } from "./fixtures.js"

describe("idempotency on SQLite", () => {

  const tempDb = Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "agent-harness-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  ).pipe(Effect.map((dir) => path.join(dir, "idempotency.db")))

  it.scoped("a run resumed after a crash replays the stored result instead of running the handler again", () =>
    Effect.gen(function*() {
      const filename = yield* tempDb
      // First process: the model asks for a booking; the handler runs and its result is
      // stored; then the process "crashes": all that survives is the database file and
      // the checkpoint taken before the call ran.
      const saved = yield* Effect.gen(function*() {
        const world = yield* makeWorld()
        const checkpoints: Array<string> = []
        yield* run({
          onCheckpoint: (s) => Effect.sync(() => void checkpoints.push(Schema.encodeSync(Transcript.Json)(s.transcript)))
        }).pipe(
          Effect.provide(handlers(world)),
          Effect.provide(S.layer([S.calls(S.call("book", { amount: 99 })), S.text("booked")])),
          Effect.provide(IdempotencySql.layerSqlite({ filename }))
        )
        assert.deepStrictEqual(yield* Ref.get(world.booked), ["run_1:call_1_1"])
        return checkpoints[0]!
      })
      // Second process: nothing in memory, the same file.
      const world = yield* makeWorld()
      const transcript = Schema.decodeSync(Transcript.Json)(saved)
      const resumed = yield* Agent.run({ toolkit: Kit, runId: "run_1", transcript }).pipe(
        Effect.provide(handlers(world)),
        Effect.provide(S.layer([S.text("booked, as before")])),
        Effect.provide(IdempotencySql.layerSqlite({ filename }))
      )
      assert.deepStrictEqual(yield* Ref.get(world.booked), [])
      const [result] = toolResults(resumed.transcript)
      assert.strictEqual(result?.data, "booked 99")
      assert.strictEqual((result?.metadata as { replayed?: boolean }).replayed, true)
      assert.strictEqual(resumed.answer, "booked, as before")
    }).pipe(Effect.provideService(Authorization.Principal, billing)))

  it.scoped("a corrupt stored result is reported, never silently run again", () =>
    Effect.gen(function*() {
      const filename = yield* tempDb
      yield* Effect.gen(function*() {
        yield* IdempotencySql.make()
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO agent_harness_idempotency (key, state, result, updated_at) VALUES ('run_1:same', 'done', '{"status": 42', 0)`
      }).pipe(Effect.provide(SqliteClient.layer({ filename })), Effect.orDie)
      const world = yield* makeWorld()
      const result = yield* run().pipe(
        Effect.provide(handlers(world)),
        Effect.provide(S.layer(bookTwice)),
        Effect.provide(IdempotencySql.layerSqlite({ filename }))
      )
      const [envelope] = toolResults(result.transcript)
      assert.strictEqual(envelope?.status, "fatal_error")
      assert.strictEqual((envelope?.error as { code: string }).code, "STORED_RESULT_CORRUPT")
      assert.deepStrictEqual(yield* Ref.get(world.booked), [])
    }).pipe(Effect.provideService(Authorization.Principal, billing)))

  it.effect("a store file that cannot be opened fails at start-up with a clear error", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(IdempotencySql.layerSqlite({ filename: "/nonexistent/dir/store.db" })).pipe(Effect.scoped))
      assert.strictEqual(error._tag, "StoreUnavailable")
      assert.include(error.message, "cannot open SQLite database '/nonexistent/dir/store.db'")
    }))

  it.scoped("the layer creates its table in a new file", () =>
    Effect.gen(function*() {
      const filename = yield* tempDb
      yield* Layer.build(IdempotencySql.layerSqlite({ filename })).pipe(Effect.scoped)
      const rows = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`
      }).pipe(Effect.provide(SqliteClient.layer({ filename })), Effect.orDie)
      assert.deepStrictEqual(rows.map((r) => r.name), ["agent_harness_idempotency"])
    }))
})

