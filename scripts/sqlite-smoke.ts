/**
 * The SQLite idempotency store outside vitest: a mutating call's result is stored, the
 * process "crashes" (nothing kept but the database file and the checkpoint taken before
 * the call ran), and the resumed run replays the result instead of running the handler.
 * .ci/run uses it on Node 24, where better-sqlite3 aborts vitest workers at teardown.
 *
 *   node --conditions=@agent-harness/source --import tsx scripts/sqlite-smoke.ts
 */
import { Agent, Authorization, Idempotency, Transcript } from "@agent-harness/core"
import { IdempotencySql } from "@agent-harness/core/sqlite"
import { ScriptedModel } from "@agent-harness/testing"
import { Tool, Toolkit } from "@effect/ai"
import { Console, Effect, Layer, Schema } from "effect"
import * as assert from "node:assert/strict"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const Book = Tool.make("book", { parameters: { amount: Schema.Number }, success: Schema.String, dependencies: [Idempotency.Key] })
  .annotate(Idempotency.Mutating, true)
const Kit = Toolkit.make(Book)
const S = ScriptedModel

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-harness-smoke-"))
const filename = path.join(dir, "store.db")

const program = Effect.gen(function*() {
  const booked: Array<string> = []
  const handlers = Kit.toLayer({ book: ({ amount }) => Effect.map(Idempotency.Key, (key) => (booked.push(key), `booked ${amount}`)) })
  const checkpoints: Array<string> = []
  yield* Agent.run({
    prompt: "book it",
    toolkit: Kit,
    runId: "run_smoke",
    onCheckpoint: (s) => Effect.sync(() => void checkpoints.push(Schema.encodeSync(Transcript.Json)(s.transcript)))
  }).pipe(
    Effect.provide(Layer.mergeAll(handlers, S.layer([S.calls(S.call("book", { amount: 5 })), S.text("ok")]), IdempotencySql.layerSqlite({ filename })))
  )
  assert.deepEqual(booked, ["run_smoke:call_1_1"])
  const resumed = yield* Agent.run({ toolkit: Kit, runId: "run_smoke", transcript: Schema.decodeSync(Transcript.Json)(checkpoints[0]!) }).pipe(
    Effect.provide(Layer.mergeAll(handlers, S.layer([S.text("ok again")]), IdempotencySql.layerSqlite({ filename })))
  )
  assert.deepEqual(booked, ["run_smoke:call_1_1"], "the handler ran again")
  const result = resumed.transcript.flatMap((m) => (m.role === "tool" ? m.content : []))[0]?.result as { data: string; metadata: { replayed?: boolean } }
  assert.equal(result.data, "booked 5")
  assert.equal(result.metadata.replayed, true)
  const error = yield* Effect.flip(Layer.build(IdempotencySql.layerSqlite({ filename: "/nonexistent/dir/x.db" })).pipe(Effect.scoped))
  assert.equal(error._tag, "StoreUnavailable")
  yield* Console.log(`sqlite smoke test passed on Node ${process.version}`)
}).pipe(
  Effect.provideService(Authorization.Principal, { userId: "smoke", permissions: [] }),
  Effect.ensuring(Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
)

Effect.runPromise(program).catch((error) => {
  console.error(error)
  process.exit(1)
})
