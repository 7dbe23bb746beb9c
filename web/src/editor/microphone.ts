import { pcm16Resampler } from "./pcm16Resampler.ts"

/** Hands each block of the microphone's samples to the page as it is captured (a copy: the block is reused). */
const captureWorklet = `
registerProcessor("talkgraph-capture", class extends AudioWorkletProcessor {
  process(inputs) {
    const channel = inputs[0] && inputs[0][0]
    if (channel) this.port.postMessage(channel.slice(0))
    return true
  }
})`

export interface Microphone {
  readonly close: () => void
}

/**
 * The microphone as PCM16 16 kHz blocks: an AudioWorklet where the browser has one, else a
 * ScriptProcessor. Echo cancellation is asked for, but browsers do not cancel the agent's voice
 * played through Web Audio: with speakers the agent can hear itself (hence the headphones advice).
 */
export const openMicrophone = async (context: AudioContext, onPcm: (pcm: Int16Array) => void): Promise<Microphone> => {
  if (!navigator.mediaDevices?.getUserMedia) {
    throw new Error("This browser gives no microphone to this page: open the console over https or on localhost.")
  }
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 }
  })
  const source = context.createMediaStreamSource(stream)
  const resample = pcm16Resampler(context.sampleRate)
  const deliver = (block: Float32Array) => {
    const pcm = resample(block)
    if (pcm.length > 0) onPcm(pcm)
  }
  let node: AudioNode
  if (context.audioWorklet) {
    const url = URL.createObjectURL(new Blob([captureWorklet], { type: "text/javascript" }))
    await context.audioWorklet.addModule(url)
    URL.revokeObjectURL(url)
    const worklet = new AudioWorkletNode(context, "talkgraph-capture")
    worklet.port.onmessage = (event: MessageEvent<Float32Array>) => deliver(event.data)
    node = worklet
  } else {
    const processor = context.createScriptProcessor(1024, 1, 1)
    processor.onaudioprocess = (event) => deliver(event.inputBuffer.getChannelData(0))
    // A ScriptProcessor only runs while connected to the output; it writes nothing to it.
    processor.connect(context.destination)
    node = processor
  }
  source.connect(node)
  return {
    close: () => {
      source.disconnect()
      node.disconnect()
      stream.getTracks().forEach((track) => track.stop())
    }
  }
}
