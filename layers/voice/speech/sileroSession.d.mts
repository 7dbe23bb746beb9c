export declare const STATE_SIZE: number

export interface SileroBatch {
  readonly rate: number
  readonly size: number
  /** `size` rows of context + window samples in [-1, 1]. */
  readonly input: Float32Array
  /** `size` rows of STATE_SIZE floats. */
  readonly state: Float32Array
}

export interface SileroResult {
  readonly probabilities: Float32Array
  readonly state: Float32Array
}

export interface SileroSession {
  readonly run: (batch: SileroBatch) => Promise<SileroResult>
  readonly close: () => Promise<void>
}

export declare const openSileroSession: (modelPath: string) => Promise<SileroSession>
