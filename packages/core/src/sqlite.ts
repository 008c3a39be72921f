/**
 * `@agent-harness/core/sqlite`: durable idempotency stores on `@effect/sql` and SQLite.
 */
export * as IdempotencySql from "./IdempotencySql.js"
