/** The mutable state of one run, owned by the run's fiber. */
import type { AiError, Prompt } from "@effect/ai"
import { Effect } from "effect"
import type { RunSnapshot } from "../AgentError.js"
import * as ContextWindow from "../ContextWindow.js"
import * as Transcript from "../Transcript.js"
import * as Usage from "../Usage.js"

/** How a message is measured for the window; absent when the window has no limit. */
export type Measure = (message: Prompt.Message) => Effect.Effect<number, AiError.AiError>

export class RunState {
  steps = 0
  toolCalls = 0
  usage: Usage.Usage = Usage.empty
  /** The compaction summary standing in for the history before `coversUpTo`. */
  summary: { readonly message: Prompt.Message; readonly size: number; readonly coversUpTo: number } | undefined
  readonly callIds: Set<string>
  readonly messages: Array<Prompt.Message> = []
  readonly index = ContextWindow.makeIndex()

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
    return Effect.forEach(messages, (message) => this.record(message), { discard: true })
  }

  snapshot(): RunSnapshot {
    return {
      runId: this.runId,
      transcript: this.messages.slice(),
      steps: this.steps,
      toolCalls: this.toolCalls,
      usage: this.usage
    }
  }
}
