/** The command line as a user meets it: arguments in, lines and an exit code out. */
import { Cli, Render } from "@agent-harness/cli"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer } from "effect"
import * as ProviderServer from "./wire/ProviderServer.js"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"

const repoRoot = path.resolve(import.meta.dirname, "../../..")

/** Runs the command in-process with `env` as its environment; returns the exit and what it printed. */
const invoke = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const memory = yield* Render.Output.memory(false)
    const exit = yield* Cli.cli(["node", "agent-harness", ...args]).pipe(
      Effect.provide(Layer.merge(NodeContext.layer, Layer.succeed(Render.Output, memory.service))),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))),
      Effect.exit
    )
    return { exit, text: memory.text() }
  })

const failureMessage = (exit: Exit.Exit<unknown, unknown>) => {
  assert(Exit.isFailure(exit) && exit.cause._tag === "Fail")
  return (exit.cause.error as { readonly message: string }).message
}

const tempWorkspace = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "agent-harness-cli-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

const fixture = (name: string) => JSON.parse(ProviderServer.readFixture(`openai/${name}`)) as Record<string, unknown>

/** The input items of the `index`-th request the server received. */
const inputOf = (server: ProviderServer.ProviderServer, index: number) =>
  (server.requests[index]?.json as { readonly input: ReadonlyArray<{ readonly type?: string; readonly call_id?: string }> }).input

describe("agent-harness run", () => {
  it.scoped("a workspace that does not exist: one line, before anything runs", () =>
    Effect.gen(function*() {
      const { exit, text } = yield* invoke(["run", "do it", "--workspace", "/no/such/dir"], { OPENAI_API_KEY: "k" })
      assert.strictEqual(failureMessage(exit), "workspace '/no/such/dir' does not exist or is not a directory")
      assert.strictEqual(text, "")
    }))

  it.scoped("an unknown provider: one line naming the known ones", () =>
    Effect.gen(function*() {
      const dir = yield* tempWorkspace
      const { exit } = yield* invoke(["run", "do it", "--workspace", dir, "--provider", "mistral"])
      assert.strictEqual(failureMessage(exit), "unknown provider 'mistral'; use one of: openai, anthropic")
    }))

  for (const [provider, variable] of [["openai", "OPENAI_API_KEY"], ["anthropic", "ANTHROPIC_API_KEY"]] as const) {
    it.scoped(`a missing ${variable}: one line saying which`, () =>
      Effect.gen(function*() {
        const dir = yield* tempWorkspace
        const { exit, text } = yield* invoke(["run", "do it", "--workspace", dir, "--provider", provider])
        assert.strictEqual(failureMessage(exit), `${variable} is not set; export it to use --provider ${provider}`)
        assert.strictEqual(text, "")
      }))
  }

  it.scoped("an OPENAI_BASE_URL that is not a URL: one line", () =>
    Effect.gen(function*() {
      const dir = yield* tempWorkspace
      const { exit } = yield* invoke(["run", "do it", "--workspace", dir], { OPENAI_API_KEY: "k", OPENAI_BASE_URL: "localhost:8080" })
      assert.strictEqual(failureMessage(exit), "OPENAI_BASE_URL is not an http(s) URL: 'localhost:8080'")
    }))

  it.scoped("bad numbers are refused", () =>
    Effect.gen(function*() {
      const dir = yield* tempWorkspace
      const { exit } = yield* invoke(["run", "do it", "--workspace", dir, "--max-steps", "0"], { OPENAI_API_KEY: "k" })
      assert.strictEqual(failureMessage(exit), "--max-steps must be a positive integer, got 0")
    }))

  it.scopedLive("runs against an OpenAI-compatible server from OPENAI_BASE_URL, with live lines and a summary", () =>
    Effect.gen(function*() {
      const dir = yield* tempWorkspace
      fs.writeFileSync(path.join(dir, "notes.txt"), "hello")
      const call = fixture("response-function-call-single.json")
      const answer = fixture("response-final-message-after-tool-call-cached-tokens.json")
      const server = yield* ProviderServer.make([
        ProviderServer.Reply.json({ ...call, output: [{ ...(call["output"] as Array<object>)[0], name: "list_dir", arguments: "{\"path\":\".\"}" }] }),
        ProviderServer.Reply.json(answer)
      ])
      const { exit, text } = yield* invoke(["run", "what is in here?", "--workspace", dir, "--model", "gpt-test"], {
        OPENAI_API_KEY: "sk-test",
        OPENAI_BASE_URL: `${server.url}/v1`
      })
      assert(Exit.isSuccess(exit), text)
      assert.strictEqual(server.requests.length, 2)
      assert.strictEqual(server.requests[0]!.path, "/v1/responses")
      // The second request answers the call by its id.
      const output = inputOf(server, 1).find((item) => item.type === "function_call_output")
      assert.strictEqual(output?.call_id, "call_YfwRsW8sUxDKipwyhWTzOXCA")
      assert.match(text, /step 1 {2}model +tool-calls/)
      assert.match(text, / {2}✓ list_dir +success/)
      assert.include(text, "tokens     2127 in, 142 out, 2048 cached")
      assert.include(text, "outcome    success")
    }), { timeout: 30_000 })

  it.scopedLive("a provider that keeps failing ends the run with its reason, and exit code 1", () =>
    Effect.gen(function*() {
      const dir = yield* tempWorkspace
      const down = ProviderServer.Reply.json({ error: { message: "down", type: "server_error", param: null, code: null } }, { status: 503 })
      const server = yield* ProviderServer.make([down, down, down, down])
      const { exit, text } = yield* invoke(["run", "x", "--workspace", dir, "--timeout", "1"], {
        OPENAI_API_KEY: "sk-test",
        OPENAI_BASE_URL: `${server.url}/v1`
      })
      assert(Exit.isFailure(exit) && exit.cause._tag === "Fail")
      assert.strictEqual((exit.cause.error as { _tag: string })._tag, "RunFailed")
      // Retried once (500 ms), then no time was left before the 1 s deadline.
      assert.match(text, /step 1 {2}model +unavailable +retry 1 in \d+ ms/)
      assert.include(text, "outcome    ModelError")
      assert.include(text, "(unavailable)")
      assert.include(text, "before the deadline")
    }), { timeout: 30_000 })
})

