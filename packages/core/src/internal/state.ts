/** The mutable state of one run, owned by the run's fiber. */
import type { AiError, Prompt } from "@effect/ai"
import { Effect, Either } from "effect"
import type { RunSnapshot } from "../AgentError.js"
import * as ContextWindow from "../ContextWindow.js"
import * as Transcript from "../Transcript.js"
import * as Usage from "../Usage.js"
import { Checker } from "./check.js"

/** How a message is measured for the window; absent when the window has no limit. */
export type Measure = (message: Prompt.Message) => Effect.Effect<number, AiError.AiError>

/**
 * `check` of a transcript that only grows: each call checks what was appended since the
 * last one, so a run does not re-check its whole history before every request.
 */
export const makeIncrementalCheck = (): (transcript: Transcript.Transcript) => Either.Either<void, Transcript.TranscriptInvalid> => {
  const checker = new Checker()
  let failed: Transcript.TranscriptInvalid | undefined
  return (transcript) => {
    if (failed !== undefined) return Either.left(failed)
    const problem = checker.feed(transcript, checker.checked) ?? checker.finish(transcript.length)
    if (problem === undefined) return Either.void
    failed = new Transcript.TranscriptInvalid(problem)
    return Either.left(failed)
  }
}

export class RunState {
  steps = 0
  toolCalls = 0
  usage: Usage.Usage = Usage.empty
  /** The compaction summary standing in for the history before `coversUpTo`. */
  summary: { readonly message: Prompt.Message; readonly size: number; readonly coversUpTo: number } | undefined
  readonly callIds: Set<string>
  readonly messages: Array<Prompt.Message> = []
  readonly index = ContextWindow.makeIndex()
  /** Checks the whole transcript, looking only at what was appended since the last time. */
  readonly checkTranscript = makeIncrementalCheck()

  constructor(readonly runId: string, readonly measure: Measure | undefined) {
    this.callIds = new Set()
  }

  /**
   * Appends a message, measuring it once for the window. If measuring fails the message
   * is not recorded, unless `always` (tool results, which must follow their turn): then
   * it is recorded with its character size, and the failure is still returned.
   */
  record(message: Prompt.Message, always = false): Effect.Effect<void, AiError.AiError> {
    return Effect.suspend(() => {
      if (this.measure === undefined) {
        this.messages.push(message)
        return Effect.void
      }
      return this.measure(message).pipe(
        Effect.tapError(() =>
          Effect.sync(() => {
            if (!always) return
            this.messages.push(message)
            ContextWindow.append(this.index, message, ContextWindow.charSize(message))
          })
        ),
        Effect.map((size) => {
          this.messages.push(message)
          ContextWindow.append(this.index, message, size)
        })
      )
    })
  }

  recordAll(messages: ReadonlyArray<Prompt.Message>): Effect.Effect<void, AiError.AiError> {
    for (const id of Transcript.callIds(messages)) this.callIds.add(id)
    if (this.measure === undefined) {
      // Nothing to measure: a continued transcript of thousands of messages need not be
      // taken in one effect per message.
      return Effect.sync(() => {
        for (const message of messages) this.messages.push(message)
      })
    }
    return Effect.forEach(messages, (message) => this.record(message), { discard: true })
  }

  /**
   * The run so far. The transcript is copied only when read: `messages` only ever grows,
   * so its first `length` messages are the transcript as of this call. Snapshots are
   * taken several times a step (checkpoints, errors) and most are never read.
   */
  snapshot(): RunSnapshot {
    const messages = this.messages
    const length = messages.length
    let transcript: ReadonlyArray<Prompt.Message> | undefined
    return {
      runId: this.runId,
      get transcript() {
        return (transcript ??= messages.slice(0, length))
      },
      steps: this.steps,
      toolCalls: this.toolCalls,
      usage: this.usage
    }
  }
}
