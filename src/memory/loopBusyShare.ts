/** Under this share of one core over a window, the process was not saturated. */
export const CPU_SHARE_FLOOR = 0.5

/**
 * How busy the event loop was over a window, from node's event-loop utilization and the CPU the
 * whole process used meanwhile (its threads together, in cores). The utilization alone misreads an
 * idle loop as busy under V8's CPU profiler (0.59 at 100 ms sampling, 0.94 at node's default 1 ms),
 * and a dialer holding new calls while the loop is saturated would then never resume. A saturated
 * loop keeps its thread running, at least half a core unless the machine is oversubscribed more
 * than twice over, so under that share the CPU caps what the utilization says.
 */
export const busyShare = (loopUtilization: number, cpuShare: number): number =>
  cpuShare < CPU_SHARE_FLOOR ? Math.min(loopUtilization, cpuShare) : loopUtilization