/** An OTLP/HTTP receiver on 127.0.0.1 keeping the paths and bodies it is sent. */
const otlpReceiver = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly received: Array<{ readonly path: string; readonly body: string }>; readonly server: http.Server }>((resume) => {
    const received: Array<{ path: string; body: string }> = []
    const server = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        received.push({ path: req.url ?? "", body: Buffer.concat(chunks).toString("utf8") })
        res.writeHead(200, { "content-type": "application/json" })
        res.end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server })))
  }),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

describe("agent-harness demo", () => {
  it.scopedLive("--otlp exports the run's trace to the receiver", () =>
    Effect.gen(function*() {
      const receiver = yield* otlpReceiver
      const { exit, text } = yield* invoke(["demo", "invoice", "--otlp", receiver.url])
      assert(Exit.isSuccess(exit), text)
      const traces = receiver.received.filter((r) => r.path === "/v1/traces").map((r) => r.body).join("\n")
      assert.include(traces, "invoke_agent invoice-agent")
      assert.include(traces, "execute_tool compute_tax")
    }), { timeout: 30_000 })

  it.scoped("--otlp with a URL that is not one: one line", () =>
    Effect.gen(function*() {
      const { exit, text } = yield* invoke(["demo", "invoice", "--otlp", "not a url"])
      assert.include(failureMessage(exit), "not a url")
      assert.strictEqual(text, "")
    }))
})

describe("the agent-harness executable", () => {
  const bin = (args: ReadonlyArray<string>) =>
    Effect.async<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resume) => {
      execFile(
        process.execPath,
        ["--conditions=@agent-harness/source", "--import", "tsx", path.join(repoRoot, "packages/cli/src/bin.ts"), ...args],
        { cwd: repoRoot, env: { PATH: process.env["PATH"] ?? "" }, timeout: 60_000 },
        (error, stdout, stderr) => resume(Effect.succeed({ code: error === null ? 0 : (error.code as number | null) ?? null, stdout, stderr }))
      )
    })

  it.effect("user errors are one line on stderr and exit code 2, never a stack trace", () =>
    Effect.gen(function*() {
      const r = yield* bin(["run", "x", "--workspace", "/no/such/dir"])
      assert.strictEqual(r.code, 2)
      assert.strictEqual(r.stderr, "agent-harness: workspace '/no/such/dir' does not exist or is not a directory\n")
      assert.strictEqual(r.stdout, "")
    }), { timeout: 60_000 })

  it.effect("the demos run offline from the command line", () =>
    Effect.gen(function*() {
      const r = yield* bin(["demo"])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.include(r.stdout, "== demo invoice, on the offline model")
      assert.include(r.stdout, "== demo coding, on the offline model")
      assert.strictEqual(r.stdout.match(/outcome {4}success/g)?.length, 2)
    }), { timeout: 60_000 })
})
