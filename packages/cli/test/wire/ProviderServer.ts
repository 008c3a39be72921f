/**
 * A scripted HTTP server on 127.0.0.1 that stands in for a model provider in tests.
 *
 * Each request takes the next reply from a queue (a JSON body, a raw body, an SSE stream,
 * or a fault) and is recorded with its parsed JSON body, so a test can point a provider
 * client at `server.url` and then assert what the client sent.
 *
 * @example
 * ```ts
 * it.scoped("answers", () =>
 *   Effect.gen(function*() {
 *     const server = yield* ProviderServer.make([Reply.fixture("openai/response-function-call-single.json")])
 *     // OpenAiClient.layer({ apiUrl: `${server.url}/v1`, ... })
 *     // ... run, then: server.requests[0]?.json, server.pending()
 *   }))
 * ```
 */
import { Effect, type Scope } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/** What the server does with one request. */
export type Reply =
  | {
    /** A complete response: `body` is written verbatim, in one piece. */
    readonly _tag: "Body"
    readonly status: number
    readonly headers: Readonly<Record<string, string>>
    readonly body: string
    /** Milliseconds to wait before answering. */
    readonly delayMs?: number | undefined
  }
  | {
    /**
     * Sends the status, the headers and the first `bytes` bytes of `body` (announcing its
     * full length), then destroys the socket: a response cut off midway.
     */
    readonly _tag: "Cut"
    readonly status: number
    readonly headers: Readonly<Record<string, string>>
    readonly body: string
    readonly bytes: number
  }
  | {
    /** Destroys the connection without sending a byte: a connection reset. */
    readonly _tag: "Reset"
  }

