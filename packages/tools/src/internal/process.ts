/**
 * Runs one process on `@effect/platform`'s `Command` and fills in what it lacks for an
 * agent: both output streams drained concurrently into bounded buffers, a deadline, and
 * a termination that cannot hang. The platform spawns each command in its own process
 * group (detached) and its `kill` signals the whole group, which is what we need; but
 * its `kill` then waits for the exit with no bound, and so does its scope finalizer,
 * after SIGTERM only. Here SIGTERM gets a grace period, then the group gets SIGKILL.
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type { PlatformError } from "@effect/platform/Error"
import { Clock, Duration, Effect, Either, Fiber, Option, Ref, Stream } from "effect"

/** What to run; every path and name has been checked by the caller. */
export interface Spec {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  readonly timeout: Duration.Duration
  readonly maxOutputBytes: number
  readonly grace: Duration.Duration
}

/** One output stream, bounded. */
export interface Captured {
  readonly text: string
  readonly bytesSeen: number
  readonly bytesKept: number
  readonly truncated: boolean
}

/** How the process ended and what it wrote. */
export interface Outcome {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  readonly durationMs: number
  readonly stdout: Captured
  readonly stderr: Captured
}

/** Keeps the first `max` bytes and counts the rest, so a chatty process costs no memory. */
class Capture {
  private readonly chunks: Array<Uint8Array> = []
  private seen = 0
  private kept = 0
  constructor(private readonly max: number) {}

  add(chunk: Uint8Array) {
    this.seen += chunk.length
    const room = this.max - this.kept
    if (room <= 0) return
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room)
    // Copy: the stream may reuse the chunk's buffer.
    this.chunks.push(Uint8Array.from(part))
    this.kept += part.length
  }

  result(): Captured {
    const bytes = Buffer.concat(this.chunks, this.kept)
    return {
      text: bytes.toString("utf8"),
      bytesSeen: this.seen,
      bytesKept: this.kept,
      truncated: this.seen > this.kept
    }
  }
}

const drain = (stream: Stream.Stream<Uint8Array, PlatformError>, capture: Capture) =>
  Stream.runForEach(stream, (chunk) => Effect.sync(() => capture.add(chunk)))

// The platform reports death by a signal only as a failure of `exitCode` whose message
// names the signal ("Process interrupted due to receipt of signal: SIGKILL").
const signalOf = (error: PlatformError): string => /signal:\s*(SIG[A-Z0-9]+)/.exec(error.message)?.[1] ?? "UNKNOWN"

// These also run as finalizers, which are uninterruptible: the wait for the exit is made
// interruptible again, or the timeout could never cut it short.
const signalAndWait = (child: CommandExecutor.Process, signal: "SIGTERM" | "SIGKILL", wait: Duration.Duration) =>
  Effect.interruptible(child.kill(signal)).pipe(Effect.timeout(wait), Effect.ignore)

/** SIGKILL to the group; an empty group (ESRCH) is not an error. */
const killGroup = (child: CommandExecutor.Process) => signalAndWait(child, "SIGKILL", Duration.seconds(2))

/**
 * SIGTERM to the group, up to `grace` for the leader to exit, then SIGKILL to the group
 * whether or not it did: a child that ignores SIGTERM, or one the leader left behind,
 * must not outlive the call.
 */
const terminate = (child: CommandExecutor.Process, grace: Duration.Duration) =>
  Effect.zipRight(signalAndWait(child, "SIGTERM", grace), killGroup(child))

/** Runs `spec` to its exit or its deadline; the process group never outlives the returned effect. */
export const run = (spec: Spec): Effect.Effect<Outcome, PlatformError, CommandExecutor.CommandExecutor> =>
  Effect.scoped(Effect.gen(function*() {
    const command = Command.make(spec.command, ...spec.args).pipe(
      Command.workingDirectory(spec.cwd),
      Command.env(spec.env, { extendEnv: false }),
      // An empty stream closes stdin, so a process waiting for input sees EOF, not the harness's terminal.
      Command.stdin(Stream.empty)
    )
    const started = yield* Clock.currentTimeMillis
    const child = yield* Command.start(command)
    const settled = yield* Ref.make(false)
    // Finalizers run last in, first out: this one runs before the platform's, which
    // would otherwise send SIGTERM and wait forever for a child that ignores it. It is
    // what kills the group when the caller is interrupted (a run's deadline). Once the
    // group has been dealt with it does nothing, so a reused process group id is never
    // signalled.
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Ref.get(settled), (done) => (done ? Effect.void : terminate(child, spec.grace)))
    )
    const stdout = new Capture(spec.maxOutputBytes)
    const stderr = new Capture(spec.maxOutputBytes)
    const readers = yield* Effect.fork(
      Effect.all([drain(child.stdout, stdout), drain(child.stderr, stderr)], { concurrency: 2, discard: true })
    )
    const exited = yield* Effect.timeoutOption(Effect.either(child.exitCode), spec.timeout)
    const timedOut = Option.isNone(exited)
    // Also after a normal exit: whatever the leader left running in its group goes too.
    yield* timedOut ? terminate(child, spec.grace) : killGroup(child)
    yield* Ref.set(settled, true)
    const exit = Option.isSome(exited)
      ? Option.some(exited.value)
      : yield* Effect.timeoutOption(Effect.either(child.exitCode), Duration.seconds(2))
    // With the group gone the pipes reach end of file, unless a process that left the
    // group (setsid) holds them: wait only briefly for the last bytes.
    yield* Effect.ignore(Effect.timeout(Fiber.join(readers), spec.grace))
    yield* Fiber.interrupt(readers)
    const ended = yield* Clock.currentTimeMillis
    return {
      exitCode: Option.match(exit, { onNone: () => null, onSome: Either.match({ onLeft: () => null, onRight: (code) => code }) }),
      signal: Option.match(exit, { onNone: () => null, onSome: Either.match({ onLeft: signalOf, onRight: () => null }) }),
      timedOut,
      durationMs: ended - started,
      stdout: stdout.result(),
      stderr: stderr.result()
    }
  }))
