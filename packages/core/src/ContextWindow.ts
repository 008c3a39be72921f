/**
 * What the model is sent of a transcript that may be longer than it can take.
 *
 * The view is: everything up to and including the first user request (the system text
 * and the task), pinned; then the newest whole groups that fit the limit, where a group
 * is an assistant turn with all its tool results (or a lone user message). A tool call
 * and its result are therefore always in the view together or not at all.
 *
 * Sizes are measured once per message, when it is recorded, and kept with running
 * sums, so choosing a view costs a binary search over the groups, not a pass that
 * re-serialises the history.
 *
 * @example
 * ```ts
 * import { ContextWindow } from "@agent-harness/core"
 * import { Either } from "effect"
 *
 * const index = ContextWindow.makeIndex()
 * for (const message of transcript) ContextWindow.append(index, message, ContextWindow.charSize(message))
 * const selection = ContextWindow.select(index, 8_000)
 * if (Either.isRight(selection)) send(ContextWindow.view(transcript, selection.right))
 * ```
 */
import type { Prompt } from "@effect/ai"
import { type Effect, Either } from "effect"
import type * as Transcript from "./Transcript.js"

/** Window options of a run; with neither limit the whole transcript is sent. */
export interface Options {
  /** Limit in characters of content (see {@link charSize}). */
  readonly maxChars?: number | undefined
  /** Limit in tokens, counted with the `Tokenizer` in the environment (required then). */
  readonly maxTokens?: number | undefined
  /**
   * Called when older groups no longer fit, with them (and any earlier summary first);
   * its message stands in for them, right after the pinned part. A system or user
   * message carries no tool calls, so the view stays valid whatever it says.
   */
  readonly compact?: ((dropped: Transcript.Transcript) => Effect.Effect<Prompt.SystemMessage | Prompt.UserMessage>) | undefined
}


const json = (value: unknown): number => {
  if (typeof value === "string") return value.length
  return JSON.stringify(value)?.length ?? 0
}

/**
 * Characters of what a message says: texts, tool names, arguments and results as JSON.
 * An approximation of the request's size that needs no tokenizer.
 */
export const charSize = (message: Prompt.Message): number => {
  if (message.role === "system") return message.content.length
  let size = 0
  for (const part of message.content) {
    switch (part.type) {
      case "text":
      case "reasoning":
        size += part.text.length
        break
      case "tool-call":
        size += part.name.length + json(part.params)
        break
      case "tool-result":
        size += part.name.length + json(part.result)
        break
      case "file":
        size += typeof part.data === "string" ? part.data.length : part.data instanceof URL ? part.data.href.length : part.data.byteLength
        break
    }
  }
  return size
}

/**
 * Sizes and group boundaries of a transcript, grown one message at a time. Owned by
 * one run (it is mutable, for speed).
 */
export interface Index {
  /** prefix[i] is the size of messages [0, i). */
  readonly prefix: Array<number>
  /** Where each group after the pinned part starts. */
  readonly groupStarts: Array<number>
  /** End of the pinned part (the index after the first user message), or -1 before it. */
  pinnedEnd: number
  length: number
}

export const makeIndex = (): Index => ({ prefix: [0], groupStarts: [], pinnedEnd: -1, length: 0 })

/** Records the next message of the transcript with its measured size. */
export const append = (index: Index, message: Prompt.Message, size: number): void => {
  const at = index.length
  index.prefix.push(index.prefix[at]! + size)
  index.length = at + 1
  if (index.pinnedEnd < 0) {
    if (message.role === "user") index.pinnedEnd = at + 1
    return
  }
  if (message.role !== "tool") index.groupStarts.push(at)
}

/** The part of the transcript a view takes: the pinned part and the history from `start`. */
export interface Selection {
  readonly pinnedEnd: number
  readonly start: number
  /** The size of the view. */
  readonly size: number
}

/** The pinned part and the newest group do not fit together. */
export interface TooLarge {
  readonly required: number
}

/**
 * Chooses the view for a limit. `reserved` is room kept for something that goes in the
 * view besides messages (a summary); `from` is where the history may start (messages
 * before it are covered by that summary).
 */
export const select = (index: Index, limit: number, reserved = 0, from = 0): Either.Either<Selection, TooLarge> => {
  const { groupStarts, prefix } = index
  const pinnedEnd = index.pinnedEnd < 0 ? index.length : index.pinnedEnd
  const total = prefix[index.length]!
  const pinned = prefix[pinnedEnd]! + reserved
  // The first group that may be taken; groups before `from` are already summarised.
  let low = lowerBound(groupStarts, Math.max(from, pinnedEnd))
  if (low === groupStarts.length) {
    return pinned <= limit
      ? Either.right({ pinnedEnd, start: index.length, size: pinned })
      : Either.left({ required: pinned })
  }
  const newest = groupStarts[groupStarts.length - 1]!
  if (pinned + total - prefix[newest]! > limit) return Either.left({ required: pinned + total - prefix[newest]! })
  // The suffix size shrinks as the start moves on: find the oldest start that fits.
  let high = groupStarts.length - 1
  while (low < high) {
    const mid = (low + high) >>> 1
    if (pinned + total - prefix[groupStarts[mid]!]! <= limit) high = mid
    else low = mid + 1
  }
  const start = groupStarts[low]!
  return Either.right({ pinnedEnd, start, size: pinned + total - prefix[start]! })
}

const lowerBound = (sorted: ReadonlyArray<number>, value: number): number => {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (sorted[mid]! < value) low = mid + 1
    else high = mid
  }
  return low
}

/** The messages of a selection, with an optional summary after the pinned part. */
export const view = (
  transcript: Transcript.Transcript,
  selection: Selection,
  summary?: Prompt.Message | undefined
): Array<Prompt.Message> => {
  const out = transcript.slice(0, selection.pinnedEnd)
  if (summary !== undefined) out.push(summary)
  for (let i = selection.start; i < transcript.length; i++) out.push(transcript[i]!)
  return out
}
