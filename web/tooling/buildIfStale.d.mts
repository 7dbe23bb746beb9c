/** Whether web/dist is older than any of the console's sources. */
export declare const consoleBuildIsStale: () => boolean

/** Builds the console when its sources changed since the last build. */
export declare const buildConsoleIfStale: () => void
