import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import * as ProviderServer from "./ProviderServer.js"
import { fixtures } from "./providers.js"

const post = (url: string, body: unknown) =>
  Effect.tryPromise(async () => {
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-test": "1" }, body: JSON.stringify(body) })
    return { status: response.status, type: response.headers.get("content-type"), text: await response.text() }
  })

describe("ProviderServer", () => {
  it.scoped("answers in queue order and records every request", () =>
    Effect.gen(function*() {
      const server = yield* ProviderServer.make([ProviderServer.Reply.json({ n: 1 })])
      server.enqueue(ProviderServer.Reply.text("two", { status: 503, headers: { "retry-after": "2" } }))
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/)
      const first = yield* post(`${server.url}/v1/a`, { q: 1 })
      const second = yield* post(`${server.url}/v1/b?x=1`, { q: 2 })
      assert.deepStrictEqual(first, { status: 200, type: "application/json", text: "{\"n\":1}" })
      assert.deepStrictEqual(second, { status: 503, type: "text/plain", text: "two" })
      assert.deepStrictEqual(server.requests.map((r) => [r.method, r.path, r.json, r.headers["x-test"]]), [
        ["POST", "/v1/a", { q: 1 }, "1"],
        ["POST", "/v1/b?x=1", { q: 2 }, "1"]
      ])
      assert.strictEqual(server.pending(), 0)
    }))

  it.scoped("a request past the script gets 418 with an explanation, and is recorded", () =>
    Effect.gen(function*() {
      const server = yield* ProviderServer.make()
      const response = yield* post(`${server.url}/v1/x`, {})
      assert.strictEqual(response.status, ProviderServer.unscriptedStatus)
      assert.include(response.text, "no scripted reply left for request #1")
      assert.strictEqual(server.requests.length, 1)
    }))

  it.scoped("data lines become SSE events, verbatim SSE stays verbatim", () =>
    Effect.gen(function*() {
      const server = yield* ProviderServer.make([
        ProviderServer.Reply.sse(ProviderServer.sseFromData(["{\"a\":1}", "{\"b\":2}"])),
        ProviderServer.Reply.sseFixture("anthropic/stream-thinking-then-text.sse")
      ])
      const first = yield* post(server.url, {})
      assert.deepStrictEqual(first, { status: 200, type: "text/event-stream", text: "data: {\"a\":1}\n\ndata: {\"b\":2}\n\n" })
      const second = yield* post(server.url, {})
      assert.strictEqual(second.text, ProviderServer.readFixture("anthropic/stream-thinking-then-text.sse"))
    }))

  it.scoped("a reset and a cut body fail the client; a delayed reply arrives late", () =>
    Effect.gen(function*() {
      const server = yield* ProviderServer.make([
        ProviderServer.Reply.reset(),
        ProviderServer.Reply.cut(ProviderServer.Reply.json({ long: "x".repeat(1000) }), 10),
        ProviderServer.Reply.json({ ok: true }, { delayMs: 150 })
      ])
      assert.isTrue(Either.isLeft(yield* Effect.either(post(server.url, {}))))
      assert.isTrue(Either.isLeft(yield* Effect.either(post(server.url, {}))))
      const start = Date.now()
      assert.strictEqual((yield* post(server.url, {})).text, "{\"ok\":true}")
      assert.isAtLeast(Date.now() - start, 140)
    }))

  it("the fixtures are found from the repository root", () => {
    const root = fileURLToPath(new URL("../../../../", import.meta.url))
    assert.isTrue(Fs.existsSync(Path.join(root, "package.json")))
    assert.strictEqual(ProviderServer.fixturesDir, Path.resolve(root, "../shared/fixtures/providers"))
  })
})

describe("fixture coverage", () => {
  it("every recorded payload in the folder is listed, and served by a wire test", () => {
    assert.deepStrictEqual(ProviderServer.listFixtures(), Object.keys(fixtures).sort())
    const dir = Path.dirname(fileURLToPath(import.meta.url))
    const sources = Fs.readdirSync(dir)
      .filter((file) => file.endsWith(".test.ts") && file !== "ProviderServer.test.ts")
      .map((file) => Fs.readFileSync(Path.join(dir, file), "utf8"))
      .join("\n")
    const unused = Object.keys(fixtures).filter((name) => !sources.includes(`"${name}"`))
    assert.deepStrictEqual(unused, [])
  })
})
