/**
 * The browser test call page (GET /call). It asks for an API key (or session token) and a workflow
 * id, starts a call through the API, streams the microphone as PCM16 16 kHz frames over the call's
 * WebSocket and plays the agent's frames back. Control messages are JSON: the server sends
 * {"event":"mark","name"} after audio and {"event":"clear"} on barge-in; the page answers each mark
 * with {"event":"played","name"} once it has played, starts with {"event":"start"} and ends with
 * {"event":"stop"}. Headphones avoid the agent hearing itself (browsers do not cancel the echo of
 * audio played through Web Audio).
 */
export const callPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>talkgraph test call</title>
<style>
  body { font: 15px system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
  label { display: block; margin: .6rem 0 .2rem; }
  input { width: 100%; padding: .4rem; box-sizing: border-box; }
  button { margin-top: 1rem; padding: .5rem 1.2rem; }
  #log { white-space: pre-wrap; background: #f4f4f4; padding: .6rem; margin-top: 1rem; min-height: 4rem; }
</style>
</head>
<body>
<h1>Test call</h1>
<p>Talk to an agent from this browser. Use headphones.</p>
<label for="key">API key or session token</label><input id="key" type="password" autocomplete="off">
<label for="workflow">Workflow id</label><input id="workflow" inputmode="numeric">
<label><input id="draft" type="checkbox" style="width:auto"> Use the draft version</label>
<button id="start">Start call</button> <button id="stop" disabled>Hang up</button>
<div id="log" aria-live="polite"></div>
<script type="module">
const RATE = 16000
const log = (line) => { document.getElementById("log").textContent += line + "\\n" }
const worklet = \`
class Capture extends AudioWorkletProcessor {
  constructor() { super(); this.buffer = []; this.step = sampleRate / ${"${RATE}"}; this.position = 0 }
  process(inputs) {
    const input = inputs[0][0]
    if (!input) return true
    for (; this.position < input.length; this.position += this.step) this.buffer.push(input[Math.floor(this.position)])
    this.position -= input.length
    while (this.buffer.length >= 320) {
      const frame = new Int16Array(this.buffer.splice(0, 320).map((x) => Math.max(-32768, Math.min(32767, Math.round(x * 32767)))))
      this.port.postMessage(frame.buffer, [frame.buffer])
    }
    return true
  }
}
registerProcessor("capture", Capture)\`
let socket, context, stream, cursor = 0, sources = []
document.getElementById("start").onclick = async () => {
  const key = document.getElementById("key").value.trim()
  const workflow = document.getElementById("workflow").value.trim()
  const response = await fetch("/api/v1/workflow/" + encodeURIComponent(workflow) + "/browser-calls", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer " + key },
    body: JSON.stringify({ use_draft: document.getElementById("draft").checked })
  })
  const call = await response.json()
  if (!response.ok) { log("Could not start: " + (call.detail?.[0]?.msg ?? call.detail ?? response.status)); return }
  log("Call " + call.workflow_run_id + " connecting…")
  context = new AudioContext()
  stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } })
  await context.audioWorklet.addModule(URL.createObjectURL(new Blob([worklet], { type: "text/javascript" })))
  const capture = new AudioWorkletNode(context, "capture")
  context.createMediaStreamSource(stream).connect(capture)
  socket = new WebSocket(call.media_url)
  socket.binaryType = "arraybuffer"
  socket.onopen = () => { socket.send(JSON.stringify({ event: "start" })); log("Connected: say something.") }
  capture.port.onmessage = (event) => { if (socket.readyState === 1) socket.send(event.data) }
  socket.onmessage = (event) => {
    if (typeof event.data !== "string") {
      const pcm = new Int16Array(event.data)
      const buffer = context.createBuffer(1, pcm.length, RATE)
      buffer.getChannelData(0).set(Float32Array.from(pcm, (x) => x / 32768))
      const source = context.createBufferSource()
      source.buffer = buffer
      source.connect(context.destination)
      cursor = Math.max(cursor, context.currentTime + 0.05)
      source.start(cursor)
      cursor += buffer.duration
      sources.push(source)
      source.onended = () => { sources = sources.filter((s) => s !== source) }
      return
    }
    const message = JSON.parse(event.data)
    if (message.event === "mark") {
      const wait = Math.max(0, cursor - context.currentTime) * 1000
      setTimeout(() => socket.readyState === 1 && socket.send(JSON.stringify({ event: "played", name: message.name })), wait)
    } else if (message.event === "clear") {
      sources.forEach((source) => source.stop())
      sources = []
      cursor = context.currentTime
    }
  }
  socket.onclose = () => { log("Call ended."); end() }
  document.getElementById("start").disabled = true
  document.getElementById("stop").disabled = false
}
const end = () => {
  stream?.getTracks().forEach((track) => track.stop())
  context?.close()
  document.getElementById("start").disabled = false
  document.getElementById("stop").disabled = true
}
document.getElementById("stop").onclick = () => { socket?.send(JSON.stringify({ event: "stop" })); socket?.close(); end() }
</script>
</body>
</html>
`