/** Options shared by the reply constructors. */
export interface ReplyOptions {
  /** Default 200. */
  readonly status?: number | undefined
  /** Added to (and overriding) the reply's content type. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly delayMs?: number | undefined
}

const body = (text: string, contentType: string, options: ReplyOptions = {}): Reply => ({
  _tag: "Body",
  status: options.status ?? 200,
  headers: { "content-type": contentType, ...options.headers },
  body: text,
  delayMs: options.delayMs
})

/** Where the recorded provider payloads live: `../shared/fixtures/providers` from the repository root. */
export const fixturesDir: string = Path.resolve(
  fileURLToPath(new URL("../../../../", import.meta.url)),
  "../shared/fixtures/providers"
)

/**
 * The text of a fixture, by its path under {@link fixturesDir} (`"openai/x.json"`).
 * Throws with the expected location when the fixture folder is missing, so the test
 * fails saying so instead of with a bare ENOENT.
 */
export const readFixture = (name: string): string => {
  requireFixtures()
  return Fs.readFileSync(Path.join(fixturesDir, name), "utf8")
}

const requireFixtures = () => {
  if (!Fs.existsSync(fixturesDir)) {
    throw new Error(
      `provider fixtures not found at ${fixturesDir}: they are expected in ../shared/fixtures/providers next to the repository`
    )
  }
}

/** Every fixture file (`"openai/x.json"`, ...), documentation left out. */
export const listFixtures = (): ReadonlyArray<string> => {
  requireFixtures()
  return Fs.readdirSync(fixturesDir, { recursive: true, encoding: "utf8" })
    .map((entry) => entry.split(Path.sep).join("/"))
    .filter((entry) => /\.(json|sse|jsonl)$/.test(entry))
    .sort()
}

/**
 * Turns data-only SSE payloads (one JSON document a line, as in `*.data.jsonl`) into an
 * SSE body: `data: <line>\n\n` each.
 */
export const sseFromData = (lines: ReadonlyArray<string>): string => lines.map((line) => `data: ${line}\n\n`).join("")

/** The non-empty lines of a `*.data.jsonl` fixture. */
export const dataLines = (name: string): ReadonlyArray<string> =>
  readFixture(name).split("\n").filter((line) => line.trim().length > 0)

/** Reply constructors. */
export const Reply = {
  /** `value` as a JSON body. */
  json: (value: unknown, options?: ReplyOptions): Reply => body(JSON.stringify(value), "application/json", options),
  /** A body sent as given (`content-type` defaults to text/plain), e.g. a non-JSON error page. */
  text: (text: string, options?: ReplyOptions): Reply => body(text, "text/plain", options),
  /** A JSON fixture, sent byte for byte as stored. */
  fixture: (name: string, options?: ReplyOptions): Reply => body(readFixture(name), "application/json", options),
  /** An SSE body sent verbatim (a `*.sse` fixture, or the output of {@link sseFromData}). */
  sse: (text: string, options?: ReplyOptions): Reply => body(text, "text/event-stream", options),
  /** A `*.sse` fixture, verbatim. */
  sseFixture: (name: string, options?: ReplyOptions): Reply => body(readFixture(name), "text/event-stream", options),
  /** A `*.data.jsonl` fixture, each line sent as `data: <line>\n\n`. */
  dataFixture: (name: string, options?: ReplyOptions): Reply =>
    body(sseFromData(dataLines(name)), "text/event-stream", options),
  /** See the `Cut` case of {@link Reply}. */
  cut: (reply: Reply, bytes: number): Reply =>
    reply._tag === "Body" ? { _tag: "Cut", status: reply.status, headers: reply.headers, body: reply.body, bytes } : reply,
  /** See the `Reset` case of {@link Reply}. */
  reset: (): Reply => ({ _tag: "Reset" })
} as const

/** One request as the server received it. */
export interface RecordedRequest {
  readonly method: string
  /** Path and query, e.g. `/v1/responses`. */
  readonly path: string
  /** Lower-cased names. */
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** The body parsed as JSON; `undefined` when it is not JSON. */
  readonly json: unknown
}

/** A running server; it is closed when the scope that made it closes. */
export interface ProviderServer {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string
  /** Every request so far, in arrival order (also those that found the queue empty). */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Appends replies to the queue. */
  readonly enqueue: (...replies: ReadonlyArray<Reply>) => void
  /** Replies not yet used. */
  readonly pending: () => number
}

/**
 * The status sent when a request finds the queue empty: a 4xx, so that a client with
 * retries does not loop, and one no provider uses, so that a test can tell it apart.
 */
export const unscriptedStatus = 418

const sendBody = (response: Http.ServerResponse, reply: Extract<Reply, { _tag: "Body" }>) => {
  response.writeHead(reply.status, { ...reply.headers, "content-length": Buffer.byteLength(reply.body) })
  response.end(reply.body)
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

/** Starts a server on 127.0.0.1 (a free port) with `replies` queued. */
export const make = (replies: ReadonlyArray<Reply> = []): Effect.Effect<ProviderServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue = [...replies]
    const requests: Array<RecordedRequest> = []
    const sockets = new Set<Net.Socket>()
    const server = Http.createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        const headers: Record<string, string> = {}
        for (const [name, value] of Object.entries(request.headers)) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value
        }
        requests.push({ method: request.method ?? "", path: request.url ?? "", headers, body: text, json: parseJson(text) })
        const reply = queue.shift()
        if (reply === undefined) {
          const message = `ProviderServer: no scripted reply left for request #${requests.length} (${request.method} ${request.url})`
          sendBody(response, {
            _tag: "Body",
            status: unscriptedStatus,
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ error: { type: "unscripted", message } })
          })
          return
        }
        switch (reply._tag) {
          case "Reset":
            request.socket.destroy()
            return
          case "Cut": {
            response.writeHead(reply.status, { ...reply.headers, "content-length": Buffer.byteLength(reply.body) })
            response.write(Buffer.from(reply.body).subarray(0, reply.bytes), () => request.socket.destroy())
            return
          }
          case "Body":
            if (reply.delayMs === undefined) sendBody(response, reply)
            else setTimeout(() => sendBody(response, reply), reply.delayMs)
        }
      })
    })
    server.on("connection", (socket) => {
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    const port = yield* Effect.acquireRelease(
      Effect.async<number>((resume) => {
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : 0))
        })
      }),
      () =>
        Effect.async<void>((resume) => {
          for (const socket of sockets) socket.destroy()
          server.close(() => resume(Effect.void))
        })
    )
    return {
      url: `http://127.0.0.1:${port}`,
      requests,
      enqueue: (...more) => {
        queue.push(...more)
      },
      pending: () => queue.length
    }
  })
