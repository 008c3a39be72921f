/** What is left running, read from /proc; zombies count as gone (PID 1 here may not reap them). */
import { Effect } from "effect"
import * as fs from "node:fs"

interface ProcStat {
  readonly pid: number
  readonly state: string
  readonly pgrp: number
}

const stat = (pid: string): ProcStat | undefined => {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name may hold spaces and parentheses; the fields after it do not.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
    return { pid: Number(pid), state: fields[0] ?? "?", pgrp: Number(fields[2]) }
  } catch {
    return undefined
  }
}

/** Whether a process exists and is not a zombie. */
export const alive = (pid: number): boolean => {
  const s = stat(String(pid))
  return s !== undefined && s.state !== "Z"
}

/** The live members of a process group. */
export const liveInGroup = (pgid: number): ReadonlyArray<number> =>
  fs.readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      const s = stat(name)
      return s !== undefined && s.pgrp === pgid && s.state !== "Z" ? [s.pid] : []
    })

/** The pids a test script wrote to a file, one a line. */
export const readPids = (file: string): ReadonlyArray<number> =>
  fs.readFileSync(file, "utf8").split("\n").filter((line) => line.trim() !== "").map(Number)

/**
 * The live members of a group once they have had `withinMs` to die. SIGKILL is delivered
 * at once, but each process still has to be scheduled to exit, so a check made the same
 * millisecond can see a member that is already doomed.
 */
export const groupAfter = (pgid: number, withinMs: number): Effect.Effect<ReadonlyArray<number>> =>
  Effect.gen(function*() {
    const deadline = Date.now() + withinMs
    let live = liveInGroup(pgid)
    while (live.length > 0 && Date.now() < deadline) {
      yield* Effect.sleep("10 millis")
      live = liveInGroup(pgid)
    }
    return live
  })
