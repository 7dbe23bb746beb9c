import type * as http from "node:http"
import type * as net from "node:net"

/**
 * The longest a kept-alive socket waits for its next request, as the agents' `timeout`: a second
 * under the shortest idle close common servers use (node's and Apache's 5 s). node's agent only
 * ever shortens a socket's timeout to the server's `Keep-Alive: timeout` hint less a second; with no
 * timeout of its own it would keep an idle socket until the server's FIN is read.
 */
export const IDLE_SOCKET_MS = 4000

/** When each kept-alive socket last went back to its agent's free list. */
const freedAt = new WeakMap<net.Socket, number>()

/** The agent's own request queueing (`http.Agent.prototype.addRequest`), which node's types leave out. */
interface Queueing {
  addRequest: (request: http.ClientRequest, options: http.RequestOptions, ...rest: Array<unknown>) => void
}

/**
 * Keeps an agent from sending a request down a kept-alive socket the server has most likely closed.
 * node's agent closes an idle socket by a timer (`IDLE_SOCKET_MS`, or the server's hint less a
 * second); while the event loop is busy that timer, and the server's FIN, wait behind other work,
 * so a request can go out on a socket closed seconds earlier and fail with "socket hang up" — for a
 * carrier's call creation, a call not placed, which cannot be resent blindly (it may have been).
 * Here a free socket idle for half its timeout or longer is closed when the next request is queued
 * (the half leaves room for the loop's lag in noticing the answer that freed it), so that request
 * opens a new connection. The agent must have a `timeout` (`IDLE_SOCKET_MS`): a socket without one
 * is kept as node keeps it.
 */
export const reuseOnlyFresh = <A extends http.Agent>(agent: A): A => {
  agent.on("free", (socket: net.Socket) => freedAt.set(socket, Date.now()))
  const queueing = agent as unknown as Queueing
  const addRequest = queueing.addRequest.bind(agent)
  queueing.addRequest = (request, options, ...rest) => {
    const now = Date.now()
    for (const sockets of Object.values(agent.freeSockets)) {
      for (const socket of sockets ?? []) {
        const idleLimit = (socket.timeout ?? 0) / 2
        const freed = freedAt.get(socket)
        // Free lists are in the order sockets were freed, so the stale ones lead and node skips destroyed leaders.
        if (idleLimit > 0 && freed !== undefined && now - freed >= idleLimit) socket.destroy()
      }
    }
    addRequest(request, options, ...rest)
  }
  return agent
}
